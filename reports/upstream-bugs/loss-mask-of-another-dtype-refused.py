"""ClipPPOLoss under a validity mask written as 0/1 numbers: since #4057 the losses' reductions
read ("collector", "mask") (and "shifted_valid", or loss_mask_key's entry), but
LossModule._reduce_loss hands the mask to torch.where as found. A bool mask (what
SliceSampler(pad_output=True) writes) works, and so does uint8 (with torch's deprecation
warning); an int64 or float32 0/1 mask, as a user writes it ((t < length).float()), raises
torch's "where expected condition to be a boolean tensor", which names neither the mask nor its
key. Expected: the loss of the bool mask (the mask read as its truth value), or a refusal that
names the mask.
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


B = 12
rng = np.random.default_rng(12)
old = rng.normal(0.0, 2.0, B)
v, R = old + rng.normal(0.0, 0.3, B), old + rng.normal(0.0, 3.0, B)
valid = rng.random(B) > 0.35
valid[0] = True


def critic_loss(mask):
    value_net = torch.nn.Linear(1, 1, dtype=torch.float64)  # the prediction is the observation
    with torch.no_grad():
        value_net.weight.fill_(1.0)
        value_net.bias.fill_(0.0)
    actor = ProbabilisticActor(TensorDictModule(Policy(), ["observation"], ["loc", "scale"]),
                               in_keys=["loc", "scale"],
                               distribution_class=torch.distributions.Normal,
                               return_log_prob=True)
    critic = TensorDictModule(value_net, ["observation"], ["state_value"])
    loss = ClipPPOLoss(actor, critic, entropy_bonus=False, loss_critic_type="l2")
    col = lambda x: torch.as_tensor(x, dtype=torch.float64).reshape(-1, 1)  # noqa: E731
    td = TensorDict({"observation": col(v), "action": torch.zeros(B, 1, dtype=torch.float64),
                     "advantage": torch.ones(B, 1, dtype=torch.float64), "value_target": col(R),
                     "state_value": col(old)}, [B])
    td.set(("collector", "mask"), mask)
    with torch.no_grad():
        td[loss.tensor_keys.sample_log_prob] = actor.get_dist(td).log_prob(td["action"])
    return float(loss(td)["loss_critic"].detach())


mask = torch.as_tensor(valid).reshape(-1, 1)
expected = float(((v - R) ** 2)[valid].mean())
print(f"parameters: ClipPPOLoss, batch of {B}, ('collector', 'mask') True at {int(valid.sum())}")
print(f"expected:   loss_critic = {expected:.6f} for every dtype of the 0/1 mask (the bool "
      f"mask's: {critic_loss(mask):.6f}), or an error naming the mask")
present = False
for dtype in (torch.int64, torch.float32):
    try:
        actual = f"{critic_loss(mask.to(dtype)):.6f}"
        named = True
    except Exception as error:  # noqa: BLE001 - what the user meets
        actual = f"{type(error).__name__}: {error}"
        named = "mask" in str(error)
        present = present or not named
    print(f"actual:     {dtype}: {actual}")
if present:
    print("BUG: a 0/1 mask of another dtype is refused with torch's message, naming no mask")
    sys.exit(1)
print("ok: a 0/1 mask of another dtype is read, or refused by name")
