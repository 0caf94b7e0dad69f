"""ClipPPOLoss(clip_value=c) with a composite value network (#3031: the critic writes
("state_value", head), the batch holds the stored predictions in a composite "state_value"):
loss_critic reads old_state_value = tensordict.get("state_value"), a sub-tensordict of the
batch, then runs the critic on the batch, which writes its new predictions into that very
sub-tensordict. The "stored" predictions are the new ones: every prediction is clipped around
itself, so value clipping is off whatever c is, and value_clip_fraction is 0.
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
        return torch.zeros_like(observation[..., :1]), torch.ones_like(observation[..., :1])


class Heads(torch.nn.Module):  # head h predicts observation column h
    def forward(self, observation):
        return observation[..., :1].clone(), observation[..., 1:].clone()


CLIP, B = 0.25, 32
rng = np.random.default_rng(3033)
old = rng.normal(0.0, 2.0, (B, 2))
v = old + rng.normal(0.0, 0.3, (B, 2))
R = old + rng.normal(0.0, 3.0, (B, 2))

actor = ProbabilisticActor(TensorDictModule(Policy(), ["observation"], ["loc", "scale"]),
                           in_keys=["loc", "scale"], distribution_class=torch.distributions.Normal,
                           return_log_prob=True)
critic = TensorDictModule(Heads(), ["observation"], [("state_value", "reward"), ("state_value", "cost")])
loss = ClipPPOLoss(actor, critic, clip_value=CLIP, entropy_bonus=False, loss_critic_type="l2")
col = lambda x: torch.as_tensor(x, dtype=torch.float64).reshape(-1, 1)  # noqa: E731
heads = lambda x: TensorDict({"reward": col(x[:, 0]), "cost": col(x[:, 1])}, [B])  # noqa: E731
td = TensorDict({"observation": torch.as_tensor(v), "action": torch.zeros(B, 1, dtype=torch.float64),
                 "advantage": torch.ones(B, 1, dtype=torch.float64), "value_target": heads(R),
                 "state_value": heads(old)}, [B])
with torch.no_grad():
    td[loss.tensor_keys.sample_log_prob] = actor.get_dist(td).log_prob(td["action"])
out = loss(td)

expected = {h: float((np.abs(v[:, i] - old[:, i]) > CLIP).mean()) for i, h in enumerate(("reward", "cost"))}
actual = {h: float(out["value_clip_fraction"][h]) for h in expected}
clipped = old + np.clip(v - old, -CLIP, CLIP)
lv = np.maximum((v - R) ** 2, (clipped - R) ** 2).mean(0)
got = [float(out["loss_critic"][h].mean().detach()) for h in expected]
print(f"parameters: ClipPPOLoss(clip_value={CLIP}), critic writing ('state_value', 'reward') and "
      f"('state_value', 'cost'), batch of {B} with the stored predictions in 'state_value'")
print(f"expected:   value_clip_fraction {expected}; loss_critic per head (mean) {lv.round(6).tolist()} "
      "(Baselines' clipping around the stored predictions, numpy)")
print(f"actual:     value_clip_fraction {actual}; loss_critic per head (mean) {np.round(got, 6).tolist()} "
      f"(the unclipped loss is {((v - R) ** 2).mean(0).round(6).tolist()})")
if any(abs(actual[h] - expected[h]) > 1e-12 for h in expected):
    print("BUG: the critic overwrites the stored predictions before the clip: no value clipping")
    sys.exit(1)
print("ok: each head is clipped around its stored prediction")
