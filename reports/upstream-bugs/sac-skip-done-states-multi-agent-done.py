"""SACLoss(skip_done_states=True) fails on multi-agent batches: with a per-agent done [B, N, 1]
it raises a RuntimeError, and with the done keys of a nested agent group (('agents', 'done')
[B, N, 1] beside the root 'done' [B, 1]) the [B, N] mask indexes the whole 'next' tensordict,
root entries included, and raises an IndexError. skip_done_states=False runs on both batches.
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
B, N, OBS, ACT = 4, 3, 2, 1


class QNet(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.linear = torch.nn.Linear(OBS + ACT, 1)

    def forward(self, observation, action):
        return self.linear(torch.cat([observation, action], -1))


def sac_loss(skip, group=()):
    def key(name):
        return (*group, name) if group else name
    actor = ProbabilisticActor(
        TensorDictModule(torch.nn.Sequential(torch.nn.Linear(OBS, 2 * ACT), NormalParamExtractor()),
                         [key("observation")], [key("loc"), key("scale")]),
        in_keys={"loc": key("loc"), "scale": key("scale")}, out_keys=[key("action")],
        distribution_class=TanhNormal)
    qvalue = TensorDictModule(QNet(), [key("observation"), key("action")],
                              [key("state_action_value")])
    loss = SACLoss(actor, qvalue, num_qvalue_nets=2, fixed_alpha=True, skip_done_states=skip,
                   target_entropy=-float(ACT))
    if group:
        loss.set_keys(action=key("action"), reward=key("reward"), done=key("done"),
                      terminated=key("terminated"), state_action_value=key("state_action_value"))
    loss.make_value_estimator(ValueEstimators.TD0, gamma=0.9)
    return loss


torch.manual_seed(0)
done = torch.zeros(B, N, 1, dtype=torch.bool)
done[0, 1] = True  # agent 1 of the first transition terminated
step = {"observation": torch.randn(B, N, OBS), "action": torch.rand(B, N, ACT) * 2 - 1}
nxt = {"observation": torch.randn(B, N, OBS), "reward": torch.randn(B, N, 1), "done": done,
       "terminated": done.clone()}
batches = {
    "per-agent done [B, N, 1] at the root": (
        (), TensorDict({**step, "next": TensorDict(nxt, [B])}, [B])),
    "nested group ('agents', 'done') [B, N, 1] and root 'done' [B, 1]": (
        ("agents",), TensorDict({"agents": TensorDict(step, [B, N]), "next": TensorDict(
            {"agents": TensorDict(nxt, [B, N]), "done": done.any(1),
             "terminated": done.any(1)}, [B])}, [B])),
}
print(f"parameters: SACLoss(TanhNormal actor, 2 Q-nets, TD0 gamma 0.9), B={B}, N={N} agents, "
      "one agent terminated")
failures = 0
for name, (group, td) in batches.items():
    try:  # the control: the same batch without the flag runs
        sac_loss(False, group)(td.clone())
    except Exception as exc:  # noqa: BLE001
        print(f"cannot reproduce: skip_done_states=False fails too ({type(exc).__name__}: {exc})")
        sys.exit(2)
    try:
        out = sac_loss(True, group)(td.clone())
        actual = f"loss_qvalue {float(out['loss_qvalue'].detach()):.6g}"
    except Exception as exc:  # noqa: BLE001 - the error is the defect
        actual, failures = f"{type(exc).__name__}: {str(exc).splitlines()[0][:150]}", failures + 1
    print(f"{name}: expected finite losses (skip_done_states=False runs); actual {actual}")
if failures:
    print(f"BUG: skip_done_states=True fails on {failures} of {len(batches)} multi-agent layouts")
    sys.exit(1)
print("ok: skip_done_states=True runs on multi-agent done keys")
