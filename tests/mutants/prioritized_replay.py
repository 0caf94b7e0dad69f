"""Prioritized replay done wrong, the ways upstream libraries did it.

Each mutant is a complete implementation of the prioritized-replay area of the interface (a
small O(N) numpy ring buffer, no other area: those specs are "not applicable"), right in every
respect but one historical bug:

- ``HISTORICAL_MAX``: the default priority is the largest priority ever seen (Dopamine,
  Baselines, torchrl's default ``max_priority_within_buffer=False``; pytorch/rl#2210);
- ``DOUBLE_TRANSFORM``: new items' defaults reach the tree as ((p + eps)^alpha + eps)^alpha
  (torchrl 0.5 - 0.13.2; pytorch/rl#3925);
- ``FALLBACK_AFTER_OVERWRITE``: overwriting the slot of the tracked maximum erases it, and the
  default falls back to 1.0 until an update sets a new one (torchrl 0.5 - 0.14, pytorch/rl#2215);
- ``LAST_INDEX_NEVER_SAMPLED``: the total mass stops before the last stored item
  (openai/baselines#171);
- ``UNNORMALISED_WEIGHTS``: importance weights (N P(i))^-beta, not divided by their maximum;
- ``BATCH_MAX_WEIGHTS``: importance weights divided by the largest weight of the batch, not of
  the buffer (Tianshou's ``PrioritizedReplayBuffer``, pfrl).

``NO_EXTENSION`` is torchrl with its C++ segment trees missing, as after an ABI mismatch.
"""

from __future__ import annotations

import copy

import numpy as np
import torch

from conformance.interface import PrioritizedDraw
from tests.mutants import implementation


class _Buffer:
    def __init__(self, bug, *, capacity, alpha, beta, eps, upper_priority, row_width):
        self.bug, self.alpha, self.beta, self.eps = bug, alpha, beta, eps
        self.upper, self.width = upper_priority, row_width
        self.rows = capacity // row_width
        self.raw = np.full(capacity, np.nan)  # raw priority per flat slot
        self.q = np.zeros(capacity)  # what the "tree" holds
        self.item = np.full(capacity, -1)
        self.cursor = self.next_item = 0
        self.historical = None
        self.tracked = None  # (value, slot) for the fallback bug

    def __len__(self):
        return int(np.sum(~np.isnan(self.raw)))

    def _tf(self, p):
        return (np.asarray(p, dtype=np.float64) + self.eps) ** self.alpha

    def _max(self, keep):
        return float(self.raw[keep].max()) if keep.any() else None

    def _default(self, evicting=()):
        if self.bug == "historical":
            m = self.historical
        elif self.bug == "fallback":
            m = None if self.tracked is None else self.tracked[0]
        else:
            keep = ~np.isnan(self.raw)
            keep[np.asarray(evicting, dtype=np.int64)] = False
            m = self._max(keep)
        d = 1.0 if m is None else m
        return d if self.upper is None else min(d, self.upper)

    def _seen(self, p):
        self.historical = p if self.historical is None else max(self.historical, p)

    def extend(self, rows):
        r = (self.cursor + np.arange(rows)) % self.rows
        slots = (r[:, None] * self.width + np.arange(self.width)).ravel()
        if self.bug == "fallback" and self.tracked is not None and self.tracked[1] in slots:
            self.tracked = None
        d = self._default(evicting=slots)
        self.raw[slots] = d
        q = self._tf(d)
        self.q[slots] = self._tf(q) if self.bug == "double" else q
        self.item[slots] = np.arange(self.next_item, self.next_item + len(slots))
        self.next_item += len(slots)
        self.cursor = (self.cursor + rows) % self.rows
        self._seen(d)
        if self.bug == "fallback" and self.tracked is None:
            self.tracked = (d, int(slots[0]))
        return slots

    def update_priority(self, index, priority):
        index = np.asarray(index, dtype=np.int64)
        priority = np.asarray(priority, dtype=np.float64)
        self.raw[index] = priority
        self.q[index] = self._tf(priority)
        self._seen(float(priority.max()))
        if self.bug == "fallback":
            top = int(np.argmax(priority))
            if self.tracked is None or priority[top] > self.tracked[0]:
                self.tracked = (float(priority[top]), int(index[top]))
            elif self.tracked[1] in index:  # the tracked maximum was lowered: recompute
                slot = int(np.nanargmax(self.raw))
                self.tracked = (float(self.raw[slot]), slot)

    def sample(self, batch_size, generator):
        n = len(self)
        q = self.q[:n]
        if not q.sum() > 0:  # eps = 0 and every priority 0: nothing can be drawn
            raise RuntimeError("non-positive p_sum")
        if self.bug == "off-by-one":
            q = q[: n - 1]  # the total stops one item short
        u = torch.rand(batch_size, dtype=torch.float64, generator=generator).numpy()
        index = np.searchsorted(np.cumsum(q), u * q.sum(), side="right")
        index = np.minimum(index, len(q) - 1)
        p = self.q[index] / self.q[:n].sum()
        if self.bug == "unnormalised":
            weight = (n * p) ** (-self.beta)
        elif self.bug == "batch-max":  # Tianshou: weight / weight.max() over the batch
            weight = self.q[index] ** (-self.beta)
            weight = weight / weight.max()
        else:
            weight = (self.q[index] / self.q[:n].min()) ** (-self.beta)
        return PrioritizedDraw(index=index, item=self.item[index].copy(), weight=weight)

    def tree_values(self):
        return self.q[: len(self)].copy()

    def default_priority(self):
        return self._default()

    def set_alpha(self, alpha):
        self.alpha = alpha
        stored = ~np.isnan(self.raw)
        self.q[stored] = self._tf(self.raw[stored])

    def state_dict(self):
        return copy.deepcopy(self.__dict__)

    def load_state_dict(self, state):
        self.__dict__.update(copy.deepcopy(state))


class _Area:
    initial_priority = 1.0

    def __init__(self, bug, documented_design=None):
        self.bug = bug
        if documented_design is not None:
            self.documented_design = documented_design

    def buffer(self, *, capacity, alpha, beta, eps, upper_priority=None, row_width=1):
        for name, value in (("alpha", alpha), ("beta", beta)):
            if value < 0:
                raise ValueError(f"{name} must be >= 0, got {name}={value}")
        return _Buffer(self.bug, capacity=capacity, alpha=alpha, beta=beta, eps=eps,
                       upper_priority=upper_priority, row_width=row_width)


def _impl(name, bug):
    return implementation(name, prioritized_replay=_Area(bug))


CORRECT = _impl("correct", None)  # the harness itself, to show that only the bug fails
HISTORICAL_MAX = _impl("historical-max", "historical")
DOUBLE_TRANSFORM = _impl("double-transform", "double")
FALLBACK_AFTER_OVERWRITE = _impl("fallback-after-overwrite", "fallback")
LAST_INDEX_NEVER_SAMPLED = _impl("last-index-never-sampled", "off-by-one")
UNNORMALISED_WEIGHTS = _impl("unnormalised-weights", "unnormalised")
BATCH_MAX_WEIGHTS = _impl("batch-max-weights", "batch-max")
#: the historical maximum, documented by the implementation as its design (as cpprb does)
HISTORICAL_MAX_BY_DESIGN = implementation("historical-max-by-design", prioritized_replay=_Area(
    "historical", {"historical_max": ("new items get the largest priority ever set",
                                      "https://example.org/docs/per")}))


class _WithoutExtension:
    """torchrl as installed, but with its C++ segment trees missing: what torchrl's sampler
    module looks like after ``from torchrl._torchrl import ...`` failed (ABI mismatch)."""

    name = "torchrl-without-extension"

    @property
    def version(self):
        from conformance.implementations.torchrl import IMPLEMENTATION

        return IMPLEMENTATION.version

    @property
    def prioritized_replay(self):
        from torchrl.data import PrioritizedSampler

        from conformance.implementations.torchrl_areas import prioritized_replay

        # the globals of the module that defines the sampler (samplers.py before 0.14, the
        # samplers/prioritized.py of the 0.14 package), where the tree classes are looked up
        namespace = PrioritizedSampler.__init__.__globals__
        for name in ("SumSegmentTreeFp32", "SumSegmentTreeFp64",
                     "MinSegmentTreeFp32", "MinSegmentTreeFp64"):
            namespace[name] = None
        return prioritized_replay.make(self)


NO_EXTENSION = _WithoutExtension()
