"""Probes of the equivalent mutants of how ``impls/prioritized_replay.py`` reads indices and
priorities (``classified/prioritized_replay_indices.json``): each applies mutmut's very edit
and shows that nothing a user can observe changes.

Two kinds of edit are equivalent there:

- the boundaries of shortcuts: ``_distinct_and_valid`` lets a batch of distinct valid indices
  skip the -1 filter and the repeat detection, ``_unique`` skips the filter when no index is
  negative; moving a boundary sends some batches down the general path, which gives the same
  result (only the cost moves), and the fast check of the tensor call in ``update_priority``
  sends other calls down the general path for the same reason;

Companion tests: ``test_the_observation_sees_a_real_change`` (the probe fails on an edit that
is not equivalent), and ``test_q_is_rounded_as_torchrl_rounds_it``, the property that the
*outside* classifications of the q edits name: q is computed, as TorchRL computes it, over the
whole vector of valid priorities before repeats are dropped, so that tree values equal
TorchRL's bit for bit; each of those edits breaks that (by one float32 ulp of one q), which no
spec can see (their tolerances are TorchRL's float32 trees').

The observation: samplers with and without in-buffer tracking driven through seeded calls of
every form the index-forms spec passes (ints, lists, 0-d tensors, int32 indices, -1 entries,
repeats, a slot twice as a pair, batches of 1, 2, capacity and more than capacity, index 0,
the last slot, a slot past the end that must be refused), each followed by the leaves of every
channel, the raw priorities, the default priority, a seeded draw and its weights, compared
bit for bit with the unmutated sampler's.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

import impls.prioritized_replay as original
from tests.mutants.source import mutated_module

CAPACITY = 8

EDITS = {
    # _distinct_and_valid: the fast check's bounds (index 0 or the last slot take the general
    # path, or every batch does)
    "low-bound-at-zero": ("        if low.item() < 0 or high.item() >= self._max_capacity:\n",
                          "        if low.item() <= 0 or high.item() >= self._max_capacity:\n"),
    "low-bound-at-one": ("        if low.item() < 0 or high.item() >= self._max_capacity:\n",
                         "        if low.item() < 1 or high.item() >= self._max_capacity:\n"),
    "high-bound-past-the-end": (
        "        if low.item() < 0 or high.item() >= self._max_capacity:\n",
        "        if low.item() < 0 or high.item() > self._max_capacity:\n"),
    "never-distinct": ("        return bool(self._last_position.index_select(0, index).eq_(position).all())\n",
                       "        return bool(None)\n"),
    # _unique: when the shortcut is tried, and when the -1 filter runs
    "shortcut-from-three": ("        if 1 < n <= self._max_capacity and self._distinct_and_valid(index):\n",
                            "        if 2 < n <= self._max_capacity and self._distinct_and_valid(index):\n"),
    "shortcut-from-one": ("        if 1 < n <= self._max_capacity and self._distinct_and_valid(index):\n",
                          "        if 1 <= n <= self._max_capacity and self._distinct_and_valid(index):\n"),
    "shortcut-below-capacity": (
        "        if 1 < n <= self._max_capacity and self._distinct_and_valid(index):\n",
        "        if 1 < n < self._max_capacity and self._distinct_and_valid(index):\n"),
    "filter-when-zero": ("        if bool((index < 0).any()):\n", "        if bool((index <= 0).any()):\n"),
    "filter-below-one": ("        if bool((index < 0).any()):\n", "        if bool((index < 1).any()):\n"),
    "repeats-checked-from-one": ("        if n > 1:\n", "        if n >= 1:\n"),
    # update_priority: the usual call's fast check (other calls take the general path)
    "fast-check-without-index": ("if not (type(index) is torch.Tensor and type(priority) is torch.Tensor",
                                 "if not (type(None) is torch.Tensor and type(priority) is torch.Tensor"),
    "fast-check-without-priority": ("if not (type(index) is torch.Tensor and type(priority) is torch.Tensor",
                                    "if not (type(index) is torch.Tensor and type(None) is torch.Tensor"),
    "fast-check-1d-only-in-2d": ("and index.ndim == 1 and index.shape == priority.shape",
                                 "and index.ndim == 2 and index.shape == priority.shape"),
    # _write: priorities reach it as one number (0-d) or one per index, never otherwise
    "write-always-expands": ("        raw = raw if raw.ndim else raw.expand(index.shape)",
                             "        raw = raw if (raw.ndim) and False else raw.expand(index.shape)"),
    "fast-check-not-1d": ("and index.ndim == 1 and index.shape == priority.shape",
                          "and index.ndim != 1 and index.shape == priority.shape"),
    "fast-check-no-device": ("        device = self.device\n", "        device = None\n"),
    "fast-check-index-elsewhere": (
        "and index.device == priority.device == device):",
        "and index.device != priority.device == device):"),
    "fast-check-priority-elsewhere": (
        "and index.device == priority.device == device):",
        "and index.device == priority.device != device):"),
}


def _calls(rng: np.random.Generator):
    """Seeded calls ``(method, args)`` of every form: ``("update", index, priority)`` or
    ``("mark", index)``."""
    p = lambda n: torch.as_tensor(rng.integers(1, 640, n) / 64.0, dtype=torch.float32)  # noqa: E731
    yield "mark", torch.arange(CAPACITY)
    yield "update", torch.arange(CAPACITY), p(CAPACITY)  # n == capacity, from slot 0
    yield "update", torch.tensor([0, 7]), p(2)  # index 0 and the last slot, n == 2
    yield "update", torch.tensor([5]), p(1)  # n == 1
    yield "update", torch.tensor([3, 3]), p(2)  # a slot twice, n == 2
    yield "update", torch.tensor([1, 6, 2]), p(3)
    yield "update", torch.tensor([4, -1, 0]), p(3)
    yield "update", torch.tensor([7, -1, 7, 2]), p(4)
    yield "update", torch.arange(20) % CAPACITY, p(20)  # longer than the buffer
    yield "update", 2, 0.25
    yield "update", [0, 3], [9.0, 0.5]
    yield "update", torch.tensor(6), torch.tensor(4.0)
    yield "update", torch.tensor([1, 5], dtype=torch.int32), p(2)
    yield "update", torch.tensor([2, 4]), torch.tensor([3, 1])  # integer priorities
    yield "update", torch.tensor([1, 2]), p(1)  # one priority for two
    yield "update", torch.tensor([0, CAPACITY]), p(2)  # past the end: refused
    yield "update", torch.tensor([[1, 2]]), p(2).reshape(1, 2)  # coordinates, no storage: refused
    yield "mark", torch.tensor([-1, 4, 4, 0])
    yield "mark", torch.tensor([3])
    for _ in range(12):  # seeded batches mixing everything
        n = int(rng.integers(1, 2 * CAPACITY))
        index = torch.as_tensor(rng.integers(-1, CAPACITY, n))
        yield "update", index, p(n)


def _observe(module, within: bool) -> list:
    sampler = module.PrioritizedSampler(CAPACITY, 0.6, 0.4, 1e-3,
                                        max_priority_within_buffer=within)

    class Storage:  # what sample() reads of a storage
        ndim, shape = 1, (CAPACITY,)

        def __len__(self):
            return CAPACITY

    seen = []
    for step, (kind, *args) in enumerate(_calls(np.random.default_rng(0))):
        try:
            if kind == "mark":
                sampler.mark_update(*args)
            else:
                sampler.update_priority(*args)
        except (RuntimeError, IndexError):
            seen.append("refused")
        sampler._rng = torch.Generator().manual_seed(step)
        index, info = sampler.sample(Storage(), 16)
        seen += [sampler._tree.leaves.clone(), sampler._raw_priority.clone(),
                 torch.as_tensor(sampler.default_priority), index,
                 info["priority_weight"]]
    return seen


@pytest.mark.parametrize("edit", list(EDITS))
def test_index_edit_is_not_observable(edit):
    mutated = mutated_module("impls.prioritized_replay", *EDITS[edit],
                             tag=edit.replace("-", "_"))
    for within in (True, False):
        want, got = _observe(original, within), _observe(mutated, within)
        assert len(got) == len(want), f"{edit}: within={within}: another number of refusals"
        for k, (g, w) in enumerate(zip(got, want, strict=True)):
            same = g == w if isinstance(w, str) else (
                isinstance(g, torch.Tensor) and g.dtype == w.dtype and torch.equal(g, w))
            assert same, f"{edit}: within={within}: observation {k} differs: {g} vs {w}"


def test_the_observation_sees_a_real_change():
    """The probe can fail: an edit that keeps the first of a repeat is seen."""
    mutated = mutated_module("impls.prioritized_replay", 'position, "amax", include_self=False)',
                             'position, "amin", include_self=False)', tag="probe_control")
    assert any(not (isinstance(w, str) and g == w or isinstance(w, torch.Tensor)
                    and torch.equal(g, w))
               for g, w in zip(_observe(mutated, True), _observe(original, True), strict=True))


#: edits that change q by an ulp on batches with repeats or -1 entries (classified outside)
ULP_EDITS = {
    "q-dropped-with-repeats": ("                priority, q = priority[last], q[last]\n",
                               "                priority, q = priority[last], None\n"),
    "write-recomputes-q": ("        q = self._q(raw) if q is None else q\n",
                           "        q = self._q(raw) if (q is None) or True else q\n"),
    "q-recomputed-after-dedup": ("            self._write(index, priority, q=q)\n",
                                 "            self._write(index, priority, q=None)\n"),
    "q-left-out": ("            self._write(index, priority, q=q)\n",
                   "            self._write(index, priority, )\n"),
    "default-in-float64": ("        default = self._default_tensor().to(torch.get_default_dtype())\n",
                           "        default = self._default_tensor().to(None)\n"),
}


def _tree_values(sampler_cls, within: bool) -> torch.Tensor:
    """Tree values after seeded batches with repeats and -1 entries of odd lengths (through
    the general path too: a list index), and a write over the maximum, on 64 slots."""
    import warnings

    sampler = sampler_cls(64, alpha=0.6, beta=0.4, eps=1e-3, max_priority_within_buffer=within)
    generator = torch.Generator().manual_seed(0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sampler.mark_update(torch.arange(64))
        for n in (37, 53, 61, 101, 130):
            index = torch.randint(-1, 64, (n,), generator=generator)
            priority = torch.rand(n, generator=generator) * 10
            sampler.update_priority(index, priority)
            sampler.update_priority(index.tolist(), priority.tolist())
        sampler.update_priority(torch.tensor([5]), torch.tensor([1 / 3]))
        sampler.mark_update(torch.tensor([0, 1]))  # new items get the (not float32-exact) max
    return torch.as_tensor(sampler._sum_tree[torch.arange(64)]).double()


@pytest.mark.parametrize("edit", [None, *ULP_EDITS])
def test_q_is_rounded_as_torchrl_rounds_it(edit):
    from torchrl.data import PrioritizedSampler as TorchRL

    module = original if edit is None else mutated_module(
        "impls.prioritized_replay", *ULP_EDITS[edit], tag=edit.replace("-", "_"))
    # without in-buffer tracking (TorchRL's default): no design difference moves a value
    same = torch.equal(_tree_values(module.PrioritizedSampler, False),
                       _tree_values(TorchRL, False))
    if edit is None:
        assert same, "the reference's q no longer equals TorchRL's bit for bit"
    else:
        assert not same, f"{edit}: q still equal to TorchRL's: the edit is equivalent"
