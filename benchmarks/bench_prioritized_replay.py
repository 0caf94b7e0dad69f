"""§5 Prioritized replay with the in-buffer maximum, through the interface's buffer
(``area.buffer(capacity=..., alpha=0.6, beta=0.4, eps=1e-8)``), full, at capacities 1e3 .. 1e6.

- ``extend_over_max``: ``buffer.extend(1)`` into the slot that holds the maximum (put there,
  untimed, before every call). TorchRL 0.14.1 rescans every slot here (O(capacity)); the target
  is time(1e6) / time(1e3) <= 2.
- ``sample_256`` / ``update_256`` / ``extend_256``: ``buffer.sample(256, generator)``;
  ``buffer.update_priority`` of 256 distinct seeded indices; ``buffer.extend(256)`` (the
  sampler's ``mark_update``) into a full buffer. Target (issue #14, "no cost to swapping"): at
  most TorchRL's C++ trees (ratio <= 1.0) at every capacity from 4e3 to 1e6.

The interface's calls convert indices to numpy (a few microseconds, the same for every
implementation), and its buffers live on the CPU: the cuda points are n/a. A full buffer is built
once per process and point (filling 1e6 items takes about a second).
"""

from __future__ import annotations

import itertools

from benchtools.registry import SEED
from benchtools.targets import Target, ratio
from benchtools.workload import Timed, Workload, asv_class, asv_versus_baseline

CAPACITIES = [1_000, 4_000, 10_000, 100_000, 1_000_000]
SWAP_CAPACITIES = CAPACITIES[1:]  # issue #14: 4e3 .. 1e6
ALPHA, BETA, EPS, BATCH = 0.6, 0.4, 1e-8, 256
_BUFFERS: dict = {}
_BUMPS = itertools.count(1)  # ever larger maxima, however many times a point is set up


def _raw_priorities(capacity: int):
    import numpy as np

    return np.random.default_rng(SEED).uniform(0.01, 10.01, capacity)


def _full_buffer(area, dev, capacity: int, purpose: str):
    """A full buffer whose slot i holds priority ``_raw_priorities(capacity)[i]``, and the
    cursor (the slot the next extend writes), kept per purpose: timings never share state."""
    import numpy as np

    if dev.type != "cpu":
        raise NotImplementedError("the interface's replay buffers live on the CPU")
    key = (id(area), capacity, purpose)
    if key not in _BUFFERS:
        buf = area.buffer(capacity=capacity, alpha=ALPHA, beta=BETA, eps=EPS)
        buf.extend(capacity)
        buf.update_priority(np.arange(capacity), _raw_priorities(capacity))
        _BUFFERS[key] = [buf, 0]
    return _BUFFERS[key]


def _extend_over_max(area, dev, *, capacity):
    import numpy as np

    state = _full_buffer(area, dev, capacity, "extend")
    buf = state[0]

    def before():
        # larger than anything stored: the slot about to be overwritten holds the maximum
        buf.update_priority(np.array([state[1]]), np.array([1000.0 + next(_BUMPS)]))

    def call():
        buf.extend(1)
        state[1] = (state[1] + 1) % capacity

    return Timed(call, before)


def _sample(area, dev, *, capacity):
    import torch

    buf = _full_buffer(area, dev, capacity, "sample")[0]
    generator = torch.Generator().manual_seed(SEED)
    return Timed(lambda: buf.sample(BATCH, generator))


def _update(area, dev, *, capacity):
    import numpy as np

    buf = _full_buffer(area, dev, capacity, "update")[0]
    rng = np.random.default_rng(SEED + 1)
    index = rng.permutation(capacity)[:BATCH]
    priority = rng.uniform(0.01, 5.01, BATCH)
    return Timed(lambda: buf.update_priority(index, priority))


def _extend(area, dev, *, capacity):
    state = _full_buffer(area, dev, capacity, "extend_256")

    def call():
        state[0].extend(BATCH)

    return Timed(call)


AREA = "prioritized_replay"
EXTEND = Workload("extend_over_max", AREA, {"capacity": CAPACITIES}, _extend_over_max,
                  doc="extend one item into the slot holding the maximum", fresh_state=True)
SAMPLE = Workload("sample_256", AREA, {"capacity": CAPACITIES}, _sample,
                  doc="sample 256 items with their weights")
UPDATE = Workload("update_256", AREA, {"capacity": CAPACITIES}, _update,
                  doc="update the priorities of 256 distinct items")
EXTEND_BATCH = Workload("extend_256", AREA, {"capacity": CAPACITIES}, _extend,
                        doc="extend 256 items into a full buffer (the sampler's mark_update)")
WORKLOADS = [EXTEND, SAMPLE, UPDATE, EXTEND_BATCH]

ExtendOverMax = asv_class("ExtendOverMax", EXTEND)
Sample256 = asv_class("Sample256", SAMPLE)
Update256 = asv_class("Update256", UPDATE)
Extend256 = asv_class("Extend256", EXTEND_BATCH)
ExtendOverMaxVersusTorchrl = asv_versus_baseline("ExtendOverMaxVersusTorchrl", EXTEND)
Sample256VersusTorchrl = asv_versus_baseline("Sample256VersusTorchrl", SAMPLE)
Update256VersusTorchrl = asv_versus_baseline("Update256VersusTorchrl", UPDATE)
Extend256VersusTorchrl = asv_versus_baseline("Extend256VersusTorchrl", EXTEND_BATCH)


def _growth(points, impl):
    return ratio(points.get("extend_over_max", impl, capacity=CAPACITIES[-1]),
                 points.get("extend_over_max", impl, capacity=CAPACITIES[0]))


def _worst_versus_torchrl(op):
    def measure(points, impl):
        ratios = [ratio(points.get(op, impl, capacity=c),
                        points.get(op, "torchrl", capacity=c)) for c in SWAP_CAPACITIES]
        return None if None in ratios else max(ratios)

    return measure


TARGETS = [
    Target("PER extend over the max slot, {impl}: time(1e6) / time(1e3)", "<= 2", _growth,
           lambda v: v <= 2),
    *(Target(f"PER {op}, {{impl}} / torchrl C++ trees (max over capacities 4e3 .. 1e6)",
             "<= 1.0", _worst_versus_torchrl(op), lambda v: v <= 1.0, versus="torchrl")
      for op in ("sample_256", "update_256", "extend_256")),
]
