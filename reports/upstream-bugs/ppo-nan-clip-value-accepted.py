"""ClipPPOLoss accepts clip_value=NaN, as a float or as a tensor. The constructor stores it with
LossModule.register_coeff_buffer, which checks that the threshold is a number or a one-element
tensor but not its value; bool(tensor(nan)) is True, so loss_critic takes the clipping branch,
clamp(value - old_value, -nan, nan) is NaN for every element, and loss_critic is NaN: one
training step then writes NaN into the critic's weights. No threshold follows from NaN: the
constructor should raise a ValueError naming clip_value.
"""
import sys

import torch
from tensordict import TensorDict
from tensordict.nn import TensorDictModule
from torchrl.modules import ProbabilisticActor
from torchrl.objectives import ClipPPOLoss


class Policy(torch.nn.Module):
    def forward(self, observation):
        return torch.zeros_like(observation), torch.ones_like(observation)


torch.manual_seed(0)
actor = ProbabilisticActor(TensorDictModule(Policy(), ["observation"], ["loc", "scale"]),
                           in_keys=["loc", "scale"], distribution_class=torch.distributions.Normal,
                           return_log_prob=True)
critic = TensorDictModule(torch.nn.Linear(1, 1), ["observation"], ["state_value"])
obs = torch.randn(8, 1)
td = TensorDict({"observation": obs, "action": torch.zeros(8, 1), "advantage": torch.ones(8, 1),
                 "value_target": torch.randn(8, 1), "state_value": torch.randn(8, 1),
                 "action_log_prob": torch.full((8, 1), -0.9189385)}, [8])

CASES = {"float('nan')": float("nan"), "torch.tensor(float('nan'))": torch.tensor(float("nan"))}
print(f"parameters: ClipPPOLoss(actor, critic, clip_value=<{' or '.join(CASES)}>, "
      "loss_critic_type='l2'), batch [8], seed 0")
print("expected:   ValueError naming clip_value (no threshold follows from NaN)")
bugs = 0
for text, clip_value in CASES.items():
    try:
        loss = ClipPPOLoss(actor, critic, clip_value=clip_value, loss_critic_type="l2")
    except ValueError as exc:  # what a fixed constructor raises
        print(f"actual:     clip_value={text}: ValueError: {exc}")
        bugs += "clip_value" not in str(exc)
        continue
    out = loss(td.clone())
    print(f"actual:     clip_value={text}: accepted; loss_critic = "
          f"{float(out['loss_critic'].detach()):.6g}")
    bugs += 1
if bugs:
    print(f"BUG: {bugs} of {len(CASES)} NaN clip_values accepted (or refused without naming "
          "clip_value)")
    sys.exit(1)
print("ok: a NaN clip_value is refused with a ValueError naming clip_value")
