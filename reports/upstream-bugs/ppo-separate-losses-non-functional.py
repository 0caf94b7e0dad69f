"""ClipPPOLoss(separate_losses=True, functional=False): the critic loss still trains the
parameters the critic shares with the policy. separate_losses is implemented by passing the
policy's parameters as compare_against to convert_to_functional, which detaches the shared
ones in the critic's functional copy; with functional=False there is no functional copy, the
critic runs on the live modules, and loss_critic's gradient reaches the shared trunk (only the
input tensordict is detached). The same loss with functional=True keeps the trunk's gradient
at zero. separate_losses=True should keep the critic's gradient off the shared parameters
whatever functional is, while the critic's own head still trains.
"""
import sys

import torch
from tensordict import TensorDict
from tensordict.nn import TensorDictModule
from torchrl.modules import ProbabilisticActor
from torchrl.objectives import ClipPPOLoss


class Policy(torch.nn.Module):
    """Normal(trunk(observation), 1): the trunk is the policy's and the critic's."""

    def __init__(self, trunk):
        super().__init__()
        self.trunk = trunk

    def forward(self, observation):
        loc = self.trunk(observation)
        return loc, torch.ones_like(loc)


def identity():
    layer = torch.nn.Linear(1, 1)
    with torch.no_grad():
        layer.weight.fill_(1.0)
        layer.bias.zero_()
    return layer


def gradients(functional):
    """d loss_critic / d (weight, bias) summed, of the trunk and of the critic's head."""
    trunk, head = identity(), identity()
    actor = ProbabilisticActor(TensorDictModule(Policy(trunk), ["observation"], ["loc", "scale"]),
                               in_keys=["loc", "scale"],
                               distribution_class=torch.distributions.Normal, return_log_prob=True)
    critic = TensorDictModule(torch.nn.Sequential(trunk, head), ["observation"], ["state_value"])
    loss = ClipPPOLoss(actor, critic, entropy_bonus=False, loss_critic_type="l2",
                       separate_losses=True, functional=functional)
    g = torch.Generator().manual_seed(26)
    obs = torch.randn(32, 1, generator=g)
    td = TensorDict({"observation": obs, "action": torch.zeros(32, 1),
                     "advantage": torch.ones(32, 1),
                     "value_target": 3 * torch.randn(32, 1, generator=g),
                     "state_value": obs.clone()}, [32])
    with torch.no_grad():
        td[loss.tensor_keys.sample_log_prob] = actor.get_dist(td).log_prob(td["action"])
    loss(td)["loss_critic"].backward()
    return [tuple(0.0 if p.grad is None else round(float(p.grad.sum()), 6)
                  for p in (layer.weight, layer.bias)) for layer in (trunk, head)]


torch.manual_seed(0)
print("parameters: ClipPPOLoss(actor, critic, separate_losses=True, functional=False), "
      "critic = head(trunk(obs)), policy loc = trunk(obs), both Linear(1, 1) identities, "
      "batch [32], seed 26")
print("expected:   d loss_critic / d trunk (weight, bias) = (0.0, 0.0) and a non-zero gradient "
      "on the critic's head, as with functional=True")
bugs = 0
for functional in (False, True):
    trunk_grad, head_grad = gradients(functional)
    print(f"actual:     functional={functional}: trunk {trunk_grad}, head {head_grad}")
    bugs += any(x != 0.0 for x in trunk_grad) or all(x == 0.0 for x in head_grad)
if bugs:
    print("BUG: with functional=False the critic loss trains the trunk shared with the policy")
    sys.exit(1)
print("ok: the critic loss leaves the shared trunk alone")
