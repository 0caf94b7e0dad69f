"""§3 family: done-state handling around the seed bug (SPECS §3), beyond two Q-networks and
beyond actions the policy can take.

- More than two Q-networks: the target and the actor loss take the minimum over *every*
  Q-network of the ensemble, the Q-loss sums the squared errors of every one, with the flag
  False and True alike (pytorch/rl#3500 fixed SACLoss with more than one Q-network module).
- Masked actions in discrete SAC: a policy that gives an action probability 0 (logit -inf, the
  way action masking is done) contributes ``0 * log 0 = 0`` to every expectation. The losses stay
  finite and equal the oracle with the flag False and True. Read from TorchRL's code, not
  reported upstream: the path without skipping scores ``log(where(p == 0, 1e-8, p))``, the skip
  path ``next_dist.logits``, which is -inf for a masked action, and ``0 * -inf`` is NaN.

Oracle: ``conformance/oracles/sac_done_states.py`` (brute force, one agent-step at a time; 0 log
0 = 0 for a masked action). Networks, batches, tolerances and the failure diagnosis are those of
``conformance/test_sac_done_states.py``.
"""

from __future__ import annotations

import math

import pytest
import torch

from conformance._assertions import is_finite, message
from conformance.test_sac_done_states import (
    NA,
    batch,
    check_against_oracle,
    networks,
    run,
)

RL_3500 = "https://github.com/pytorch/rl/pull/3500"
DISCRETE_SKIP_LOGITS = ("the skip path scores the next policy by its logits "
                        "(next_dist.logits) instead of log(where(p == 0, 1e-8, p)) as the other "
                        "path does: a masked action (logit -inf) gives 0 * -inf = NaN")
DISCRETE_ACTOR_LOGITS = ("the actor loss scores the policy by p * logits (dist.logits): a "
                         "masked action gives 0 * -inf = NaN (loss_alpha reads the same "
                         "log-prob)")
#: which non-finite loss points at which code path
CAUSES = {"loss_qvalue": DISCRETE_SKIP_LOGITS, "loss_actor": DISCRETE_ACTOR_LOGITS}
DISCRETE_SAC_CODE = "https://github.com/pytorch/rl/blob/main/torchrl/objectives/sac.py"
MASKED = 0  #: the action the masked policy never takes


class MaskedActor(torch.nn.Module):
    """Logits of an action-masked policy: action ``MASKED`` has logit -inf at every state."""

    def __init__(self, inner):
        super().__init__()
        self.inner = inner

    def forward(self, observation):
        logits = self.inner(observation)
        mask = torch.zeros(NA, dtype=torch.bool, device=logits.device)
        mask[MASKED] = True
        return logits.masked_fill(mask, -math.inf)


@pytest.mark.parametrize("skip", [False, True], ids=lambda s: f"skip={s}")
@pytest.mark.parametrize("n_qvalues", [3, 4], ids=lambda n: f"qnets={n}")
@pytest.mark.parametrize("layout", ["single", "per_agent"])
@pytest.mark.parametrize("kind", ["continuous", "discrete"])
def test_more_than_two_qvalue_networks(sac_done_states, kind, layout, n_qvalues, skip):
    """An ensemble of 3 or 4 distinct Q-networks: losses and gradients equal the oracle, whose
    minimum runs over every network (not the first two)."""
    b = batch(kind, layout, "mixed")
    nets, bare = networks(kind, n_qvalues=n_qvalues)
    what = f"{n_qvalues} Q-networks"
    try:
        out = run(sac_done_states, kind, layout, b, skip, nets, what=what)
        check_against_oracle(out, kind, layout, b, skip, nets, bare, what=what)
    except AssertionError as exc:
        raise AssertionError(
            f"{exc}\n  family: SAC with more than two Q-networks, fixed for a list of Q-network "
            f"modules by pytorch/rl#3500 ({RL_3500})") from None


@pytest.mark.parametrize("skip", [False, True], ids=lambda s: f"skip={s}")
@pytest.mark.parametrize("layout", ["single", "per_agent"])
def test_discrete_masked_actions_give_finite_losses(sac_done_states, layout, skip):
    """Discrete SAC with action 0 masked (logit -inf) everywhere, some states terminated: the
    losses are finite and equal the oracle (0 log 0 = 0), with the flag False and True."""
    b = batch("discrete", layout, "mixed")
    nets, bare = networks("discrete", wrap=MaskedActor)
    bare = nets.actor  # the oracle scores the same masked policy
    what = "discrete SAC, action 0 masked"
    out = run(sac_done_states, "discrete", layout, b, skip, nets, what=what)
    bad = {k: float(v) for k, v in out.losses.items() if not is_finite(float(v))}
    if bad:
        raise AssertionError(message(
            "discrete SAC loss is not finite for a policy with a masked action",
            params={"layout": layout, "skip_done_states": skip, "masked action": MASKED,
                    "terminated": int(b.terminated.sum())},
            expected="finite losses (0 * log 0 = 0)",
            actual={k: float(v) for k, v in out.losses.items()},
            cause="; ".join(c for k, c in CAUSES.items() if k in bad and (skip or k != "loss_qvalue")),
            link=DISCRETE_SAC_CODE))
    check_against_oracle(out, "discrete", layout, b, skip, nets, bare, what=what)
