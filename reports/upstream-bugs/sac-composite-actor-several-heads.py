"""SACLoss with a composite actor of two heads (CompositeDistribution of two TanhNormal, actions
("action", "a1") of dim 2 and ("action", "a2") of dim 3): #3312 sums a composite action spec's
leaves for target_entropy="auto" (-5 here), but that sum is only reached when the loss's action
key names the composite. With per-head log-probs (tensordict's default) the constructor keys the
action by the list of the heads' sample keys and _set_in_keys cannot hash it: TypeError, whatever
the target entropy. With the log-probs summed (set_composite_lp_aggregate(True), how SACLoss
scores a composite draw) the action is keyed by the first head: target_entropy = -2.
"""
import sys
import warnings

import torch
from tensordict.nn import CompositeDistribution, TensorDictModule, set_composite_lp_aggregate
from torchrl.data import Bounded, Composite
from torchrl.modules import ProbabilisticActor, TanhNormal
from torchrl.objectives import SACLoss

warnings.simplefilter("ignore")
HEADS, OBS = {"a1": 2, "a2": 3}, 4
spec = Composite({"action": Composite(
    {h: Bounded(-torch.ones(d), torch.ones(d), (d,)) for h, d in HEADS.items()})})


class Heads(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.linear = torch.nn.ModuleDict({h: torch.nn.Linear(OBS, 2 * d) for h, d in HEADS.items()})

    def forward(self, observation):
        out = []
        for h in HEADS:
            loc, pre = self.linear[h](observation).chunk(2, -1)
            out += [loc, torch.nn.functional.softplus(pre) + 0.1]
        return tuple(out)


class Q(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.linear = torch.nn.Linear(OBS + sum(HEADS.values()), 1)

    def forward(self, observation, *actions):
        return self.linear(torch.cat([observation, *actions], -1))


def target_entropy():
    module = TensorDictModule(Heads(), ["observation"],
                              [("params", h, p) for h in HEADS for p in ("loc", "scale")])
    def dist(*args, **kwargs):  # the heads' distributions and where their samples go
        return CompositeDistribution(*args, distribution_map={h: TanhNormal for h in HEADS},
                                     name_map={h: ("action", h) for h in HEADS}, **kwargs)

    actor = ProbabilisticActor(module, in_keys=["params"], out_keys=[("action", h) for h in HEADS],
                               distribution_class=dist)
    qvalue = TensorDictModule(Q(), ["observation", *[("action", h) for h in HEADS]],
                              ["state_action_value"])
    try:
        return float(SACLoss(actor, qvalue, action_spec=spec).target_entropy)
    except Exception as exc:  # noqa: BLE001 - what a user sees
        return f"{type(exc).__name__}: {exc}"


per_head = target_entropy()
with set_composite_lp_aggregate(True):
    summed = target_entropy()
want = -float(sum(HEADS.values()))
print(f"parameters: composite action of heads {HEADS} (dims), action_spec given, "
      "target_entropy='auto'")
print(f"expected:   SACLoss built, target_entropy = {want} (-dim(A), the heads' dims added, #3312)")
print(f"actual:     per-head log-probs: {per_head}; summed log-probs: target_entropy = {summed}")
if per_head != want or summed != want:
    print("BUG: SACLoss cannot be built for, or counts one head of, a composite action of two heads")
    sys.exit(1)
print("ok: every head is counted")
