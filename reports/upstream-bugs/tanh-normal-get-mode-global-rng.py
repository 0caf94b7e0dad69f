"""TanhNormal.get_mode() draws random samples from the global RNG: its answer depends on the
seed, and calling it moves the caller's random stream (a seeded run is no longer reproducible
once it evaluates modes). A mode is a property of the distribution: it needs no randomness.
"""
import sys

import torch
from torchrl.modules import TanhNormal

loc = torch.linspace(-2, 2, 16)
scale = torch.linspace(0.3, 2.0, 16)
answers = []
for seed in (0, 1):
    torch.manual_seed(seed)
    answers.append(TanhNormal(loc, scale, low=-1.0, high=1.0).get_mode())
difference = float((answers[0] - answers[1]).abs().max())

torch.manual_seed(0)
before = torch.random.get_rng_state()
TanhNormal(loc, scale, low=-1.0, high=1.0).get_mode()
moved = not torch.equal(before, torch.random.get_rng_state())

print("parameters: TanhNormal(loc=linspace(-2, 2, 16), scale=linspace(0.3, 2, 16)), "
      "global seeds 0 and 1")
print("expected:   the same mode whatever the seed; the global RNG state unchanged by get_mode()")
print(f"actual:     max difference between seeds {difference:.3g}; "
      f"global RNG state {'advanced' if moved else 'unchanged'}")
if difference != 0 or moved:
    print("BUG: get_mode() depends on and consumes the global RNG")
    sys.exit(1)
print("ok: get_mode() is deterministic and leaves the global RNG alone")
