"""Prioritized replay through cpprb's public ``PrioritizedReplayBuffer``.

Calls, all public: ``PrioritizedReplayBuffer(size, {"id": ...}, alpha=, eps=)``, ``add(id=...)``
(no ``priorities``: the buffer's default applies, "the maximum priorities until then"),
``update_priorities(indexes, priorities)``, ``sample(n, beta)`` (``indexes``, ``weights``, ``id``),
``get_max_priority()`` (documented as "Max priority of stored priorities") and
``get_stored_size()``. cpprb's maximum is kept by design as a running maximum that never comes
down (``ReplayBuffer.hh``, ``CppPrioritizedSampler::store_max``): the specs report what it does.

Two things cpprb does not expose, and how they are handled:

- **Its sum tree** lives in C++ with no Python accessor. ``tree_values`` recovers it from the
  public ``sample``: at ``beta = 1`` cpprb's documented weight of index ``i`` is
  ``q_min / q_i`` (normalised by the minimum priority), so one stratified draw that reaches every
  stored index gives every ``q_i / q_min``. The common factor is fixed by one *anchor*: the item
  whose priority this adapter set last (still stored), taken as ``(p + eps) ** alpha`` (cpprb's
  docstring: "pre-calculated priorities (p_i + eps)^alpha"); with no such item, the newest item
  written with the default, taken as ``(get_max_priority() + eps) ** alpha`` read just before
  it was written. Everything else (the default given to new items, whether it is transformed
  once) is measured relative to that anchor.
- **Its random generator** (a ``std::mt19937`` seeded from ``std::random_device``) cannot be
  seeded: ``sample`` ignores the spec's generator. The draw is stratified (one uniform per
  equal-mass segment), so the count of each index is within two of ``n P(i)`` whatever the
  seed (one for the strata, one for float32 rounding): every sampling spec reaches the same
  verdict on every run (``tests/libraries/test_cpprb.py`` checks this), though the indices
  themselves differ from run to run.

Not available in cpprb (``NotImplementedError`` with the reason): an upper bound on the default
priority, changing ``alpha`` of a filled buffer, and a checkpoint of the priorities
(``save_transitions`` stores transitions only).
"""

from __future__ import annotations

import numpy as np

from conformance.implementations.introspect import quiet
from conformance.interface import PrioritizedDraw

SOURCE = ("https://github.com/ymd-h/cpprb/blob/64f255db12189612aef3e62f2633dd21f5bf8608/"
          "src/cpprb/ReplayBuffer.hh#L418-L476")
DOCS = "https://ymd_h.gitlab.io/cpprb/features/per/"
PROBE_DRAWS = 1 << 14  # strata per probe: reaches every index holding >= 1/16384 of the mass
PROBE_TRIES = 64


class PrioritizedReplayArea:
    devices = ("cpu",)  # conformance.interface: the devices this area runs on
    devices_why = ('cpprb keeps its buffer and segment trees in numpy arrays in host memory: there '
                   'is no torch device to put them on')
    initial_priority = 1.0  # CppPrioritizedSampler's default_max_priority
    #: for failure messages (conformance/test_prioritized_replay.py, ``Run.explain``): what
    #: cpprb documents as its own design, quoted where the specs diagnose that design
    documented_design = {
        "historical_max": (
            "add() without priorities gives new items 'the maximum priorities until then' (a "
            "running maximum that never comes down, CppPrioritizedSampler::store_max)", DOCS),
    }

    def __init__(self, buffer_cls):
        self.buffer_cls = buffer_cls

    def buffer(self, *, capacity, alpha, beta, eps, upper_priority=None, row_width=1,
               device=None):  # device: always the CPU, the only one declared
        if upper_priority is not None:
            raise NotImplementedError(
                "cpprb's PrioritizedReplayBuffer has no upper bound on the default priority "
                f"({DOCS})")
        return _Buffer(self.buffer_cls, capacity, alpha, beta, eps, row_width)

    def slice_buffer(self, *, capacity, alpha, beta, eps, slice_len, traj_len, device=None):
        raise NotImplementedError(
            "cpprb's PrioritizedReplayBuffer samples single transitions; cpprb has no sampler of "
            "trajectory slices (PrioritizedSliceSampler-like) to checkpoint")


class _Buffer:
    def __init__(self, buffer_cls, capacity, alpha, beta, eps, row_width):
        # A [rows, row_width] storage written a row at a time is, in flat row-major indices,
        # a ring of `capacity` items written row_width at a time: cpprb's storage is that ring.
        self.rb = buffer_cls(capacity, {"id": {"dtype": np.int64}}, alpha=alpha, eps=eps)
        self.capacity, self.alpha, self.beta, self.eps = capacity, alpha, beta, eps
        self.row_width = row_width
        self.next_item = 0
        self.anchor: tuple[int, float] | None = None  # (index, raw priority) for tree_values
        self.default_writes: dict[int, float] = {}  # index -> default read before its write

    def __len__(self) -> int:
        return int(self.rb.get_stored_size())

    def extend(self, rows: int) -> np.ndarray:
        n = rows * self.row_width
        ids = np.arange(self.next_item, self.next_item + n, dtype=np.int64)
        self.next_item += n
        default = float(self.rb.get_max_priority())
        first = self.rb.add(id=ids)
        index = (int(first) + np.arange(n)) % self.capacity
        for i in index.tolist():
            self.default_writes[i] = default
            if self.anchor is not None and self.anchor[0] == i:
                self.anchor = None
        return index

    def update_priority(self, index, priority) -> None:
        index = np.asarray(index, dtype=np.int64)
        priority = np.asarray(priority, dtype=np.float32)
        self.rb.update_priorities(index, priority)
        for i in index.tolist():
            self.default_writes.pop(i, None)
        self.anchor = (int(index[-1]), float(priority[-1]))

    def sample(self, batch_size: int, generator) -> PrioritizedDraw:
        # cpprb's generator cannot be seeded (see the module docstring): `generator` is unused.
        with quiet():
            out = self.rb.sample(batch_size, self.beta)
        return PrioritizedDraw(
            index=np.asarray(out["indexes"], dtype=np.int64).reshape(-1),
            item=np.asarray(out["id"], dtype=np.int64).reshape(-1),
            weight=np.asarray(out["weights"], dtype=np.float64).reshape(-1),
        )

    def tree_values(self) -> np.ndarray:
        n = len(self)
        if n == 0:
            return np.zeros(0)
        ratio = np.full(n, np.nan)  # q_i / q_min, from beta = 1 weights
        for _ in range(PROBE_TRIES):
            out = self.rb.sample(PROBE_DRAWS, 1.0)
            idx = np.asarray(out["indexes"], dtype=np.int64)
            ratio[idx] = 1.0 / np.asarray(out["weights"], dtype=np.float64)
            if not np.isnan(ratio).any():
                break
        else:
            missing = np.flatnonzero(np.isnan(ratio)).tolist()
            raise RuntimeError(
                f"cpprb tree values: indices {missing} never drawn in {PROBE_TRIES} x "
                f"{PROBE_DRAWS} stratified draws (their mass is below 1/{PROBE_DRAWS})")
        if self.anchor is not None:
            index, raw = self.anchor
        else:
            index = max(self.default_writes)  # any default-written item will do; pick one
            raw = self.default_writes[index]
        scale = (np.float64(np.float32(raw)) + self.eps) ** self.alpha / ratio[index]
        return ratio * scale

    def default_priority(self) -> float:
        return float(self.rb.get_max_priority())

    def set_alpha(self, alpha: float) -> None:
        raise NotImplementedError(
            "cpprb fixes alpha when the buffer is built (no setter on PrioritizedReplayBuffer)")

    def state_dict(self):
        raise NotImplementedError(
            "cpprb checkpoints transitions only (save_transitions / load_transitions): the "
            "priorities and the tracked maximum are not saved")

    def load_state_dict(self, state) -> None:
        raise NotImplementedError("cpprb has no checkpoint of priorities (see state_dict)")


def make(adapter):
    from cpprb import PrioritizedReplayBuffer

    return PrioritizedReplayArea(PrioritizedReplayBuffer)
