"""ClipPPOLoss accepts a negative clip_value. The clipped value prediction is
old_value + clamp(value - old_value, -clip_value, clip_value); with clip_value = -0.1 the clamp
has inverted bounds (min 0.1 > max -0.1), torch.clamp returns the max bound for every element,
and the critic trains on old_value - 0.1 whatever it predicts. It should raise ValueError.
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


CLIP_VALUE = -0.1
torch.manual_seed(0)
actor = ProbabilisticActor(TensorDictModule(Policy(), ["observation"], ["loc", "scale"]),
                           in_keys=["loc", "scale"], distribution_class=torch.distributions.Normal,
                           return_log_prob=True)
critic = TensorDictModule(torch.nn.Linear(1, 1), ["observation"], ["state_value"])
print(f"parameters: ClipPPOLoss(actor, critic, clip_value={CLIP_VALUE}, loss_critic_type='l2')")
print("expected:   ValueError (a clipping threshold must be >= 0)")
try:
    loss = ClipPPOLoss(actor, critic, clip_value=CLIP_VALUE, loss_critic_type="l2")
except ValueError as exc:
    print(f"actual:     ValueError: {exc}")
    print("ok: a negative clip_value is rejected")
    sys.exit(0)
obs = torch.randn(8, 1)
td = TensorDict({"observation": obs, "action": torch.zeros(8, 1), "advantage": torch.ones(8, 1),
                 "value_target": torch.randn(8, 1), "state_value": torch.randn(8, 1),
                 "action_log_prob": torch.full((8, 1), -0.9189385)}, [8])
out = loss(td)
print(f"actual:     accepted; loss_critic = {float(out['loss_critic'].detach()):.6g} (trained on "
      "old_value - 0.1 for every prediction)")
print("BUG: a negative clip_value is accepted")
sys.exit(1)
