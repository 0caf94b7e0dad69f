"""SACLoss(target_entropy="auto") for a multi-agent actor whose action spec is given to the
actor only (spec=, as env.full_action_spec_unbatched): the agents are counted as action
dimensions. #1494 subtracts the agent group's shape (N,) from the action's (N, A), but the
actor's merged spec (ProbabilisticActor) rebuilds the group as a Composite of shape (), so
nothing is subtracted: -N * A instead of -A. Given to the loss (action_spec=), the same spec
gives -A.
"""
import sys
import warnings

import torch
from tensordict.nn import TensorDictModule
from torchrl.data import Bounded, Composite
from torchrl.modules import NormalParamExtractor, ProbabilisticActor, TanhNormal
from torchrl.objectives import SACLoss

warnings.simplefilter("ignore")
N, A, OBS = 3, 2, 4
spec = Composite({"agents": Composite(
    {"action": Bounded(-torch.ones(N, A), torch.ones(N, A), (N, A))}, shape=(N,))})


class Q(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.linear = torch.nn.Linear(OBS + A, 1)

    def forward(self, observation, action):
        return self.linear(torch.cat([observation, action], -1))


def target_entropy(given_to):
    module = TensorDictModule(
        torch.nn.Sequential(torch.nn.Linear(OBS, 2 * A), NormalParamExtractor()),
        [("agents", "observation")], [("agents", "loc"), ("agents", "scale")])
    actor = ProbabilisticActor(module, in_keys=[("agents", "loc"), ("agents", "scale")],
                               out_keys=[("agents", "action")], distribution_class=TanhNormal,
                               spec=spec if given_to == "actor" else None)
    qvalue = TensorDictModule(Q(), [("agents", "observation"), ("agents", "action")],
                              [("agents", "state_action_value")])
    loss = SACLoss(actor, qvalue, **({"action_spec": spec} if given_to == "loss" else {}))
    loss.set_keys(action=("agents", "action"), state_action_value=("agents", "state_action_value"))
    return float(loss.target_entropy), tuple(actor.spec["agents"].shape)


(on_loss, _), (on_actor, group) = target_entropy("loss"), target_entropy("actor")
print(f"parameters: {N} agents, actions of dim {A} under ('agents', 'action'), the group of shape "
      f"({N},), target_entropy='auto'")
print(f"expected:   target_entropy = {-float(A)} (-dim(A) of one agent, as with action_spec=: "
      f"{on_loss})")
print(f"actual:     target_entropy = {on_actor} with the spec given to the actor only (the "
      f"actor's merged spec holds the group with shape {group})")
if on_actor != -float(A):
    print("BUG: the agents count as action dimensions when the spec comes from the actor")
    sys.exit(1)
print("ok: the automatic target entropy is -dim(A) per agent")
