"""SAC's automatic target entropy: minus the number of action dimensions.

Haarnoja et al., "Soft Actor-Critic Algorithms and Applications" (arXiv:1812.05905, §5 and
Appendix D): the temperature is tuned so that the policy's entropy stays above a target, set
"heuristically" to ``-dim(A)``, the dimensionality of the action space. TorchRL documents the
same rule for ``target_entropy="auto"`` (``SACLoss`` docstring, torchrl 0.14.1): "Default is
"auto", where target entropy is computed as :obj:`-prod(n_actions)`." pytorch/rl#3291 (fixed by
#3292) restates it: "The original paper state that target_entropy should be -dim(A) with A the
action space."

So, for one agent's action:

- a box action of event shape ``(d1, d2, ...)`` has ``d1 * d2 * ...`` dimensions (``prod`` of the
  event shape; a shape ``(A,)`` gives ``A``);
- a composite action (several heads drawn together, pytorch/rl#3312) has the dimensions of its
  heads added up: ``-(sum over heads of prod(event shape))``;
- in a multi-agent group every agent has its own policy and its own action: the agents'
  dimension is no action dimension (pytorch/rl#1494), whether the spec carries it or not.

Pure arithmetic on shapes: nothing here knows a spec class.
"""

from __future__ import annotations

import math


def action_dimensions(heads: dict[str, tuple[int, ...]]) -> int:
    """The number of action dimensions of one agent: the event shapes' products, added up."""
    if not heads:
        raise ValueError("an action has at least one head")
    return sum(math.prod(shape) for shape in heads.values())


def auto_target_entropy(heads: dict[str, tuple[int, ...]]) -> float:
    """``-dim(A)``: the automatic target entropy of an action whose heads have these event
    shapes (per agent)."""
    return -float(action_dimensions(heads))


#: known-wrong rules (historical TorchRL behaviour), used only to name a likely cause
WRONG_RULES = {
    "always -1": "the action's shape is read from a wrapper of shape () (torch.Size([]).numel() "
                 "= 1): every action counts as one dimension (torchrl 0.6.0 - 0.10.1; "
                 "pytorch/rl#3291)",
    "agents counted": "the agents' dimension is counted as action dimensions: the group's shape "
                      "(N,) is lost before the container shape is subtracted (pytorch/rl#1494 "
                      "subtracts it only when the spec keeps it)",
    "first head only": "only one head of the composite action is counted",
}


def diagnose(got: float, heads: dict[str, tuple[int, ...]], agents: int | None) -> str | None:
    """Name the known-wrong rule that gives ``got``, if exactly one does."""
    candidates = {"always -1": -1.0,
                  "first head only": -float(math.prod(next(iter(heads.values()))))}
    if agents:
        candidates["agents counted"] = -float(agents * action_dimensions(heads))
    hits = [WRONG_RULES[k] for k, v in candidates.items()
            if v != auto_target_entropy(heads) and got == v]
    return hits[0] if len(hits) == 1 else None
