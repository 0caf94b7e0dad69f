"""§1 TanhNormal mode: the time of the mode, and one torch.tanh over the same batch (the unit of
the target). Both go through the interface: ``area.make(loc, scale)`` untimed, ``area.mode(dist)``
timed.

Inputs: loc = 1.5 N(0, 1), scale = U(0.05, 2.0), shape [n, 1], seeded, in float32 or float64.

Issue #14 ("no cost to swapping") adds two targets: the mode of one action (batch 1, what a
MODE evaluation rollout asks for) within 2x of TorchRL's ``deterministic_sample`` (tanh of the
location: what the mode replaces), both read as properties of the distribution, as a rollout
reads them (``mode_batch1``: the interface's call only where the property does not answer), and, at 1e4 float32, building the distribution and taking its
mode (``mode_constructed``) within 15x of one ``torch.tanh``.

On cuda the grid adds 1e6 (issue #26: the mode at 1e6 float32 within 10x of one ``torch.tanh``).
"""

from __future__ import annotations

from benchtools.floors import Floor
from benchtools.registry import SEED
from benchtools.targets import Target, ratio
from benchtools.workload import (
    Timed,
    Workload,
    asv_class,
    asv_versus_baseline,
    asv_versus_companions,
    same_point,
)

SIZES = [100, 1_000, 10_000, 100_000]
CUDA_SIZES = {"size": [1_000_000]}
ASV_SIZES = {"size": [100, 10_000]}  # asv's grid: the target's point and a small batch
DTYPES = ["float32", "float64"]


def _reads(tensors):
    """The floor of a call that reads ``tensors`` [size, 1] tensors once (loc, scale)."""
    return lambda p: Floor(1, tensors * p["size"] * (4 if p["dtype"] == "float32" else 8))


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

    return Timed(call)


def _tanh(area, dev, *, dtype, size):
    import torch

    loc, _ = _inputs(size, dev, dtype)

    def call():
        torch.tanh(loc)

    return Timed(call)


def _deterministic_sample(area, dev, *, dtype, size):
    loc, scale = _inputs(size, dev, dtype)
    dist = area.make(loc, scale, low=-1.0, high=1.0)
    if not hasattr(type(dist), "deterministic_sample"):
        raise NotImplementedError(f"{type(dist).__name__} has no deterministic_sample")

    def call():
        return dist.deterministic_sample  # the property is the timed work

    return Timed(call)


def _mode_property(area, dev, *, dtype, size):
    """What a rollout under ExplorationType.MODE reads: the distribution's own ``mode``, as
    ``deterministic_sample`` is read on the other side of the target (the interface's
    ``area.mode`` adds the harness's warning filter, ~16 µs a call here, to one side only).
    ``area.mode(dist)`` where the property does not answer (TorchRL 0.6 on: get_mode())."""
    loc, scale = _inputs(size, dev, dtype)
    dist = area.make(loc, scale, low=-1.0, high=1.0)
    try:
        dist.mode  # noqa: B018 - does the property answer?
    except (AttributeError, RuntimeError, NotImplementedError):
        def call():
            area.mode(dist)
    else:
        def call():
            return dist.mode  # the property is the timed work

    return Timed(call)


def _mode_constructed(area, dev, *, dtype, size):
    loc, scale = _inputs(size, dev, dtype)

    def call():
        area.mode(area.make(loc, scale, low=-1.0, high=1.0))

    return Timed(call)


MODE = Workload("mode", "tanh_normal_mode", {"dtype": DTYPES, "size": SIZES}, _mode,
                doc="area.mode(dist) of a TanhNormal over [size, 1]",
                companions=same_point("tanh"), cuda_params=CUDA_SIZES, floor=_reads(2),
                asv_params=ASV_SIZES)
TANH = Workload("tanh", None, {"dtype": DTYPES, "size": SIZES}, _tanh,
                doc="one torch.tanh over the same [size, 1] loc (the yardstick)",
                cuda_params=CUDA_SIZES, floor=_reads(1), asv_params=ASV_SIZES)
ONE = {"dtype": DTYPES, "size": [1]}
MODE_ONE = Workload("mode_batch1", "tanh_normal_mode", ONE, _mode_property,
                    doc="dist.mode of a TanhNormal over [1, 1]: one action",
                    companions=same_point("deterministic_sample_batch1"))
DETERMINISTIC_ONE = Workload("deterministic_sample_batch1", "tanh_normal_mode", ONE,
                             _deterministic_sample,
                             doc="dist.deterministic_sample over [1, 1] (tanh of the location)")
CONSTRUCTED = Workload("mode_constructed", "tanh_normal_mode",
                       {"dtype": DTYPES, "size": [10_000]}, _mode_constructed,
                       doc="area.make(loc, scale) then area.mode(dist) over [size, 1]",
                       companions=same_point("tanh"), floor=_reads(2))
WORKLOADS = [MODE, TANH, MODE_ONE, DETERMINISTIC_ONE, CONSTRUCTED]

TanhNormalMode = asv_class("TanhNormalMode", MODE)
TanhBaseline = asv_class("TanhBaseline", TANH)
TanhNormalModeBatch1 = asv_class("TanhNormalModeBatch1", MODE_ONE)
TanhNormalDeterministicBatch1 = asv_class("TanhNormalDeterministicBatch1", DETERMINISTIC_ONE)
TanhNormalModeConstructed = asv_class("TanhNormalModeConstructed", CONSTRUCTED)
TanhNormalModeVersusTorchrl = asv_versus_baseline("TanhNormalModeVersusTorchrl", MODE)
TanhNormalModeOverTanh = asv_versus_companions("TanhNormalModeOverTanh", MODE, WORKLOADS)
TanhNormalModeBatch1OverDeterministic = asv_versus_companions(
    "TanhNormalModeBatch1OverDeterministic", MODE_ONE, WORKLOADS)
TanhNormalModeConstructedOverTanh = asv_versus_companions(
    "TanhNormalModeConstructedOverTanh", CONSTRUCTED, WORKLOADS)


def _versus_torchrl(dtype):
    return lambda p, impl: ratio(p.get("mode", "torchrl", dtype=dtype, size=10_000),
                                 p.get("mode", impl, dtype=dtype, size=10_000))


def _over_tanh(dtype, size=10_000):
    return lambda p, impl: ratio(p.get("mode", impl, dtype=dtype, size=size),
                                 p.get("tanh", None, dtype=dtype, size=size))


def _batch1_versus_deterministic(dtype):
    return lambda p, impl: ratio(p.get("mode_batch1", impl, dtype=dtype, size=1),
                                 p.get("deterministic_sample_batch1", "torchrl", dtype=dtype,
                                          size=1))


def _constructed_over_tanh(points, impl):
    return ratio(points.get("mode_constructed", impl, dtype="float32", size=10_000),
                 points.get("tanh", None, dtype="float32", size=10_000))


TARGETS = [
    *(Target(f"TanhNormal mode at batch 1 {dtype}: {{impl}} / torchrl deterministic_sample",
             "<= 2", _batch1_versus_deterministic(dtype), lambda v: v <= 2, versus="torchrl")
      for dtype in DTYPES),
    Target("TanhNormal construction + mode at 1e4 float32: {impl} / one torch.tanh", "<= 15",
           _constructed_over_tanh, lambda v: v <= 15, versus="torchrl"),
] + [
    t for dtype in DTYPES for t in (
        Target(f"TanhNormal mode at 1e4 {dtype}: torchrl get_mode() / {{impl}}", ">= 100",
               _versus_torchrl(dtype), lambda v: v >= 100, versus="torchrl"),
        Target(f"TanhNormal mode at 1e4 {dtype}: {{impl}} / one torch.tanh", "<= 30",
               _over_tanh(dtype), lambda v: v <= 30, versus="torchrl"),
    )
] + [
    Target("TanhNormal mode at 1e6 float32 on cuda: {impl} / one torch.tanh", "<= 10",
           _over_tanh("float32", 1_000_000), lambda v: v <= 10, versus="torchrl",
           device="cuda"),
]
