"""CompositeDistribution.log_prob of a sample that lacks one head's action: it reads each head's
action with sample.get(name), which gives None for a missing key, and passes None to the head's
log_prob. For a Normal head that fails inside torch with "TypeError: unsupported operand
type(s) for -: 'NoneType' and 'Tensor'", naming no key, so the user cannot tell that the action
of ('action', 'action2') is missing, nor where the sample put its actions. It should raise a
KeyError naming the missing key and the entries the sample holds.
"""
import sys

import torch
import torchrl.modules  # noqa: F401 - what a TorchRL user has imported
from tensordict import TensorDict
from tensordict.nn import CompositeDistribution

B = 16
g = torch.Generator().manual_seed(11)
params = TensorDict({"action1": {"logits": 2 * torch.randn(B, 8, generator=g)},
                     "action2": {"loc": torch.randn(B, 2, generator=g),
                                 "scale": 0.5 + torch.rand(B, 2, generator=g)}}, [B])
dist = CompositeDistribution(
    params, distribution_map={"action1": torch.distributions.Categorical,
                              "action2": torch.distributions.Normal},
    name_map={"action1": ("action", "action1"), "action2": ("action", "action2")})
# the sample holds the action of 'action1' only
sample = TensorDict({"action": {"action1": params["action1", "logits"].argmax(-1)}}, [B])

print(f"parameters: CompositeDistribution(action1: Categorical(8), action2: Normal(d=2)), "
      f"batch [{B}]; the sample holds only ('action', 'action1')")
print("expected:   KeyError naming ('action', 'action2') and the entry ('action', 'action1') "
      "the sample holds")
try:
    lp = dist.log_prob(sample)
except (TypeError, AttributeError, KeyError) as exc:  # None reaching the head's log_prob
    text = f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"
    print(f"actual:     {text}")
    if isinstance(exc, KeyError) and "action2" in str(exc) and "action1" in str(exc):
        print("ok: the missing head's action is refused with a KeyError naming it")
        sys.exit(0)
    print("BUG: the missing head's action reaches its log_prob as None; the error names no key")
    sys.exit(1)
print(f"actual:     scored, log-prob entries {sorted(str(k) for k in lp.keys(True, True))}")
print("BUG: a sample without a head's action was scored")
sys.exit(1)
