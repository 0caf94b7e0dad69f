"""ClipPPOLoss(clip_value=c) under a validity mask: since #4057 the loss's reductions leave out
the positions marked False at ("collector", "mask") (the padding SliceSampler(pad_output=True)
writes), but value_clip_fraction is still mean(|v - v_old| > c) over every position
(_clip_value_loss), so the padding is counted. Here 17 of 24 positions are valid and the padding
holds predictions 40 away from their old value: the fraction reported is that of the whole
batch, not of the 17 valid predictions.
"""
import sys

import numpy as np
import torch
from tensordict import TensorDict
from tensordict.nn import TensorDictModule
from torchrl.modules import ProbabilisticActor
from torchrl.objectives import ClipPPOLoss


class Policy(torch.nn.Module):  # a fixed Normal: the policy term plays no part
    def forward(self, observation):
        return torch.zeros_like(observation), torch.ones_like(observation)


CLIP, B, VALID = 0.2, 24, 17
rng = np.random.default_rng(11)
old = rng.normal(0.0, 2.0, B)
v = old + rng.normal(0.0, 0.3, B)
R = old + rng.normal(0.0, 3.0, B)
valid = np.arange(B) < VALID  # a slice padded at its end
v = np.where(valid, v, old + 40.0)  # what padding holds is arbitrary
R = np.where(valid, R, old - 40.0)

value_net = torch.nn.Linear(1, 1, dtype=torch.float64)  # the prediction is the observation
with torch.no_grad():
    value_net.weight.fill_(1.0)
    value_net.bias.fill_(0.0)
actor = ProbabilisticActor(TensorDictModule(Policy(), ["observation"], ["loc", "scale"]),
                           in_keys=["loc", "scale"], distribution_class=torch.distributions.Normal,
                           return_log_prob=True)
critic = TensorDictModule(value_net, ["observation"], ["state_value"])
loss = ClipPPOLoss(actor, critic, clip_value=CLIP, entropy_bonus=False, loss_critic_type="l2")
col = lambda x: torch.as_tensor(x, dtype=torch.float64).reshape(-1, 1)  # noqa: E731
td = TensorDict({"observation": col(v), "action": torch.zeros(B, 1, dtype=torch.float64),
                 "advantage": torch.ones(B, 1, dtype=torch.float64), "value_target": col(R),
                 "state_value": col(old)}, [B])
td.set(("collector", "mask"), torch.as_tensor(valid).reshape(-1, 1))
with torch.no_grad():
    td[loss.tensor_keys.sample_log_prob] = actor.get_dist(td).log_prob(td["action"])
out = loss(td)

outside = np.abs(v - old) > CLIP
expected = float(outside[valid].mean())
actual = float(out["value_clip_fraction"])
lv = np.maximum((v - R) ** 2, (old + np.clip(v - old, -CLIP, CLIP) - R) ** 2)
print(f"parameters: ClipPPOLoss(clip_value={CLIP}), batch of {B}, ('collector', 'mask') True on "
      f"the first {VALID}, padding 40 away from its old value")
print(f"expected:   value_clip_fraction = {expected:.6f} (mean over the {VALID} valid positions "
      "of |v - v_old| > c, numpy)")
print(f"actual:     value_clip_fraction = {actual:.6f} (over all {B}: {outside.mean():.6f}); "
      f"loss_critic = {float(out['loss_critic'].detach()):.6f}, the masked mean {lv[valid].mean():.6f} "
      "(the loss honours the mask)")
if abs(actual - expected) > 1e-9:
    print("BUG: value_clip_fraction counts the positions the mask leaves out")
    sys.exit(1)
print("ok: the value clip fraction is that of the valid positions")
