"""TanhNormal.get_mode() stops before reaching the mode (Adam with lr 1e-2 from the mean of
random samples, stopped by a rule shared by the whole batch).

For a small scale the mode is within 2 scale^2 of tanh(loc): the log-density in u = atanh(y)
is -(u - loc)^2 / (2 scale^2) + 2 log cosh(u), whose maximum is found here with scipy.
"""
import sys

import numpy as np
import torch
from scipy import optimize
from torchrl.modules import TanhNormal

LOCS, SCALE = [-2.0, -0.3, 0.0, 0.4, 1.5], 1e-2


def mode(loc, scale):
    def f(u):
        return (u - loc) ** 2 / (2 * scale**2) - 2 * np.log(np.cosh(u))
    # unimodal here (scale^2 < 1/2): the maximum lies within a few scales of loc
    return float(np.tanh(optimize.minimize_scalar(f, bounds=(loc - 1, loc + 1), method="bounded",
                                                  options={"xatol": 1e-12}).x))


expected = np.array([mode(m, SCALE) for m in LOCS])
torch.manual_seed(0)
dist = TanhNormal(torch.tensor(LOCS, dtype=torch.float64),
                  torch.full((len(LOCS),), SCALE, dtype=torch.float64), low=-1.0, high=1.0)
actual = dist.get_mode().numpy()
error = np.abs(actual - expected)

print(f"parameters: TanhNormal(loc={LOCS}, scale={SCALE}, low=-1, high=1, float64), seed 0")
print(f"expected:   {np.round(expected, 6).tolist()}  (scipy.optimize.minimize_scalar of "
      "-log density in atanh space)")
print(f"actual:     {np.round(actual, 6).tolist()}  (dist.get_mode())")
print(f"max error:  {error.max():.3g} (tolerance 1e-6; |mode - tanh(loc)| <= 2 scale^2 = "
      f"{2 * SCALE**2:.1g})")
if error.max() > 1e-6:
    print("BUG: get_mode() stopped before converging to the mode")
    sys.exit(1)
print("ok: get_mode() converged")
