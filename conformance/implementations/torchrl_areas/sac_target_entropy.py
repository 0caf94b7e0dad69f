"""SAC's automatic target entropy through TorchRL's API (capability ``auto_target_entropy``).

Builds the actor a TorchRL user builds for the action space (``SACActionSpace``): a
``ProbabilisticActor`` over ``TanhNormal`` (one head) or a ``CompositeDistribution`` of
``TanhNormal`` heads written under ``"action"``, the spec handed to the loss (``action_spec=``)
or to the actor (``spec=``); multi-agent actions live at ``("agents", "action")`` in a group of
shape (N,), the spec keeping the group's shape as ``env.full_action_spec_unbatched`` does. A
summed log-probability (``summed_log_prob``) is tensordict's ``set_composite_lp_aggregate(True)``
around the construction. The loss is built with ``target_entropy`` left to its default (``"auto"``) and its ``target_entropy``
read, which is what its temperature loss adds to the log-probabilities.

Spec class names: ``Bounded`` / ``Composite`` since torchrl 0.6, ``BoundedTensorSpec`` /
``CompositeSpec`` before.
"""

from __future__ import annotations

import functools
import math

import torch

OBS = 3  #: observation features (irrelevant to the target entropy; the networks are never run)


def _spec_classes():
    from torchrl import data

    bounded = getattr(data, "Bounded", None) or data.BoundedTensorSpec
    composite = getattr(data, "Composite", None) or data.CompositeSpec
    return bounded, composite


class _Heads(torch.nn.Module):
    """observation -> (loc, scale) per head, each shaped (..., *event)."""

    def __init__(self, heads):
        super().__init__()
        self.shapes = dict(heads)
        self.linear = torch.nn.ModuleDict(
            {h: torch.nn.Linear(OBS, 2 * math.prod(e)) for h, e in heads.items()})

    def forward(self, observation):
        out = []
        for head, shape in self.shapes.items():
            loc, pre = self.linear[head](observation).chunk(2, -1)
            lead = observation.shape[:-1]
            out += [loc.reshape(*lead, *shape),
                    torch.nn.functional.softplus(pre).reshape(*lead, *shape) + 0.1]
        return tuple(out)


class _Q(torch.nn.Module):
    def __init__(self, n_actions):
        super().__init__()
        self.linear = torch.nn.Linear(OBS + n_actions, 1)

    def forward(self, observation, *actions):
        flat = [a.reshape(*observation.shape[:-1], -1) for a in actions]
        return self.linear(torch.cat([observation, *flat], -1))


def auto_target_entropy(sac_cls, space) -> float:
    if not space.summed_log_prob:
        return _build(sac_cls, space)
    try:
        from tensordict.nn import set_composite_lp_aggregate
    except ImportError:  # a tensordict without the switch: one summed log-prob only
        return _build(sac_cls, space)
    with set_composite_lp_aggregate(True):
        return _build(sac_cls, space)


def _build(sac_cls, space) -> float:
    from tensordict.nn import TensorDictModule
    from torchrl.modules import ProbabilisticActor, TanhNormal

    bounded, composite = _spec_classes()
    group = ("agents",) if space.agents else ()
    key = lambda *parts: (*group, *parts) if group or len(parts) > 1 else parts[0]  # noqa: E731
    lead = (space.agents,) if space.agents else ()
    box = {h: bounded(-torch.ones(*lead, *e), torch.ones(*lead, *e), torch.Size((*lead, *e)))
           for h, e in space.heads.items()}
    if space.composite:
        from tensordict.nn import CompositeDistribution

        action = composite(box, shape=lead)
        out_keys = [key("action", h) for h in space.heads]
        module_out = [key("params", h, p) for h in space.heads for p in ("loc", "scale")]
        actor_in = [key("params")]
        dist = functools.partial(CompositeDistribution,
                                 distribution_map={h: TanhNormal for h in space.heads},
                                 name_map={h: key("action", h) for h in space.heads})
    else:
        (action,) = box.values()
        out_keys = [key("action")]
        module_out = actor_in = [key("loc"), key("scale")]
        dist = TanhNormal
    # the spec as an environment writes it: the action under its group (of shape (N,))
    spec = (composite({"agents": composite({"action": action}, shape=lead)})
            if space.agents else composite({"action": action}) if space.composite else action)
    actor = ProbabilisticActor(
        TensorDictModule(_Heads(space.heads), [key("observation")], module_out),
        in_keys=actor_in, out_keys=out_keys, distribution_class=dist,
        spec=spec if space.given_to == "actor" else None)
    n_actions = sum(math.prod(e) for e in space.heads.values())
    qvalue = TensorDictModule(_Q(n_actions), [key("observation"), *out_keys],
                              [key("state_action_value")])
    kwargs = {"action_spec": spec} if space.given_to == "loss" else {}
    loss = sac_cls(actor, qvalue, **kwargs)
    if space.agents and not space.composite:
        loss.set_keys(action=key("action"), state_action_value=key("state_action_value"))
    return float(loss.target_entropy)
