"""Aggregate log-prob of a composite action (asv).

The seed configuration of §2: heads ``action1: Categorical(8)`` and ``action2: Categorical(1)``
under the nested ``"action"`` key, a batch of ``size`` float32 logits. ``time_log_prob`` is what
a PPO update does with the composite distribution: build it from the parameter tensordict and
take the aggregate log-prob of the stored sample (``set_composite_lp_aggregate(True)``);
``reference`` is ``impls.CompositeDistribution``, ``torchrl`` is tensordict's
``CompositeDistribution`` (the one TorchRL uses). ``time_raw_log_softmax_gather`` is the floor
both are compared against: ``sum_h log_softmax(logits_h).gather(action_h)`` on the same tensors.

Run side by side in one process with ``python -m benchmarks.bench_composite_log_prob``.
"""

from __future__ import annotations

from benchmarks.common import DEVICES, IMPLEMENTATIONS, SEED, require, synchronize

SIZES = [100, 1_000, 10_000, 100_000]
HEADS = {"action1": 8, "action2": 1}


def _composite_class(implementation: str):
    if implementation == "reference":
        from impls import CompositeDistribution
    else:
        from tensordict.nn import CompositeDistribution
    return CompositeDistribution


class CompositeLogProb:
    params = [IMPLEMENTATIONS, DEVICES, SIZES]
    param_names = ["implementation", "device", "size"]

    def setup(self, implementation, device, size):
        device = require(implementation, device)
        import torch
        from tensordict import TensorDict
        from tensordict.nn import set_composite_lp_aggregate

        self.device = device
        try:
            self.cls = _composite_class(implementation)
        except ImportError as exc:  # the reference subclasses tensordict's / TorchRL's classes
            raise NotImplementedError(f"{implementation} does not import: {exc}") from None
        g = torch.Generator().manual_seed(SEED)
        logits = {h: torch.randn(size, n, generator=g).to(device) for h, n in HEADS.items()}
        actions = {h: torch.randint(n, (size,), generator=g).to(device) for h, n in HEADS.items()}
        self.logits, self.actions = logits, actions
        self.params = TensorDict({h: {"logits": x} for h, x in logits.items()}, [size], device=device)
        self.sample = TensorDict({"action": actions}, [size], device=device)
        self.distribution_map = {h: torch.distributions.Categorical for h in HEADS}
        self.name_map = {h: ("action", h) for h in HEADS}
        self.aggregate = set_composite_lp_aggregate(True)
        self.torch = torch

    def _log_prob(self):
        with self.aggregate:
            dist = self.cls(self.params, distribution_map=self.distribution_map, name_map=self.name_map)
            return dist.log_prob(self.sample)

    def time_log_prob(self, implementation, device, size):
        self._log_prob()
        synchronize(self.device)

    def time_raw_log_softmax_gather(self, implementation, device, size):
        torch = self.torch
        total = 0.0
        for h, x in self.logits.items():
            total = total + torch.log_softmax(x, -1).gather(-1, self.actions[h].unsqueeze(-1)).squeeze(-1)
        synchronize(self.device)
        return total

    def track_max_abs_error_vs_raw(self, implementation, device, size):
        """|aggregate - raw gather sum|, max over the batch (accuracy, not time)."""
        raw = self.time_raw_log_softmax_gather(implementation, device, size)
        got = self._log_prob()
        return float((got.reshape(raw.shape) - raw).abs().max()) if got.numel() == raw.numel() else float("inf")

    track_max_abs_error_vs_raw.unit = "nats"


def _side_by_side(repeat: int = 30, budget: float = 0.02) -> None:
    """Best-of-``repeat`` time per call of every implementation and of the raw floor, in one
    process. Measurements are interleaved (raw, reference, torchrl, raw, ...) so that a busy
    machine slows them alike, and the minimum is kept (contention only ever adds time)."""
    import timeit

    print(f"{'size':>8} {'raw gather':>12} " + " ".join(f"{i:>12} {'ratio':>6}" for i in IMPLEMENTATIONS))
    for size in SIZES:
        calls = {}
        for implementation in IMPLEMENTATIONS:
            bench = CompositeLogProb()
            try:
                bench.setup(implementation, "cpu", size)
            except NotImplementedError:
                continue
            calls.setdefault("raw", lambda b=bench, n=size: b.time_raw_log_softmax_gather(None, "cpu", n))
            calls[implementation] = lambda b=bench, n=size: b.time_log_prob(None, "cpu", n)
        numbers = {}
        for name, call in calls.items():
            call()  # warm-up
            numbers[name] = max(1, int(budget / max(timeit.timeit(call, number=1), 1e-7)))
        times = {name: [] for name in calls}
        for _ in range(repeat):
            for name, call in calls.items():
                times[name].append(timeit.timeit(call, number=numbers[name]) / numbers[name])
        med = {name: min(v) for name, v in times.items()}
        cells = [f"{med[i] * 1e6:10.1f}us {med[i] / med['raw']:6.2f}" if i in med else f"{'n/a':>12} {'':>6}"
                 for i in IMPLEMENTATIONS]
        print(f"{size:>8} {med['raw'] * 1e6:10.1f}us " + " ".join(cells))


if __name__ == "__main__":
    _side_by_side()
