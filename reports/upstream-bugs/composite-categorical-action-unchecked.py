"""CompositeDistribution.log_prob scores a Categorical head's action without checking it: an
action outside [0, n) reaches Categorical.log_prob's gather, which fails with "index 8 is out
of bounds for dimension 1 with size 8" (or "index -1 ..."), naming neither the head nor the
action. Importing torchrl switches torch's argument validation off for every distribution
(D.Distribution.set_default_validate_args(False) in torchrl/modules/distributions/continuous.py),
so torch's own support check never runs, and the composite does not say which head it was
scoring. It should raise a ValueError (what torch raises for a value outside the support) whose
message names the head 'action1'.
"""
import sys

import torch
import torchrl.modules  # noqa: F401 - what a TorchRL user has imported: validation goes off
from tensordict import TensorDict
from tensordict.nn import CompositeDistribution

B, N = 16, 8
g = torch.Generator().manual_seed(10)
params = TensorDict({"action1": {"logits": 2 * torch.randn(B, N, generator=g)},
                     "action2": {"loc": torch.randn(B, 2, generator=g),
                                 "scale": 0.5 + torch.rand(B, 2, generator=g)}}, [B])
dist = CompositeDistribution(
    params, distribution_map={"action1": torch.distributions.Categorical,
                              "action2": torch.distributions.Normal},
    name_map={"action1": ("action", "action1"), "action2": ("action", "action2")})

print(f"parameters: CompositeDistribution(action1: Categorical({N}), action2: Normal(d=2)), "
      f"batch [{B}]; action1[5] set to {N} and to -1; "
      f"torch validate_args default after importing torchrl: "
      f"{getattr(torch.distributions.Distribution, '_validate_args', 'unknown')}")
print("expected:   ValueError naming the head 'action1' (the action is outside [0, 8))")
bugs = 0
for bad in (N, -1):
    action1 = torch.randint(N, (B,), generator=torch.Generator().manual_seed(10))
    action1[5] = bad
    sample = TensorDict({"action": {"action1": action1,
                                    "action2": params["action2", "loc"].clone()}}, [B])
    try:
        lp = dist.log_prob(sample)
    except (RuntimeError, IndexError, ValueError) as exc:  # what the unchecked gather raises
        text = f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"
        print(f"actual:     action1[5] = {bad}: {text}")
        bugs += not (isinstance(exc, ValueError) and "action1" in str(exc)
                     and "out of bounds" not in str(exc))
        continue
    print(f"actual:     action1[5] = {bad}: scored, log-prob "
          f"{float(lp.get(('action', 'action1_log_prob'))[5]):.6g}")
    bugs += 1
if bugs:
    print(f"BUG: {bugs} of 2 out-of-range Categorical actions not refused with an error naming "
          "the head")
    sys.exit(1)
print("ok: an out-of-range Categorical action is refused with a ValueError naming the head")
