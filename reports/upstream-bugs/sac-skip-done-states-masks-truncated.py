"""DiscreteSACLoss(skip_done_states=True) masks the next states by `done`, not `terminated`:
a truncated transition (done=True, terminated=False: a time limit) gets a next value of 0
instead of bootstrapping V(s'). Its Q-target is then r instead of r + gamma V(s').

The discrete SAC target is deterministic (V(s') = sum_a pi(a|s') (min_i Q_i(s', a) - alpha
log pi(a|s'))), so the flag, which only skips computing on terminal next states, must not
change loss_qvalue when no transition is terminated.
"""
import sys
import warnings

import torch
from tensordict import TensorDict
from tensordict.nn import TensorDictModule
from torchrl.modules import OneHotCategorical, ProbabilisticActor
from torchrl.objectives import DiscreteSACLoss
from torchrl.objectives.utils import ValueEstimators

warnings.filterwarnings("ignore")
B, OBS, ACTIONS = 4, 3, 2


def loss_qvalue(skip):
    torch.manual_seed(0)
    actor = ProbabilisticActor(TensorDictModule(torch.nn.Linear(OBS, ACTIONS), ["observation"],
                                                ["logits"]),
                               in_keys=["logits"], distribution_class=OneHotCategorical)
    qvalue = TensorDictModule(torch.nn.Linear(OBS, ACTIONS), ["observation"], ["action_value"])
    loss = DiscreteSACLoss(actor, qvalue, num_actions=ACTIONS, num_qvalue_nets=2,
                           action_space="one-hot", fixed_alpha=True, skip_done_states=skip)
    loss.make_value_estimator(ValueEstimators.TD0, gamma=0.9)
    done = torch.tensor([[True], [False], [False], [False]])  # transition 0 truncated
    td = TensorDict({"observation": torch.randn(B, OBS),
                     "action": torch.nn.functional.one_hot(torch.tensor([0, 1, 0, 1]), ACTIONS),
                     "next": TensorDict({"observation": torch.randn(B, OBS),
                                         "reward": torch.ones(B, 1), "done": done,
                                         "terminated": torch.zeros(B, 1, dtype=torch.bool)},
                                        [B])}, [B])
    return float(loss(td)["loss_qvalue"].detach())


expected, actual = loss_qvalue(False), loss_qvalue(True)
print(f"parameters: DiscreteSACLoss(2 Q-nets, TD0 gamma 0.9), B={B}, transition 0 truncated "
      "(done=True, terminated=False), no transition terminated")
print(f"expected:   loss_qvalue {expected:.6g}  (the same loss with skip_done_states=False: "
      "every next state bootstraps)")
print(f"actual:     loss_qvalue {actual:.6g}  (skip_done_states=True)")
if abs(actual - expected) > 1e-6 * max(1.0, abs(expected)):
    print("BUG: skip_done_states=True drops the bootstrap value of truncated transitions")
    sys.exit(1)
print("ok: truncated transitions bootstrap from the next state")
