"""MAPPOLoss(value_norm=RunningValueNorm(shape=1), clip_value=c) under a validity mask: the
loss's reductions leave out the positions marked False at ("collector", "mask") (#4057), but
_MultiAgentPPOMixin._critic_loss_inputs calls value_norm.update(target_return) on every row,
the padding's included. Here 17 of 24 positions are valid (targets around 50, std 9) and the
padding holds targets of 500: the normaliser's statistics become mean 181, std 205, and the
valid predictions are normalised (and clipped) by them. TorchRL's own advantage_norm drops
those rows (_valid_value_target_rows, #4127).
"""
import sys

import numpy as np
import torch
from tensordict import TensorDict
from tensordict.nn import TensorDictModule
from torchrl.modules import ProbabilisticActor, RunningValueNorm
from torchrl.objectives.multiagent import MAPPOLoss


class Policy(torch.nn.Module):  # a fixed Normal: the policy term plays no part
    def forward(self, observation):
        return torch.zeros_like(observation), torch.ones_like(observation)


CLIP, B, VALID = 0.2, 24, 17
rng = np.random.default_rng(3748)
R = 50.0 + 10.0 * rng.normal(size=B)
old = R + 5.0 * rng.normal(size=B)
v = old + 3.0 * rng.normal(size=B)
valid = np.arange(B) < VALID  # a slice padded at its end
R, v, old = (np.where(valid, x, pad) for x, pad in ((R, 500.0), (v, 500.0), (old, 480.0)))

value_net = torch.nn.Linear(1, 1, dtype=torch.float64)  # the prediction is the observation
with torch.no_grad():
    value_net.weight.fill_(1.0)
    value_net.bias.fill_(0.0)
actor = ProbabilisticActor(TensorDictModule(Policy(), ["observation"], ["loc", "scale"]),
                           in_keys=["loc", "scale"], distribution_class=torch.distributions.Normal,
                           return_log_prob=True)
critic = TensorDictModule(value_net, ["observation"], ["state_value"])
norm = RunningValueNorm(shape=1)
loss = MAPPOLoss(actor, critic, value_norm=norm, clip_value=CLIP, entropy_bonus=False,
                 loss_critic_type="l2", normalize_advantage=False)
col = lambda x: torch.as_tensor(x, dtype=torch.float64).reshape(-1, 1)  # noqa: E731
td = TensorDict({"observation": col(v), "action": torch.zeros(B, 1, dtype=torch.float64),
                 "advantage": torch.ones(B, 1, dtype=torch.float64), "value_target": col(R),
                 "state_value": col(old)}, [B])
td.set(("collector", "mask"), torch.as_tensor(valid).reshape(-1, 1))
with torch.no_grad():
    td[loss.tensor_keys.sample_log_prob] = actor.get_dist(td).log_prob(td["action"])
out = loss(td)

mean, std = R[valid].mean(), R[valid].std()  # the valid targets' statistics (numpy)
n = lambda x: (x - mean) / std  # noqa: E731
vc = n(old) + np.clip(n(v) - n(old), -CLIP, CLIP)
expected = float(np.maximum((n(v) - n(R)) ** 2, (vc - n(R)) ** 2)[valid].mean())
actual = float(out["loss_critic"].detach())
print(f"parameters: MAPPOLoss(value_norm=RunningValueNorm(shape=1), clip_value={CLIP}), batch "
      f"of {B}, ('collector', 'mask') True on the first {VALID}, padding targets 500")
print(f"expected:   normaliser mean {mean:.4f}, std {std:.4f} (the valid targets); loss_critic "
      f"= {expected:.6f} (Baselines' clipping of the normalised valid values, numpy)")
print(f"actual:     normaliser mean {float(norm.mean):.4f}, std "
      f"{float(norm.scale()):.4f}; loss_critic = {actual:.6f}")
if abs(actual - expected) > 1e-4 * expected:
    print("BUG: the padding's targets are folded into the value normaliser")
    sys.exit(1)
print("ok: the value normaliser takes the valid targets only")
