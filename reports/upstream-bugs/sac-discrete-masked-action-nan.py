"""DiscreteSACLoss gives NaN losses for a policy that masks an action (logit -inf, probability
0, the usual way of action masking): actor_loss weights dist.logits by dist.probs, and
0 * -inf = NaN, so loss_actor and loss_alpha are NaN with skip_done_states off and on; with
skip_done_states=True the target also scores next_dist.logits, so loss_qvalue is NaN too.
A masked action contributes 0 * log 0 = 0 to every expectation: the losses must stay finite.
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
B, OBS, NA, MASKED = 6, 3, 4, 0


class MaskedLogits(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.linear = torch.nn.Linear(OBS, NA)

    def forward(self, observation):
        logits = self.linear(observation)
        mask = torch.zeros(NA, dtype=torch.bool)
        mask[MASKED] = True
        return logits.masked_fill(mask, -float("inf"))  # action 0 is never taken


def loss_of(skip):
    actor = ProbabilisticActor(TensorDictModule(MaskedLogits(), ["observation"], ["logits"]),
                               in_keys=["logits"], out_keys=["action"],
                               distribution_class=OneHotCategorical)
    qvalue = TensorDictModule(torch.nn.Linear(OBS, NA), ["observation"], ["action_value"])
    loss = DiscreteSACLoss(actor, qvalue, action_space="one-hot", num_actions=NA,
                           num_qvalue_nets=2, fixed_alpha=True, skip_done_states=skip)
    loss.make_value_estimator(ValueEstimators.TD0, gamma=0.9)
    return loss


torch.manual_seed(0)
done = torch.zeros(B, 1, dtype=torch.bool)
done[0] = True
action = torch.nn.functional.one_hot(torch.randint(1, NA, (B,)), NA)  # never the masked one
batch = TensorDict({"observation": torch.randn(B, OBS), "action": action, "next": TensorDict(
    {"observation": torch.randn(B, OBS), "reward": torch.randn(B, 1), "done": done,
     "terminated": done.clone()}, [B])}, [B])
print(f"parameters: DiscreteSACLoss(OneHotCategorical actor, 2 Q-nets, TD0 gamma 0.9), B={B}, "
      f"{NA} actions, action {MASKED} masked (logit -inf) at every state, one terminated step")
print("expected: finite loss_actor, loss_qvalue, loss_alpha (a masked action contributes "
      "0 * log 0 = 0 to every expectation)")
bad = 0
for skip in (False, True):
    out = loss_of(skip)(batch.clone())
    values = {k: float(out[k].detach()) for k in ("loss_actor", "loss_qvalue", "loss_alpha")}
    nan = [k for k, v in values.items() if not torch.isfinite(torch.tensor(v))]
    bad += bool(nan)
    shown = ", ".join(f"{k} {v:.6g}" for k, v in values.items())
    print(f"skip_done_states={skip}: actual {shown}" + (f"  <- not finite: {nan}" if nan else ""))
if bad:
    print("BUG: DiscreteSACLoss is not finite for an action-masked policy")
    sys.exit(1)
print("ok: the losses are finite for an action-masked policy")
