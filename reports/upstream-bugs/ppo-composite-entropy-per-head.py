"""ClipPPOLoss's entropy bonus is wrong for a composite policy with per-head entropy_coeff when a
head's entropy has an event dimension (a Normal head with d=2): _weighted_loss_entropy weights
each head's entropy as it comes, so the Normal head's [*batch, 2] entropy is broadcast against
the categorical head's [*batch]: a wrong loss_entropy at batch [B], a shape error at [B, T].
The Normal head is a plain torch Normal over [*batch, 2], as TorchRL's composite examples build it.
Expected: loss_entropy = -mean over the batch of sum_h c_h * H_h (H_h summed over the head's
own event dimensions), computed here in float64 from the closed-form entropies.
"""
import sys
import warnings

import torch
from tensordict import TensorDict
from tensordict.nn import (CompositeDistribution, TensorDictModule,
                           set_composite_lp_aggregate)
from torch import distributions as d
from torchrl.data import Categorical as CategoricalSpec
from torchrl.data import Composite, Unbounded
from torchrl.modules import ProbabilisticActor
from torchrl.objectives import ClipPPOLoss

warnings.filterwarnings("ignore")
A1, D2, COEFF = 8, 2, {"action1": 0.01, "action2": 0.05}


class Params(torch.nn.Module):  # the heads' parameters, passed through a learnable gain of 1
    def __init__(self):
        super().__init__()
        self.gain = torch.nn.Parameter(torch.ones(()))

    def forward(self, logits, loc, scale):
        return logits * self.gain, loc * self.gain, scale * self.gain


class Critic(torch.nn.Module):
    def forward(self, logits):
        return torch.zeros(*logits.shape[:-1], 1)


def run(batch):
    torch.manual_seed(0)
    logits = torch.randn(*batch, A1)
    loc, scale = torch.randn(*batch, D2), 0.5 + torch.rand(*batch, D2)
    module = TensorDictModule(Params(), ["logits", "loc", "scale"],
                              [("params", "action1", "logits"), ("params", "action2", "loc"),
                               ("params", "action2", "scale")])
    actor = ProbabilisticActor(
        module, in_keys=["params"], return_log_prob=True,
        spec=Composite({"action": Composite({"action1": CategoricalSpec(A1),
                                             "action2": Unbounded(D2)})}),
        distribution_class=CompositeDistribution,
        distribution_kwargs={"distribution_map": {"action1": d.Categorical, "action2": d.Normal},
                             "name_map": {"action1": ("action", "action1"),
                                          "action2": ("action", "action2")}})
    data = TensorDict({"logits": logits, "loc": loc, "scale": scale}, batch)
    with set_composite_lp_aggregate(False):
        with torch.no_grad():
            data = actor(data)
        data.set("advantage", torch.zeros(*batch, 1))
        data.set("value_target", torch.zeros(*batch, 1))
        critic = TensorDictModule(Critic(), ["logits"], ["state_value"])
        loss = ClipPPOLoss(actor, critic, entropy_bonus=True, entropy_coeff={
            ("action", f"{h}_entropy"): c for h, c in COEFF.items()})
        loss.set_keys(action=[("action", "action1"), ("action", "action2")],
                      sample_log_prob=[("action", "action1_log_prob"),
                                       ("action", "action2_log_prob")])
        out = loss(data)
    h1 = d.Categorical(logits=logits.double()).entropy()
    h2 = d.Normal(loc.double(), scale.double()).entropy().sum(-1)
    expected = -(COEFF["action1"] * h1 + COEFF["action2"] * h2).mean().item()
    return expected, float(out["loss_entropy"].detach())


print(f"parameters: ClipPPOLoss, composite policy action1: Categorical({A1}), action2: "
      f"Normal(d={D2}), entropy_coeff per head {COEFF}, a zero critic")
bad = 0
for batch in ((8,), (4, 3)):
    try:
        expected, actual = run(batch)
        text = f"{actual:.6g}"
        wrong = abs(actual - expected) > 1e-7 + 1e-5 * abs(expected)
    except Exception as exc:  # noqa: BLE001 - the error is the defect
        expected, text, wrong = None, f"{type(exc).__name__}: {str(exc).splitlines()[0][:120]}", True
    bad += wrong
    shown = "n/a" if expected is None else f"{expected:.6g}"
    print(f"batch {list(batch)}: expected loss_entropy {shown} (-mean of sum_h c_h H_h, closed "
          f"form, float64); actual {text}" + ("  <- wrong" if wrong else ""))
if bad:
    print("BUG: the per-head entropy bonus of a composite policy is wrong")
    sys.exit(1)
print("ok: the per-head entropy bonus is -mean(sum_h c_h H_h)")
