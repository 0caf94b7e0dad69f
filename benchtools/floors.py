"""The physical floor of a point on its device, measured in the same run as the points.

Two yardsticks, timed like any point (``benchtools.clock``: on cuda each call ends with a
synchronisation):

- ``launch_sync``: one tiny op (an in-place add on one element). On cuda: one kernel launch and
  its synchronisation, the least any call that touches the device pays; on the CPU: one torch
  op's dispatch.
- ``copy``: a same-device copy of ``bytes`` bytes (``dst.copy_(src)``), the least a call pays to
  read its inputs once: bandwidth, for the big points.

A workload says what its floor is made of (``Workload.floor``: kernel launches it cannot avoid and
the bytes of its inputs); its floor in a run is ``launches x launch_sync + copy time of bytes``,
the copy time scaled linearly from the smallest measured copy at least as large (from the
largest one past it). The report divides each point's median by its floor. The yardsticks are
measured in their own groups (comparing every point with them in turns would join every group
into one), so a point over its floor is a ratio of medians of one run, not a paired ratio.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from benchtools.workload import Timed, Workload

AREA = "floor"  #: the pseudo-area of the yardsticks in ``benchtools.groups``
COPY_BYTES = [100_000, 1_000_000, 10_000_000]  # up to 10 MB on the CPU: a few ms a call
CUDA_COPY_BYTES = [100_000_000, 1_000_000_000]  # the big points' inputs on a GPU


@dataclass(frozen=True)
class Floor:
    launches: int = 1  #: launch+sync (one op) the call cannot do without
    bytes: int = 0  #: bytes it must read at least once


def one_launch(params: dict) -> Floor:
    return Floor()


def levels(capacity: int) -> int:
    """Levels of a binary sum tree over ``capacity`` leaves: what a tree walk launches per
    level (ceil(log2(1e6)) = 20)."""
    return max(1, math.ceil(math.log2(capacity)))


def _launch_sync(area, dev, *, numel):
    import torch

    x = torch.zeros(numel, device=dev)
    return Timed(lambda: x.add_(1.0))


def _copy(area, dev, *, bytes):  # noqa: A002 - the grid's name, as the report shows it
    import torch

    src = torch.ones(bytes, dtype=torch.uint8, device=dev)
    dst = torch.empty_like(src)
    return Timed(lambda: dst.copy_(src))


LAUNCH = Workload("launch_sync", None, {"numel": [1]}, _launch_sync,
                  doc="one tiny op (on cuda: one kernel launch + its synchronisation)")
COPY = Workload("copy", None, {"bytes": COPY_BYTES}, _copy,
                doc="a same-device copy of the bytes (the bandwidth floor)",
                cuda_params={"bytes": CUDA_COPY_BYTES})
WORKLOADS = [LAUNCH, COPY]


def copy_seconds(points, device: str, nbytes: int) -> float | None:
    """Seconds to copy ``nbytes`` on ``device``, from this run's copy yardsticks."""
    if nbytes <= 0:
        return 0.0
    measured = [(params["bytes"], points.median("copy", None, device, **params))
                for params in COPY.points(device)]
    measured = [(size, t) for size, t in measured if t is not None]
    if not measured:
        return None
    size, seconds = next(((s, t) for s, t in measured if s >= nbytes), measured[-1])
    return seconds * nbytes / size


def seconds(points, device: str, floor: Floor) -> float | None:
    """The floor's seconds on ``device`` in this run, or None where a yardstick is missing."""
    launch = points.median("launch_sync", None, device, numel=1)
    copy = copy_seconds(points, device, floor.bytes)
    if launch is None or copy is None:
        return None
    return floor.launches * launch + copy


def of(workload: Workload, params: dict) -> Floor:
    return (workload.floor or one_launch)(params)
