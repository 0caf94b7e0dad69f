"""Under ExplorationType.MEAN a ProbabilisticActor over a CompositeDistribution with a
Categorical head feeds the head's NaN "mean" to Categorical.log_prob, which fails deep inside
with "index -9223372036854775808 is out of bounds". A Categorical has no mean: the actor should
either refuse with an error that names the head, or return valid actions and log-probs.
"""
import sys

import torch
from tensordict import TensorDict
from tensordict.nn import CompositeDistribution, TensorDictModule
from torchrl.envs.utils import ExplorationType, set_exploration_type
from torchrl.modules import ProbabilisticActor

B = 4
torch.manual_seed(0)
td = TensorDict({"obs": {"action1": {"logits": torch.randn(B, 3)},
                         "action2": {"logits": torch.randn(B, 5)}}}, [B])
params = [("obs", h, "logits") for h in ("action1", "action2")]
actor = ProbabilisticActor(
    TensorDictModule(lambda a, b: (a, b), in_keys=params,
                     out_keys=[("params", *k[1:]) for k in params]),
    in_keys=["params"], distribution_class=CompositeDistribution, return_log_prob=True,
    distribution_kwargs={
        "distribution_map": {"action1": torch.distributions.Categorical,
                             "action2": torch.distributions.Categorical},
        "name_map": {"action1": ("action", "action1"), "action2": ("action", "action2")}})

print(f"parameters: ProbabilisticActor(CompositeDistribution of 2 Categorical heads), batch [{B}], "
      "set_exploration_type(ExplorationType.MEAN)")
print("expected:   valid actions and log-probs, or an error naming the head 'action1'/'action2'")
try:
    with set_exploration_type(ExplorationType.MEAN):
        out = actor(td)
except Exception as exc:  # noqa: BLE001 - the error is what is judged
    text = f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"
    print(f"actual:     {text}")
    if isinstance(exc, IndexError) or "out of bounds" in text or not any(h in str(exc) for h in ("action1", "action2")):
        print("BUG: the NaN mean of a Categorical head reaches log_prob")
        sys.exit(1)
    print("ok: refused with an error naming the head")
    sys.exit(0)
actions = out["action"]
valid = all(bool(((actions[h] >= 0) & (actions[h] < n)).all())
            for h, n in (("action1", 3), ("action2", 5)))
print(f"actual:     actions {actions.to_dict()}")
if not valid:
    print("BUG: invalid actions under MEAN")
    sys.exit(1)
print("ok: valid actions")
