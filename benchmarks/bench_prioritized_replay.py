"""Prioritized replay with the in-buffer maximum (``max_priority_within_buffer=True``):
``ReplayBuffer(LazyTensorStorage(capacity), sampler=PrioritizedSampler(...))`` with TorchRL's
C++ trees or the pure-torch reference, at capacities 1e3 .. 1e6.

- ``time_extend_over_max``: extend one item into the slot that holds the maximum (setup puts
  it there, untimed). TorchRL rescans every slot here (O(capacity)); the target for the
  reference is time(1e6) / time(1e3) <= 2.
- ``time_sample_256`` / ``time_update_256``: ``rb.sample(256)``, ``rb.update_priority`` of 256
  distinct random indices (target: within 2x of TorchRL's C++ trees).
- ``track_sampling_tv``: total-variation distance between 2**16 draws and the exact law
  ``q_i / sum q``, over 64 equal bins of the index range. Sampling noise alone gives about
  0.5 * sum_b sqrt(2 p_b / (pi n)) ~= 0.012; a biased sampler shows above it.

Buffers are built once per process and parameter point (filling 1e6 items takes ~1 s).
``python -m benchmarks.bench_prioritized_replay`` prints the closing-note table: every point of
both implementations measured in one run, interleaved (median of rounds), through the replay
buffer and on the sampler alone.
"""

from __future__ import annotations

import itertools

from benchmarks.common import DEVICES, IMPLEMENTATIONS, SEED, require, synchronize

CAPACITIES = [1_000, 10_000, 100_000, 1_000_000]
ALPHA, BETA, BATCH = 0.6, 0.4, 256
_BUFFERS: dict = {}
_BUMPS = itertools.count(1)  # ever larger maxima, however many instances asv makes


def _raw_priorities(capacity: int):
    import torch

    g = torch.Generator().manual_seed(SEED)
    return torch.rand(capacity, generator=g, dtype=torch.float64).mul_(10).add_(0.01).float()


def buffer(implementation: str, device, capacity: int, purpose: str = "ops"):
    """A full buffer whose slot i holds priority ``_raw_priorities(capacity)[i]``."""
    key = (implementation, str(device), capacity, purpose)
    if key not in _BUFFERS:
        import torch
        from torchrl.data import LazyTensorStorage, ReplayBuffer

        if implementation == "reference":
            from impls import PrioritizedSampler

            sampler = PrioritizedSampler(capacity, ALPHA, BETA, max_priority_within_buffer=True,
                                         device=device)
        else:
            from torchrl.data import PrioritizedSampler

            sampler = PrioritizedSampler(capacity, ALPHA, BETA, max_priority_within_buffer=True)
        rb = ReplayBuffer(storage=LazyTensorStorage(capacity, device=device), sampler=sampler)
        rb.extend(torch.arange(capacity, dtype=torch.float32, device=device))
        rb.update_priority(torch.arange(capacity), _raw_priorities(capacity))
        rb.set_rng(torch.Generator(device=device).manual_seed(SEED))
        _BUFFERS[key] = rb
    return _BUFFERS[key]


class ExtendOverMax:
    params = [IMPLEMENTATIONS, DEVICES, CAPACITIES]
    param_names = ["implementation", "device", "capacity"]
    number = 1  # setup must put the maximum under the cursor before every call
    repeat = (10, 100, 20.0)
    warmup_time = 0.0

    def setup(self, implementation, device, capacity):
        self.device = require(implementation, device)
        import torch

        self.rb = buffer(implementation, self.device, capacity)
        cursor = int(self.rb._writer._cursor)
        # larger than anything stored: the slot about to be overwritten holds the maximum
        self.rb.update_priority(torch.tensor([cursor]), torch.tensor([1000.0 + next(_BUMPS)]))
        self.item = torch.zeros(1, device=self.device)

    def time_extend_over_max(self, implementation, device, capacity):
        self.rb.extend(self.item)
        synchronize(self.device)


class SampleUpdate:
    params = [IMPLEMENTATIONS, DEVICES, CAPACITIES]
    param_names = ["implementation", "device", "capacity"]

    def setup(self, implementation, device, capacity):
        self.device = require(implementation, device)
        import torch

        self.rb = buffer(implementation, self.device, capacity, purpose="sample-update")
        g = torch.Generator().manual_seed(SEED + 1)
        self.index = torch.randperm(capacity, generator=g)[:BATCH]
        self.priority = torch.rand(BATCH, generator=g) * 5 + 0.01

    def time_sample_256(self, implementation, device, capacity):
        self.rb.sample(BATCH, return_info=True)
        synchronize(self.device)

    def time_update_256(self, implementation, device, capacity):
        self.rb.update_priority(self.index, self.priority)
        synchronize(self.device)


class SamplingLaw:
    params = [IMPLEMENTATIONS, DEVICES, CAPACITIES]
    param_names = ["implementation", "device", "capacity"]
    DRAWS, CHUNK, BINS = 2**16, 2**12, 64

    def setup(self, implementation, device, capacity):
        self.device = require(implementation, device)
        self.rb = buffer(implementation, self.device, capacity, purpose="law")

    def track_sampling_tv(self, implementation, device, capacity):
        import numpy as np
        import torch

        p = _raw_priorities(capacity).double().numpy()
        q = (p + 1e-8) ** ALPHA
        edges = np.linspace(0, capacity, self.BINS + 1).astype(np.int64)
        exact = np.add.reduceat(q, edges[:-1]) / q.sum()
        counts = np.zeros(self.BINS)
        self.rb.set_rng(torch.Generator(device=self.device).manual_seed(SEED))
        for _ in range(self.DRAWS // self.CHUNK):
            index = self.rb.sample(self.CHUNK, return_info=True)[1]["index"]
            index = torch.as_tensor(index).cpu().numpy()
            counts += np.bincount(np.searchsorted(edges, index, side="right") - 1,
                                  minlength=self.BINS)[: self.BINS]
        return float(0.5 * np.abs(counts / counts.sum() - exact).sum())

    track_sampling_tv.unit = "TV distance"


def _mean_seconds(what: str, bench: SampleUpdate, calls: int) -> float:
    import time

    rb, index, priority = bench.rb, bench.index, bench.priority
    target, _, method = what.partition(".")
    f = getattr(rb if target == "rb" else rb.sampler, method.split("(")[0])
    args = {"sample": (BATCH,) if target == "rb" else (rb._storage, BATCH),
            "update_priority": (index, priority)}[method.split("(")[0]]
    t0 = time.perf_counter()
    for _ in range(calls):
        f(*args)
    return (time.perf_counter() - t0) / calls


def closing_note(rounds: int = 40) -> None:
    """Median times (ms) of every point, both implementations interleaved in one process."""
    import statistics
    import time

    timed: dict = {}
    for capacity in CAPACITIES:
        for impl in IMPLEMENTATIONS:
            timed[("extend over max", impl, capacity)] = []
    calls = ("rb.sample(256)", "rb.update_priority(256)",
             "sampler.sample(256)", "sampler.update_priority(256)")
    for what in calls:
        for impl in IMPLEMENTATIONS:
            timed[(what, impl, CAPACITIES[-1])] = []
    for _ in range(rounds):
        for (what, impl, capacity), samples in timed.items():
            if what == "extend over max":
                bench = ExtendOverMax()
                for _ in range(5):
                    bench.setup(impl, "cpu", capacity)
                    t0 = time.perf_counter()
                    bench.time_extend_over_max(impl, "cpu", capacity)
                    samples.append(time.perf_counter() - t0)
                continue
            bench = SampleUpdate()
            bench.setup(impl, "cpu", capacity)
            samples.append(_mean_seconds(what, bench, 50))
    ms = {key: 1e3 * statistics.median(v) for key, v in timed.items()}
    print("| operation | capacity | reference (ms) | torchrl (ms) | reference / torchrl |")
    print("|---|---|---|---|---|")
    for what, impl, capacity in timed:
        if impl != "reference":
            continue
        ref, trl = ms[(what, "reference", capacity)], ms[(what, "torchrl", capacity)]
        print(f"| {what} | {capacity:.0e} | {ref:.3f} | {trl:.3f} | {ref / trl:.2f} |")
    for impl in IMPLEMENTATIONS:
        ext = [ms[("extend over max", impl, c)] for c in CAPACITIES]
        print(f"{impl}: extend over max, time(1e6) / time(1e3) = {ext[-1] / ext[0]:.2f}")


if __name__ == "__main__":
    closing_note()
