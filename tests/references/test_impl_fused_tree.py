"""``impls.fused_tree`` (the replay area's second implementation, ``reference-fused``): its C
kernel walks the same tree as the eager reference, so the same seeds and calls give the same
draws, weights, leaves, raw priorities and defaults; it falls back to the eager code wherever
the kernel cannot serve. The §5 specs run on it with
``--impl conformance.implementations.reference_fused:IMPLEMENTATION``."""

import numpy as np
import pytest
import torch
from torchrl.data import LazyTensorStorage, ReplayBuffer

import impls.fused_tree as fused
from impls import PrioritizedSampler
from impls.segment_tree import SegmentTree

pytestmark = pytest.mark.skipif(
    fused.FUSED_ERROR is not None, reason=f"no kernel here: {fused.FUSED_ERROR}"
)


def _drive(cls, capacity, within, generator, seed=0):
    """A seeded sequence of a buffer's calls on a sampler of ``cls``: fills, updates (float64
    and float32 priorities, a repeat with a -1, repeats alone), extends over a full ring,
    draws; what it saw."""
    sampler = cls(capacity, 0.6, 0.4, max_priority_within_buffer=within)
    buffer = ReplayBuffer(storage=LazyTensorStorage(capacity), sampler=sampler)
    rng = np.random.default_rng(seed)
    np.random.seed(seed)
    sampler._rng = torch.Generator().manual_seed(seed) if generator else None
    seen = []
    buffer.extend(torch.arange(capacity))
    sampler.update_priority(
        torch.arange(capacity), torch.as_tensor(rng.uniform(0.01, 10, capacity))
    )
    for step in range(6):
        k = min(256, capacity)
        index = torch.as_tensor(rng.permutation(capacity)[:k])
        priority = torch.as_tensor(rng.uniform(0.0, 5.0, k))
        if step == 2:
            priority = priority.float()
        if step == 3 and k > 2:  # a repeat and a -1: the eager path
            index[1], index[2] = index[0], -1
        if step == 4 and k > 3:  # repeats only (a sample with replacement): the kernel, in
            index[1], index[3] = index[0], index[2]  # order, the last entry of each winning
        sampler.update_priority(index, priority)
        buffer.extend(torch.arange(k))
        idx, info = sampler.sample(buffer._storage, 300)
        seen += [idx, info["priority_weight"], sampler.default_priority]
    return seen, sampler


@pytest.mark.parametrize("capacity", [2, 7, 100, 4_000, 70_000])
@pytest.mark.parametrize("within", [True, False], ids=["within", "historical"])
@pytest.mark.parametrize("generator", [True, False], ids=["torch-stream", "numpy-stream"])
def test_same_calls_give_what_the_eager_sampler_gives(capacity, within, generator):
    want, eager = _drive(PrioritizedSampler, capacity, within, generator)
    got, fast = _drive(fused.FusedPrioritizedSampler, capacity, within, generator)
    assert fast._tree._fused
    for i, (w, g) in enumerate(zip(want, got, strict=True)):
        assert w == g if isinstance(w, float) else torch.equal(w, g), (
            f"capacity {capacity}, call {i}: eager {w}, fused {g}"
        )
    assert torch.equal(eager._raw, fast._raw)
    assert torch.equal(eager._tree.leaves, fast._tree.leaves)
    # the totals may differ in the last bits (sequential sums), never more
    torch.testing.assert_close(fast._tree.root, eager._tree.root, rtol=1e-12, atol=0)


@pytest.mark.parametrize("size", [1, 9, 64, 65, 1000, 5000])
def test_tree_walks_match_the_eager_tree(size):
    rng = np.random.default_rng(size)
    ops = ("sum", "min", "max")
    trees = [SegmentTree(size, ops), fused.FusedSegmentTree(size, ops)]
    values = torch.as_tensor(rng.integers(0, 5, (3, size)).astype(np.float64))
    values[0, : size // 2] = 0.0  # runs of empty leaves: the search never returns them
    part = torch.as_tensor(rng.permutation(size)[: max(1, size // 3)])
    for tree in trees:
        tree.set(torch.arange(size), values)
        tree.fill_channel(2, part, -1.0)
    eager, fast = trees
    torch.testing.assert_close(fast.root, eager.root, rtol=1e-12, atol=0)
    assert torch.equal(fast.leaves, eager.leaves)
    if float(eager.root[0]) > 0:
        total = float(eager.root[0])
        mass = torch.as_tensor(
            np.concatenate([rng.uniform(0, total, 500), [0.0, total, 2 * total]])
        )
        leaf, value = fast.scan(mass)
        assert torch.equal(leaf, eager.scan(mass)[0]) and torch.equal(value, eager.scan(mass)[1])
        assert bool((value > 0).all()), "the search found an empty leaf"


@pytest.mark.parametrize("order", ["consecutive", "reversed", "runs-interleaved", "shuffled"])
def test_every_level_matches_the_eager_tree_whatever_the_order_of_the_writes(order):
    """The kernel skips a parent that the previous write shares (consecutive slots share
    them): in any order of the written slots, every node of every level is the eager tree's."""
    size, ops = 4_100, ("sum", "min", "max")
    rng = np.random.default_rng(7)
    runs = [np.arange(8, 300), np.arange(3000, 3700), np.arange(4090, 4100), np.arange(0, 3)]
    index = {
        "consecutive": np.concatenate(runs),
        "reversed": np.concatenate(runs)[::-1].copy(),
        "runs-interleaved": np.concatenate([np.stack([runs[0][:250], runs[1][:250]], 1).ravel(),
                                            runs[0][250:], runs[1][250:], runs[2], runs[3]]),
        "shuffled": rng.permutation(np.concatenate(runs)),
    }[order]
    trees = [SegmentTree(size, ops), fused.FusedSegmentTree(size, ops)]
    for step in range(3):  # the same slots written again: nothing stale may survive
        values = torch.as_tensor(rng.uniform(0, 5, (3, index.size)))
        for tree in trees:
            tree.set(torch.as_tensor(index), values)
            tree.fill_channel(2, torch.as_tensor(index[: 100 * (step + 1)]), -1.0)
    eager, fast = trees
    for level, (want, got) in enumerate(zip(eager.levels, fast.levels, strict=True)):
        torch.testing.assert_close(got, want, rtol=1e-12, atol=0,
                                   msg=lambda m, level=level: f"level {level}: {m}")


def test_a_bad_index_is_refused_and_nothing_is_written():
    tree = fused.FusedSegmentTree(100, ("sum", "min"))
    before = [level.clone() for level in tree.levels]
    with pytest.raises(IndexError, match="100"):
        tree.set(torch.tensor([3, 100]), torch.ones(2, 2, dtype=torch.float64))
    assert all(torch.equal(a, b) for a, b in zip(before, tree.levels, strict=True))
    sampler = fused.FusedPrioritizedSampler(10, 0.6, 0.4)
    with pytest.raises((IndexError, RuntimeError)):
        sampler.update_priority(torch.tensor([1, 10]), torch.tensor([1.0, 2.0]))


def test_without_the_kernel_the_eager_code_runs(monkeypatch):
    monkeypatch.setattr(fused, "_LIB", None)
    want, _ = _drive(PrioritizedSampler, 500, True, True)
    got, sampler = _drive(fused.FusedPrioritizedSampler, 500, True, True)
    assert not sampler._tree._fused
    assert all(
        w == g if isinstance(w, float) else torch.equal(w, g)
        for w, g in zip(want, got, strict=True)
    )


def test_the_buffer_classes_hold_the_fused_sampler():
    td = fused.TensorDictPrioritizedReplayBuffer(
        alpha=0.6, beta=0.4, storage=LazyTensorStorage(50), upper_priority=3.0
    )
    plain = fused.PrioritizedReplayBuffer(alpha=0.6, beta=0.4, storage=LazyTensorStorage(50))
    for buffer in (td, plain):
        assert type(buffer._sampler) is fused.FusedPrioritizedSampler
        assert buffer._sampler._max_capacity == 50
    assert td._sampler._upper_priority == 3.0
    given = PrioritizedSampler(50, 0.6, 0.4)
    assert (
        fused.PrioritizedReplayBuffer(
            alpha=0.6, beta=0.4, sampler=given, storage=LazyTensorStorage(50)
        )._sampler
        is given
    )


def test_without_the_kernel_the_fused_implementation_is_untestable_never_eager(monkeypatch):
    # a pass of the eager fallback would say nothing about the fused walks
    from conformance.implementations import reference_fused
    from conformance.interface import Untestable

    monkeypatch.setattr(fused, "FUSED_ERROR", "FileNotFoundError: cc")
    with pytest.raises(Untestable, match="C kernel is not available here: FileNotFoundError: cc"):
        reference_fused.kernel_loaded()


@pytest.mark.slow
def test_every_replay_spec_passes_on_reference_fused(tmp_path):
    """The second implementation is held to the §5 specs as a whole, not only to this file's
    comparisons with the eager tree: every replay spec passes, none fails or is not tested."""
    import json
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    specs = sorted(str(p.relative_to(root)) for p in (root / "conformance").glob("test_prioritized_replay*.py"))
    results = tmp_path / "r.json"
    proc = subprocess.run([sys.executable, "-m", "pytest", *specs, "-p", "no:cacheprovider", "-q",
                           "-n", "0", "--impl", "reference-fused", "--results", str(results)],
                          cwd=root, capture_output=True, text=True, timeout=900)
    rows = json.loads(results.read_text())["rows"]
    outcomes = {r["outcome"] for r in rows}
    assert rows and outcomes == {"pass"}, (outcomes, proc.stdout[-3000:])
def test_a_copy_walks_its_own_tensors():
    """The kernel's pointer tables are remade for a copy: writing the copy leaves the original
    as it was (a copied table would write into the original's tensors)."""
    import copy
    import pickle

    sampler = fused.FusedPrioritizedSampler(3000, 0.6, 0.4, max_priority_within_buffer=True)
    sampler.update_priority(torch.arange(3000), torch.linspace(0.1, 5.0, 3000, dtype=torch.float64))
    before = [level.clone() for level in sampler._tree.levels]
    for twin in (copy.deepcopy(sampler), pickle.loads(pickle.dumps(sampler))):
        assert twin._tree._fused
        twin.update_priority(torch.arange(0, 3000, 7), torch.full((429,), 9.0, dtype=torch.float64))
        twin.mark_update(torch.arange(5, 3000, 11))
        assert all(torch.equal(a, b) for a, b in zip(before, sampler._tree.levels, strict=True))
        assert float(twin._tree.root[0]) != float(sampler._tree.root[0])
