"""§5 Prioritized replay with the in-buffer maximum, through the interface's buffer
(``area.buffer(capacity=..., alpha=0.6, beta=0.4, eps=1e-8)``), full, at capacities 1e3 .. 1e6
(and 1e7 for the three swap operations).

- ``extend_over_max``: ``buffer.extend(1)`` into the slot that holds the maximum (put there,
  untimed, before every call). TorchRL 0.14.1 rescans every slot here (O(capacity)); the target
  is time(1e6) / time(1e3) <= 2.
- ``sample_256`` / ``update_256`` / ``extend_256``: ``buffer.sample(256, generator)``;
  ``buffer.update_priority`` of 256 distinct seeded indices; ``buffer.extend(256)`` (the
  sampler's ``mark_update``) into a full buffer. Target (issue #14, "no cost to swapping"): at
  most TorchRL's C++ trees (ratio <= 1.0) at every capacity from 4e3 to 1e6, and (issue #45)
  at 1e7, past the machine's caches.
- ``update_256_sampled``: ``buffer.update_priority`` of the indices of one seeded
  ``buffer.sample(256)``, what a training loop hands back: drawn with replacement by priority,
  so they repeat (many times at 1e3, rarely at 1e7). The same target.

The interface's calls convert indices to numpy (a few microseconds, the same for every
implementation). A cuda point needs a buffer on the device: an implementation whose ``buffer``
takes a ``device`` keyword gets ``device=cuda`` (the CPU points never pass one); the others' cuda
points are n/a. A full buffer is built once per process and point (filling 1e6 items takes
about a second).

On cuda only, ``sample_65536`` / ``update_65536`` at 1e6 (issue #26: the batch a GPU learner
samples), and two targets at 1e6 for ``sample_256`` and ``update_256``: at most TorchRL's CUDA
trees, and within 3x of one kernel launch + synchronisation per tree level (20 levels).
"""

from __future__ import annotations

import itertools

from benchtools.floors import Floor, levels
from benchtools.registry import SEED
from benchtools.targets import Target, ratio
from benchtools.workload import Timed, Workload, asv_class, asv_versus_baseline

CAPACITIES = [1_000, 4_000, 10_000, 100_000, 1_000_000]
#: the swap operations also at 1e7 (issue #45: past one machine's caches; about 3 GB of buffers
#: for the two implementations' three points)
SWAP_GRID = {"capacity": [*CAPACITIES, 10_000_000]}
SWAP_CAPACITIES = SWAP_GRID["capacity"][1:]  # issue #14: 4e3 .. 1e6; issue #45: and 1e7
ALPHA, BETA, EPS, BATCH = 0.6, 0.4, 1e-8, 256
LARGE_BATCH, LARGE_CAPACITY = 65_536, 1_000_000  # cuda only
_BUFFERS: dict = {}
_BUMPS = itertools.count(1)  # ever larger maxima, however many times a point is set up


def _raw_priorities(capacity: int):
    import numpy as np

    return np.random.default_rng(SEED).uniform(0.01, 10.01, capacity)


def _full_buffer(area, dev, capacity: int, purpose: str):
    """A full buffer whose slot i holds priority ``_raw_priorities(capacity)[i]``, and the
    cursor (the slot the next extend writes), kept per purpose: timings never share state."""
    import inspect

    import numpy as np

    on_device = {}
    if dev.type != "cpu":
        if "device" not in inspect.signature(area.buffer).parameters:
            raise NotImplementedError(f"{type(area).__name__}.buffer takes no device: its "
                                      "buffers live on the CPU")
        on_device = {"device": dev}
    key = (id(area), dev.type, capacity, purpose)
    if key not in _BUFFERS:
        buf = area.buffer(capacity=capacity, alpha=ALPHA, beta=BETA, eps=EPS, **on_device)
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


def _sample(area, dev, *, capacity, batch=BATCH):
    import torch

    buf = _full_buffer(area, dev, capacity, f"sample_{batch}")[0]
    generator = torch.Generator(device=dev).manual_seed(SEED)  # where the buffer draws
    return Timed(lambda: buf.sample(batch, generator))


def _update(area, dev, *, capacity, batch=BATCH):
    import numpy as np

    buf = _full_buffer(area, dev, capacity, f"update_{batch}")[0]
    rng = np.random.default_rng(SEED + 1)
    index = rng.permutation(capacity)[:batch]
    priority = rng.uniform(0.01, 5.01, batch)
    return Timed(lambda: buf.update_priority(index, priority))


def _update_sampled(area, dev, *, capacity):
    import numpy as np
    import torch

    buf = _full_buffer(area, dev, capacity, f"update_{BATCH}")[0]  # update_256's buffer
    index = np.asarray(buf.sample(BATCH, torch.Generator(device=dev).manual_seed(SEED)).index)
    priority = np.random.default_rng(SEED + 2).uniform(0.01, 5.01, BATCH)
    return Timed(lambda: buf.update_priority(index, priority))


def _sample_large(area, dev, *, capacity):
    return _sample(area, dev, capacity=capacity, batch=LARGE_BATCH)


def _update_large(area, dev, *, capacity):
    return _update(area, dev, capacity=capacity, batch=LARGE_BATCH)


def _extend(area, dev, *, capacity):
    state = _full_buffer(area, dev, capacity, "extend_256")

    def call():
        state[0].extend(BATCH)

    return Timed(call)


def _walk(batch):
    """A tree walk: one launch per level; the batch's indices and priorities (8 bytes each)."""
    return lambda p: Floor(levels(p["capacity"]), 2 * 8 * batch)


AREA = "prioritized_replay"
# asv's grids: the growth target's two ends for extend over the max; two capacities of the swap
# target's range for the 256-item calls (a 1e6 buffer is filled in every point's set-up)
ASV_GROWTH = {"capacity": [CAPACITIES[0], CAPACITIES[-1]]}
ASV_CAPACITIES = {"capacity": [4_000, 100_000]}
EXTEND = Workload("extend_over_max", AREA, {"capacity": CAPACITIES}, _extend_over_max,
                  doc="extend one item into the slot holding the maximum", fresh_state=True,
                  floor=_walk(1), asv_params=ASV_GROWTH)
SAMPLE = Workload("sample_256", AREA, SWAP_GRID, _sample,
                  doc="sample 256 items with their weights", floor=_walk(BATCH), asv_params=ASV_CAPACITIES)
UPDATE = Workload("update_256", AREA, SWAP_GRID, _update,
                  doc="update the priorities of 256 distinct items", floor=_walk(BATCH), asv_params=ASV_CAPACITIES)
UPDATE_SAMPLED = Workload("update_256_sampled", AREA, SWAP_GRID, _update_sampled,
                          doc="update the priorities of a sample of 256 items (repeats included)",
                          floor=_walk(BATCH), asv_params=ASV_CAPACITIES)
EXTEND_BATCH = Workload("extend_256", AREA, SWAP_GRID, _extend,
                        doc="extend 256 items into a full buffer (the sampler's mark_update)",
                        floor=_walk(BATCH), asv_params=ASV_CAPACITIES)
SAMPLE_LARGE = Workload("sample_65536", AREA, {"capacity": []}, _sample_large,
                        doc="sample 65 536 items with their weights (cuda only)",
                        cuda_params={"capacity": [LARGE_CAPACITY]}, floor=_walk(LARGE_BATCH))
UPDATE_LARGE = Workload("update_65536", AREA, {"capacity": []}, _update_large,
                        doc="update the priorities of 65 536 distinct items (cuda only)",
                        cuda_params={"capacity": [LARGE_CAPACITY]}, floor=_walk(LARGE_BATCH))
WORKLOADS = [EXTEND, SAMPLE, UPDATE, UPDATE_SAMPLED, EXTEND_BATCH, SAMPLE_LARGE,
             UPDATE_LARGE]

ExtendOverMax = asv_class("ExtendOverMax", EXTEND)
Sample256 = asv_class("Sample256", SAMPLE)
Update256 = asv_class("Update256", UPDATE)
Update256Sampled = asv_class("Update256Sampled", UPDATE_SAMPLED)
Extend256 = asv_class("Extend256", EXTEND_BATCH)
ExtendOverMaxVersusTorchrl = asv_versus_baseline("ExtendOverMaxVersusTorchrl", EXTEND)
Sample256VersusTorchrl = asv_versus_baseline("Sample256VersusTorchrl", SAMPLE)
Update256VersusTorchrl = asv_versus_baseline("Update256VersusTorchrl", UPDATE)
Update256SampledVersusTorchrl = asv_versus_baseline("Update256SampledVersusTorchrl",
                                                    UPDATE_SAMPLED)
Extend256VersusTorchrl = asv_versus_baseline("Extend256VersusTorchrl", EXTEND_BATCH)
Sample65536 = asv_class("Sample65536", SAMPLE_LARGE)
Update65536 = asv_class("Update65536", UPDATE_LARGE)
Sample65536VersusTorchrl = asv_versus_baseline("Sample65536VersusTorchrl", SAMPLE_LARGE)
Update65536VersusTorchrl = asv_versus_baseline("Update65536VersusTorchrl", UPDATE_LARGE)


def _growth(points, impl):
    return ratio(points.get("extend_over_max", impl, capacity=CAPACITIES[-1]),
                 points.get("extend_over_max", impl, capacity=CAPACITIES[0]))


def _worst_versus_torchrl(op):
    def measure(points, impl):
        ratios = [ratio(points.get(op, impl, capacity=c),
                        points.get(op, "torchrl", capacity=c)) for c in SWAP_CAPACITIES]
        return None if None in ratios else max(ratios)

    return measure


def _versus_torchrl_at_1e6(op):
    return lambda points, impl: ratio(points.get(op, impl, capacity=LARGE_CAPACITY),
                                      points.get(op, "torchrl", capacity=LARGE_CAPACITY))


def _over_launch_per_level(op):
    """The point at 1e6 over one launch+sync per level of its tree (ceil(log2(1e6)) = 20)."""
    def measure(points, impl):
        time = points.median(op, impl, capacity=LARGE_CAPACITY)
        launch = points.median("launch_sync", None, numel=1)
        return None if time is None or not launch else time / (levels(LARGE_CAPACITY) * launch)

    return measure


TARGETS = [
    # two capacities are two groups (a full buffer of each): a ratio of medians by design
    Target("PER extend over the max slot, {impl}: time(1e6) / time(1e3)", "<= 2", _growth,
           lambda v: v <= 2, paired=False),
    *(Target(f"PER {op}, {{impl}} / torchrl C++ trees (max over capacities 4e3 .. 1e7)",
             "<= 1.0", _worst_versus_torchrl(op), lambda v: v <= 1.0, versus="torchrl")
      for op in ("sample_256", "update_256", "update_256_sampled", "extend_256")),
    *(t for op in ("sample_256", "update_256") for t in (
        Target(f"PER {op} at 1e6 on cuda, {{impl}} / torchrl CUDA trees", "<= 1.0",
               _versus_torchrl_at_1e6(op), lambda v: v <= 1.0, versus="torchrl",
               device="cuda"),
        Target(f"PER {op} at 1e6 on cuda, {{impl}} / (one launch+sync x "
               f"{levels(LARGE_CAPACITY)} tree levels)", "<= 3", _over_launch_per_level(op),
               lambda v: v <= 3, device="cuda", paired=False),
    )),
]
