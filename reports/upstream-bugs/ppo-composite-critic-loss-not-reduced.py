"""ClipPPOLoss with a composite value network (#3031): forward reduces its outputs with
td_out.named_apply(lambda name, value: reduce(value) if name.startswith("loss_") else value),
and named_apply hands over leaf names: the heads nested under "loss_critic" ("reward", "cost")
do not start with "loss_" and come back unreduced, one loss per sample. A training loop that
adds up the loss terms (loss_objective + loss_critic) gets a tensordict, not a scalar.
"""
import sys

import torch
from tensordict import TensorDict, is_tensor_collection
from tensordict.nn import TensorDictModule
from torchrl.modules import ProbabilisticActor
from torchrl.objectives import ClipPPOLoss


class Policy(torch.nn.Module):  # a fixed Normal: the policy term plays no part
    def forward(self, observation):
        return torch.zeros_like(observation[..., :1]), torch.ones_like(observation[..., :1])


class Heads(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.bias = torch.nn.Parameter(torch.zeros(2))

    def forward(self, observation):
        out = observation + self.bias
        return out[..., :1], out[..., 1:]


B = 16
torch.manual_seed(0)
actor = ProbabilisticActor(TensorDictModule(Policy(), ["observation"], ["loc", "scale"]),
                           in_keys=["loc", "scale"], distribution_class=torch.distributions.Normal,
                           return_log_prob=True)
critic = TensorDictModule(Heads(), ["observation"], [("state_value", "reward"), ("state_value", "cost")])
loss = ClipPPOLoss(actor, critic, entropy_bonus=False, loss_critic_type="l2")
targets = TensorDict({"reward": torch.randn(B, 1), "cost": torch.randn(B, 1)}, [B])
td = TensorDict({"observation": torch.randn(B, 2), "action": torch.zeros(B, 1),
                 "advantage": torch.ones(B, 1), "value_target": targets}, [B])
with torch.no_grad():
    td[loss.tensor_keys.sample_log_prob] = actor.get_dist(td).log_prob(td["action"])
out = loss(td)
shapes = {h: tuple(out["loss_critic"][h].shape) for h in ("reward", "cost")}
total = out["loss_objective"] + out["loss_critic"]
print(f"parameters: ClipPPOLoss (reduction 'mean'), critic writing ('state_value', 'reward') and "
      f"('state_value', 'cost'), batch of {B}")
print(f"expected:   loss_critic per head a scalar, like loss_objective {tuple(out['loss_objective'].shape)}")
print(f"actual:     loss_critic per head of shape {shapes}; loss_objective + loss_critic is a "
      f"{type(total).__name__}")
if any(shape != () for shape in shapes.values()) or is_tensor_collection(total):
    print("BUG: the composite critic loss is not reduced")
    sys.exit(1)
print("ok: each head's loss is reduced")
