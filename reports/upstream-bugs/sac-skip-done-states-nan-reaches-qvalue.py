"""SACLoss(skip_done_states=True) keeps terminal next observations away from the actor but not
from the Q-network: a terminal next observation holding NaN (what an env may put in a state
that does not exist) makes loss_qvalue NaN, although the target of a terminated transition is
the reward alone and never needs Q(s', .).
"""
import sys
import warnings

import torch
from tensordict import TensorDict
from tensordict.nn import NormalParamExtractor, TensorDictModule
from torchrl.modules import ProbabilisticActor, TanhNormal
from torchrl.objectives import SACLoss
from torchrl.objectives.utils import ValueEstimators

warnings.filterwarnings("ignore")
B, OBS, ACT = 4, 2, 1


class QNet(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.linear = torch.nn.Linear(OBS + ACT, 1)

    def forward(self, observation, action):
        return self.linear(torch.cat([observation, action], -1))


torch.manual_seed(0)
actor = ProbabilisticActor(
    TensorDictModule(torch.nn.Sequential(torch.nn.Linear(OBS, 2 * ACT), NormalParamExtractor()),
                     ["observation"], ["loc", "scale"]),
    in_keys=["loc", "scale"], distribution_class=TanhNormal)
qvalue = TensorDictModule(QNet(), ["observation", "action"], ["state_action_value"])
loss = SACLoss(actor, qvalue, num_qvalue_nets=2, fixed_alpha=True, skip_done_states=True,
               target_entropy=-float(ACT))
loss.make_value_estimator(ValueEstimators.TD0, gamma=0.9)
terminated = torch.tensor([[True], [False], [False], [False]])
next_obs = torch.randn(B, OBS)
next_obs[0] = float("nan")  # the terminal state of transition 0 does not exist
td = TensorDict({"observation": torch.randn(B, OBS), "action": torch.rand(B, ACT) * 2 - 1,
                 "next": TensorDict({"observation": next_obs, "reward": torch.ones(B, 1),
                                     "done": terminated, "terminated": terminated.clone()}, [B])},
                [B])
out = loss(td)
values = {k: float(out[k].detach()) for k in ("loss_actor", "loss_qvalue")}
print(f"parameters: SACLoss(skip_done_states=True, 2 Q-nets, TD0 gamma 0.9), B={B}, "
      "transition 0 terminated with a NaN next observation")
print("expected:   finite loss_actor and loss_qvalue (a terminated target is r, Q(s', .) unused)")
print(f"actual:     {values}")
if not all(torch.isfinite(torch.tensor(v)) for v in values.values()):
    print("BUG: the terminal next observation reaches a network")
    sys.exit(1)
print("ok: terminal next states never reach the networks")
