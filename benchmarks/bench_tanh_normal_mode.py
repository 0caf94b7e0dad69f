"""§1 TanhNormal mode: the time of the mode, and one torch.tanh over the same batch (the unit of
the target). Both go through the interface: ``area.make(loc, scale)`` untimed, ``area.mode(dist)``
timed.

Inputs: loc = 1.5 N(0, 1), scale = U(0.05, 2.0), shape [n, 1], seeded, in float32 or float64.
"""

from __future__ import annotations

from benchmarks.common import SEED, synchronize
from benchmarks.targets import Target, ratio
from benchmarks.workload import Timed, Workload, asv_class

SIZES = [100, 1_000, 10_000, 100_000]
DTYPES = ["float32", "float64"]


def _inputs(n, dev, dtype_name):
    import torch

    gen = torch.Generator().manual_seed(SEED)
    loc = 1.5 * torch.randn(n, 1, generator=gen, dtype=torch.float64)
    scale = 0.05 + 1.95 * torch.rand(n, 1, generator=gen, dtype=torch.float64)
    dtype = getattr(torch, dtype_name)
    return loc.to(device=dev, dtype=dtype), scale.to(device=dev, dtype=dtype)


def _mode(area, dev, *, dtype, size):
    loc, scale = _inputs(size, dev, dtype)
    dist = area.make(loc, scale, low=-1.0, high=1.0)

    def call():
        area.mode(dist)
        synchronize(dev)

    return Timed(call)


def _tanh(area, dev, *, dtype, size):
    import torch

    loc, _ = _inputs(size, dev, dtype)

    def call():
        torch.tanh(loc)
        synchronize(dev)

    return Timed(call)


MODE = Workload("mode", "tanh_normal_mode", {"dtype": DTYPES, "size": SIZES}, _mode,
                doc="area.mode(dist) of a TanhNormal over [size, 1]")
TANH = Workload("tanh", None, {"dtype": DTYPES, "size": SIZES}, _tanh,
                doc="one torch.tanh over the same [size, 1] loc (the yardstick)")
WORKLOADS = [MODE, TANH]

TanhNormalMode = asv_class("TanhNormalMode", MODE)
TanhBaseline = asv_class("TanhBaseline", TANH)


def _versus_torchrl(dtype):
    return lambda p, impl: ratio(p.median("mode", "torchrl", dtype=dtype, size=10_000),
                                 p.median("mode", impl, dtype=dtype, size=10_000))


def _over_tanh(dtype):
    return lambda p, impl: ratio(p.median("mode", impl, dtype=dtype, size=10_000),
                                 p.median("tanh", None, dtype=dtype, size=10_000))


TARGETS = [
    t for dtype in DTYPES for t in (
        Target(f"TanhNormal mode at 1e4 {dtype}: torchrl get_mode() / {{impl}}", ">= 100",
               _versus_torchrl(dtype), lambda v: v >= 100, versus="torchrl"),
        Target(f"TanhNormal mode at 1e4 {dtype}: {{impl}} / one torch.tanh", "<= 30",
               _over_tanh(dtype), lambda v: v <= 30, versus="torchrl"),
    )
]
