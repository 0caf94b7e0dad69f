"""TanhNormal accepts integer loc and scale (the distribution is built, its loc stays int64),
but get_mode() raises: it starts from the mean of 1000 samples, self.sample((1000,)), and torch
cannot sample a Normal with integer parameters ("normal_kernel_cpu" not implemented for 'Long').
A mode is a real number: as torch.tanh of an integer tensor is float32, get_mode() should give a
tensor in torch's default dtype, the mode of the same distribution with float parameters. The
check compares with get_mode() of the float parameters, so that it judges the integer case
only, not the accuracy of get_mode() (reported separately).
"""
import sys

import numpy as np
import torch
from torchrl.modules import TanhNormal

LOC = [0, 2, -3, 1, 0]
SCALE = [1, 1, 2, 3, 1]
loc, scale = torch.tensor(LOC), torch.tensor(SCALE)

# the reference: the same distribution with float parameters, the global RNG seeded alike
torch.manual_seed(0)
reference = TanhNormal(loc.float(), scale.float(), low=-1.0, high=1.0).get_mode()
# the exact modes, for the reader: argmax over x = atanh(y) of -(x - loc)^2 / (2 scale^2)
# + 2 log cosh(x) on a dense float64 grid (loc 0, scale 1 is a tie between -m and +m)
exact = []
for mu, s in zip(LOC, SCALE, strict=True):
    x = np.linspace(mu - 12 * s, mu + 12 * s, 2_000_001)
    log_density = -(x - mu) ** 2 / (2 * s * s) + 2 * np.log(np.cosh(x))
    exact.append(float(np.tanh(x[np.argmax(log_density)])))

print(f"parameters: TanhNormal(loc=torch.tensor({LOC}), scale=torch.tensor({SCALE}), "
      "low=-1.0, high=1.0) (int64), global seed 0")
print(f"expected:   a {torch.get_default_dtype()} tensor of shape (5,), what get_mode() gives "
      f"for the same parameters as floats: {[round(v, 4) for v in reference.tolist()]} "
      f"(its accuracy is another matter: exact modes {[round(v, 6) for v in exact]}, ties at "
      "loc 0)")
dist = TanhNormal(loc, scale, low=-1.0, high=1.0)
torch.manual_seed(0)
try:
    mode = dist.get_mode()
except (RuntimeError, TypeError) as exc:  # NotImplementedError is a RuntimeError
    print(f"actual:     the distribution is built (loc {dist.loc.dtype}); get_mode() raised "
          f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}")
    print("BUG: get_mode() of a TanhNormal with integer parameters raises")
    sys.exit(1)
print(f"actual:     {mode.dtype} tensor of shape {tuple(mode.shape)}: "
      f"{[round(v, 4) for v in mode.double().tolist()]}")
if (mode.dtype != torch.get_default_dtype() or mode.shape != reference.shape
        or not torch.allclose(mode.double(), reference.double(), rtol=0, atol=1e-5)):
    print("BUG: get_mode() of integer parameters is not the mode of those parameters as floats")
    sys.exit(1)
print("ok: get_mode() of integer parameters is a real-valued mode")
