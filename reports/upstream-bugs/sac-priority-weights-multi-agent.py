"""SACLoss on a multi-agent batch drawn from a prioritized replay buffer: since #3235 the losses
read the sampler's importance weights ("priority_weight", one per sampled row: [B]) and reduce
with them. With per-agent done [B, N, 1] the SAC terms are per agent-step ([B, N]) and the [B]
weights are handed to _reduce as they are: reduction="mean" raises ValueError ("Tensor and
weights shapes must match"), reduction="none" a broadcasting RuntimeError. Each agent-step of a
row should carry its row's weight.
"""
import sys
import warnings

import torch
from tensordict import TensorDict
from tensordict.nn import TensorDictModule
from torchrl.modules import NormalParamExtractor, ProbabilisticActor, TanhNormal
from torchrl.objectives import SACLoss, ValueEstimators

warnings.simplefilter("ignore")
torch.manual_seed(0)
B, N, OBS, A = 4, 3, 5, 2


class Q(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.linear = torch.nn.Linear(OBS + A, 1)

    def forward(self, observation, action):
        return self.linear(torch.cat([observation, action], -1))


actor = ProbabilisticActor(
    TensorDictModule(torch.nn.Sequential(torch.nn.Linear(OBS, 2 * A), NormalParamExtractor()),
                     ["observation"], ["loc", "scale"]),
    in_keys=["loc", "scale"], distribution_class=TanhNormal)
qvalue = TensorDictModule(Q(), ["observation", "action"], ["state_action_value"])
td = TensorDict({
    "observation": torch.randn(B, N, OBS), "action": torch.rand(B, N, A) * 2 - 1,
    "priority_weight": torch.tensor([1.0, 0.5, 0.25, 0.125]),  # one per row, as sampled
    "next": {"observation": torch.randn(B, N, OBS), "reward": torch.randn(B, N, 1),
             "done": torch.zeros(B, N, 1, dtype=torch.bool),
             "terminated": torch.zeros(B, N, 1, dtype=torch.bool)},
}, [B])

results = {}
for reduction in ("mean", "none"):
    kwargs = {"scalar_output_mode": "exclude"} if reduction == "none" else {}
    loss = SACLoss(actor, qvalue, action_spec=None, target_entropy=-float(A), reduction=reduction,
                   **kwargs)
    loss.make_value_estimator(ValueEstimators.TD0, gamma=0.9)
    try:
        out = loss(td.clone())
        results[reduction] = f"loss_qvalue of shape {tuple(out['loss_qvalue'].shape)}"
    except Exception as exc:  # noqa: BLE001 - what a user sees
        results[reduction] = f"{type(exc).__name__}: {str(exc).splitlines()[0]}"
print(f"parameters: SACLoss, {B} rows of {N} agents (done [B, N, 1]), priority_weight of shape "
      f"[{B}] (one per row, as a prioritized sampler writes it)")
print("expected:   reduction='mean' gives the weighted mean, 'none' losses of shape "
      f"({B}, {N}), every agent-step weighted by its row's weight")
print(f"actual:     mean -> {results['mean']}; none -> {results['none']}")
if any("Error" in r for r in results.values()):
    print("BUG: the per-row weights are not applied to per-agent-step losses")
    sys.exit(1)
print("ok: the row weights weight each row's agents")
