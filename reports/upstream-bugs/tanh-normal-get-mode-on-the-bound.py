"""TanhNormal.get_mode() answers on the bound (density 0) instead of the argmax of the density.

y = tanh(x), x ~ Normal(loc, scale). In u = atanh(y) the log-density of y is, up to a
constant, -(u - loc)^2 / (2 scale^2) + 2 log cosh(u); its maximum is the mode. At y = +-1 the
density is 0, so the bound is never the mode.
"""
import sys

import numpy as np
import torch
from scipy import optimize
from torchrl.modules import TanhNormal

LOC, SCALE = 0.2, 1.0


def neg_log_density(u):
    return (u - LOC) ** 2 / (2 * SCALE**2) - 2 * np.log(np.cosh(u))


# expected: scipy's argmax of the density, bracketed by the best point of a dense grid
grid = np.linspace(-12, 12, 200_001)
best = grid[np.argmin(neg_log_density(grid))]
u = optimize.minimize_scalar(neg_log_density, bracket=(best - 1e-3, best, best + 1e-3)).x
expected = float(np.tanh(u))

torch.manual_seed(0)
dist = TanhNormal(torch.tensor([LOC]), torch.tensor([SCALE]), low=-1.0, high=1.0)
actual = float(dist.get_mode()[0])

print(f"parameters: TanhNormal(loc={LOC}, scale={SCALE}, low=-1, high=1), torch.manual_seed(0)")
print(f"expected:   {expected:.6f}  (scipy.optimize.minimize_scalar of -log density in atanh "
      "space, from the best point of a 200001-point grid)")
print(f"actual:     {actual:.6f}  (dist.get_mode())")
if abs(actual - expected) > 1e-3:
    print("BUG: get_mode() is not the argmax of the density"
          + (" (it is the bound, where the density is 0)" if abs(actual) >= 1 - 1e-6 else ""))
    sys.exit(1)
print("ok: get_mode() is the argmax of the density")
