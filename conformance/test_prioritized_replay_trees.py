"""§5 Prioritized replay: the segment trees themselves, at the sizes real buffers have.

TorchRL exposes its trees (``torchrl.data.replay_buffers.samplers.SumSegmentTreeFp32`` /
``MinSegmentTreeFp32``: ``tree[index] = value``, ``tree[index]``, ``query(start, end)``,
``scan_lower_bound(mass)``) and every prioritized sampler keeps one as ``sampler._sum_tree``;
user code and TorchRL's own tests drive them directly. These specs check both against a numpy
model (the leaves in a float64 array; a range's reduction and the prefix sums recomputed from
it, O(size) per call) at sizes from 1 leaf to 1e6, so that every level of a multi-level tree
is written, reduced and descended:

- ``tree[index]`` returns what was written, by an int index with a number, an index array with
  one value each, or an index array with one number for all;
- ``query(start, end)`` is the sum (min) of the leaves ``[start, end)`` for ranges that start
  and end inside, at and across the blocks of every level;
- ``scan_lower_bound(mass)`` of a mass inside a leaf's share of the prefix sums (strictly
  between the sums before and after it) is that leaf, across runs of zero leaves, for an array
  of masses or a single one. Masses equal to a prefix sum are not specified: TorchRL's trees
  return the first leaf whose prefix sum reaches the mass, the reference's the first that
  exceeds it (never a zero leaf); a uniform draw hits one with probability zero.

Inputs are exact in float32 (TorchRL's trees are float32): sum-tree leaves are integers 0..7,
so every partial sum is an integer below 2^23 and masses are integers or half-integers;
min-tree leaves are multiples of 1/64. The expected values are therefore exact, and so is the
comparison. Through a sampler (whose leaves are ``(p + eps) ** alpha``), sums are compared with
rtol 1e-5 and masses are taken mid-leaf, at least 0.5 from any boundary.
"""

from __future__ import annotations

import re

import numpy as np
import pytest

from conformance import capabilities, device
from conformance._assertions import assert_close, message

SIZES = [1, 7, 1000, 1025, 3000, 100_000, 1_000_000]
SAMPLER_CAPACITIES = [3000, 100_000]
ALPHA, BETA, EPS = 0.6, 0.4, 1e-3
SUM_RTOL = 1e-5  # float32 sums of (p + eps) ** alpha over up to 1e5 leaves
TORCHRL_TREES = "https://github.com/pytorch/rl/blob/main/torchrl/csrc/segment_tree.h"


@pytest.fixture
def trees(request, impl, prioritized_replay):
    return capabilities.require(request, impl, "prioritized_replay", prioritized_replay,
                                "segment_tree")


@pytest.fixture
def sampler_tree(request, impl, prioritized_replay):
    return capabilities.require(request, impl, "prioritized_replay", prioritized_replay,
                                "sampler_sum_tree")


def _ranges(rng: np.random.Generator, size: int, n: int = 40) -> list[tuple[int, int]]:
    """``[start, end)`` ranges, ``start < end``: the whole, prefixes, suffixes, single leaves,
    ranges starting and ending next to the block edges of every level (32, 1024, 32768), and
    random ones."""
    edges = {0, 1, size // 2, size - 1, size}
    for block in (32, 1024, 32 * 1024):
        for k in (1, 3):
            edges |= {block * k - 1, block * k, block * k + 1}
    edges = sorted(e for e in edges if 0 <= e <= size)
    out = {(0, size), (size - 1, size), (0, 1)}
    for a in edges:
        for b in edges:
            if a < b:
                out.add((a, b))
    points = rng.integers(0, size + 1, size=(n, 2))
    out |= {(int(min(p)), int(max(p))) for p in points if p[0] != p[1]}
    out |= {(int(i), int(i) + 1) for i in rng.integers(0, size, 5)}
    return sorted(out)


class TreeRun:
    """One implementation's tree next to its numpy model."""

    def __init__(self, area, size: int, reduce: str):
        self.tree = area.segment_tree(size=size, reduce=reduce)
        self.size, self.reduce = size, reduce
        self.leaves = np.full(size, 0.0 if reduce == "sum" else np.inf)
        self.log: list[str] = []

    def params(self, **extra) -> dict:
        p = {"size": self.size, "reduce": self.reduce, **extra}
        p["steps"] = "; ".join(self.log[-3:])
        return p

    def write(self, index, value, what: str) -> None:
        self.tree.write(index, value)
        self.leaves[index] = value
        self.log.append(what)

    def check(self, rng: np.random.Generator) -> None:
        __tracebackhide__ = True
        every = np.arange(self.size)
        got = np.asarray(self.tree.values(every), dtype=np.float64)
        # one value per index (TorchRL's trees return a number for a one-element index)
        if got.ndim > 1 or got.size != self.size:
            raise AssertionError(message(
                "tree[index] does not return one value per index", params=self.params(),
                expected=f"shape ({self.size},)", actual=f"shape {got.shape}"))
        got = got.reshape(-1)
        if not np.array_equal(got, self.leaves):
            bad = np.flatnonzero(got != self.leaves)[:6] if got.shape == self.leaves.shape else []
            raise AssertionError(message(
                "tree[index] != the value written there", params=self.params(leaves=bad),
                expected=self.leaves[bad] if len(bad) else self.leaves.shape,
                actual=got[bad] if len(bad) else got.shape))
        op = np.sum if self.reduce == "sum" else np.min
        for start, end in _ranges(rng, self.size):
            want = float(op(self.leaves[start:end]))
            got = self.tree.query(start, end)
            if got != want:
                raise AssertionError(message(
                    f"query(start, end) != the {self.reduce} of the leaves [start, end)",
                    params=self.params(start=start, end=end), expected=want, actual=got,
                    link=TORCHRL_TREES))
        if self.reduce == "sum":
            self.check_scan(rng)

    def check_scan(self, rng: np.random.Generator) -> None:
        __tracebackhide__ = True
        prefix = np.cumsum(self.leaves)
        total = prefix[-1]
        if not total > 0:
            return
        positive = np.flatnonzero(self.leaves > 0)
        mid = rng.choice(positive, min(200, len(positive)), replace=False)
        # within leaf i's share: leaf i. Masses equal to a prefix sum are left out: TorchRL's
        # trees return the first leaf whose prefix sum reaches the mass (>=), the reference's
        # the first that exceeds it (>, never a zero leaf); uniform draws never hit one
        mass = prefix[mid] - self.leaves[mid] / 2
        want = mid
        got = np.asarray(self.tree.scan_lower_bound(mass), dtype=np.int64)
        if got.shape != want.shape or not np.array_equal(got, want):
            bad = (np.flatnonzero(got != want)[:6] if got.shape == want.shape
                   else np.arange(min(6, len(want))))
            raise AssertionError(message(
                "scan_lower_bound(mass) != the first leaf whose inclusive prefix sum exceeds "
                "the mass", params=self.params(mass=mass[bad], total=total),
                expected=want[bad], actual=got[bad] if got.shape == want.shape else got,
                detail="leaves around the first: " + str(
                    self.leaves[max(int(want[bad[0]]) - 3, 0):int(want[bad[0]]) + 3]),
                link=TORCHRL_TREES))
        # one mass as a number: an int where it is integral (tree.scan_lower_bound(3))
        one = float(mass[0])
        one = int(one) if one.is_integer() else one
        got_one = np.asarray(self.tree.scan_lower_bound(one), dtype=np.int64).reshape(-1)
        want_one = int(np.searchsorted(prefix, one, side="right"))
        if got_one.tolist() != [want_one]:
            raise AssertionError(message(
                "scan_lower_bound(one mass) != the first leaf whose prefix sum exceeds it",
                params=self.params(mass=one), expected=[want_one], actual=got_one))


def _values(rng: np.random.Generator, reduce: str, n: int) -> np.ndarray:
    if reduce == "sum":
        return rng.integers(0, 8, n).astype(np.float64)  # integers: exact float32 sums
    return rng.integers(1, 640, n) / 64.0


@pytest.mark.parametrize("reduce", ["sum", "min"], ids=lambda r: f"reduce={r}")
@pytest.mark.parametrize("size", SIZES, ids=lambda n: f"size={n}")
def test_segment_tree_agrees_with_the_model(trees, size, reduce):
    """A tree of ``size`` leaves: every leaf written at once, then single leaves (the first,
    the middle, the last) by an int index, a batch of random distinct leaves with a value
    each, a batch with one number for all, and a run of 300 leaves set to one value that
    crosses blocks (the first 300 leaves zeroed in a sum tree, a new minimum in a min tree). After each write:
    every leaf, about 100 range queries and (sum) up to 200 prefix-sum searches, against the
    numpy model. Seeded (size)."""
    rng = np.random.default_rng(size)
    run = TreeRun(trees, size, reduce)
    run.write(np.arange(size), _values(rng, reduce, size), "every leaf written at once")
    run.check(rng)
    for i in sorted({0, size // 2, size - 1}):
        value = float(_values(rng, reduce, 1)[0])
        run.write(int(i), value, f"tree[{i}] = {value:g}")
    run.check(rng)
    k = min(size, 1000)
    index = rng.choice(size, k, replace=False)
    run.write(index, _values(rng, reduce, k), f"{k} random leaves, one value each")
    run.check(rng)
    index = rng.choice(size, min(size, 50), replace=False)
    one = 5.0 if reduce == "sum" else 0.5
    run.write(index, one, f"{len(index)} random leaves = {one:g}")
    run.check(rng)
    start = 0 if reduce == "sum" else int(rng.integers(0, max(size - 300, 0) + 1))
    run_of = np.arange(start, min(start + 300, size))  # sum: the first blocks empty
    value = 0.0 if reduce == "sum" else 1 / 128
    run.write(run_of, value, f"leaves [{start}, {run_of[-1] + 1}) = {value:g}")
    run.check(rng)


@pytest.mark.parametrize("capacity", SAMPLER_CAPACITIES, ids=lambda n: f"capacity={n}")
def test_sampler_sum_tree_agrees_with_the_model(sampler_tree, capacity):
    """The sum tree of a prioritized sampler (``sampler._sum_tree``) holding ``capacity`` items
    with priorities in [1, 16): its leaves are (p + eps)^alpha, its range sums those of the
    model, and a search by a mass inside an item's share finds that item. Seeded (capacity)."""
    rng = np.random.default_rng(capacity)
    buf = sampler_tree.buffer(capacity=capacity, alpha=ALPHA, beta=BETA, eps=EPS,
                              **device.keyword(sampler_tree))
    buf.extend(capacity)
    priority = rng.integers(64, 16 * 64, capacity) / 64.0
    buf.update_priority(np.arange(capacity), priority)
    q = (priority + EPS) ** ALPHA
    tree = sampler_tree.sampler_sum_tree(buf)
    params = {"capacity": capacity, "alpha": ALPHA, "eps": EPS}
    index = np.arange(capacity)
    assert_close("sampler._sum_tree[index] != (p + eps)^alpha", tree.values(index), q,
                 params=params, rtol=2e-6)
    prefix = np.cumsum(q)
    for start, end in _ranges(rng, capacity):
        want = float(prefix[end - 1] - (prefix[start - 1] if start else 0.0))
        assert_close("sampler._sum_tree.query(start, end) != the sum of (p + eps)^alpha over "
                     "[start, end)", tree.query(start, end), want,
                     params={**params, "start": start, "end": end}, rtol=SUM_RTOL)
    items = rng.choice(capacity, 300, replace=False)
    mass = prefix[items] - q[items] / 2  # mid-item: q >= 1, so 0.5 from either boundary
    got = np.asarray(tree.scan_lower_bound(mass), dtype=np.int64)
    if not np.array_equal(got, items):
        bad = np.flatnonzero(got != items)[:6] if got.shape == items.shape else slice(0, 6)
        raise AssertionError(message(
            "sampler._sum_tree.scan_lower_bound(mass inside item i's share) != i",
            params={**params, "mass": mass[bad]}, expected=items[bad],
            actual=got[bad] if got.shape == items.shape else got))


#: every batch size up to the widest block of any tree here (the reference's 32, TorchRL's 2),
#: each right after a batch of another size: a tree that keeps per-size scratch buffers must
#: not reuse one of another batch size
BATCH_SIZES = list(range(1, 34))


@pytest.mark.parametrize("capacity", [4000, 100_000], ids=lambda n: f"capacity={n}")
def test_sampler_sum_tree_after_batches_of_every_size(sampler_tree, capacity):
    """A full sampler of 4000 or 100 000 items, every priority set at once, then
    ``update_priority`` of 1, 2, 3, ... 33 random distinct items in turn (each batch size
    follows another: the reference's tree at 4000 items has blocks of 4, at 100 000 of 10).
    After each batch: the total and the sum up to each item just written, against the model's
    prefix sums of (p + eps)^alpha, and a search by a mass inside each such item's share finds
    it. Seeded (capacity)."""
    rng = np.random.default_rng(capacity)
    buf = sampler_tree.buffer(capacity=capacity, alpha=ALPHA, beta=BETA, eps=EPS,
                              **device.keyword(sampler_tree))
    buf.extend(capacity)
    priority = rng.integers(64, 16 * 64, capacity) / 64.0
    buf.update_priority(np.arange(capacity), priority)
    tree = sampler_tree.sampler_sum_tree(buf)
    sizes = []
    for n in BATCH_SIZES:
        index = np.sort(rng.choice(capacity, n, replace=False))
        priority[index] = rng.integers(64, 16 * 64, n) / 64.0
        buf.update_priority(index, priority[index])
        sizes.append(n)
        q = (priority + EPS) ** ALPHA
        prefix = np.cumsum(q)
        params = {"capacity": capacity, "alpha": ALPHA, "eps": EPS,
                  "update_priority batch sizes so far": sizes[-3:], "items": index[:6]}
        ends = [capacity, *(index + 1).tolist()]
        got = np.array([tree.query(0, end) for end in ends], dtype=np.float64)
        assert_close("sampler._sum_tree.query(0, end) != the sum of (p + eps)^alpha over "
                     "[0, end) after a batch of update_priority", got, prefix[np.array(ends) - 1],
                     params={**params, "ends": ends[:6]}, rtol=SUM_RTOL)
        mass = prefix[index] - q[index] / 2  # mid-item: q >= 1, so 0.5 from either boundary
        found = np.asarray(tree.scan_lower_bound(mass), dtype=np.int64)
        if not np.array_equal(found, index):
            raise AssertionError(message(
                "sampler._sum_tree.scan_lower_bound(mass inside item i's share) != i after a "
                "batch of update_priority", params={**params, "mass": mass[:6]},
                expected=index, actual=found))


@pytest.mark.parametrize("size", [7, 3000], ids=lambda n: f"size={n}")
def test_search_of_an_all_zero_sum_tree_is_refused(trees, size):
    """A sum tree whose leaves are all 0 (never written, or zeroed): no leaf has any mass, so
    ``scan_lower_bound`` raises (any exception) instead of returning an index, which could
    only be a leaf of weight 0 or past the last leaf. (A tree whose total is 0.5 searches.)"""
    small = trees.segment_tree(size=size, reduce="sum")  # a positive total below 1 is fine
    small.write(3, 0.5)
    got = np.asarray(small.scan_lower_bound(np.array([0.25])), dtype=np.int64)
    if got.tolist() != [3]:
        raise AssertionError(message(
            "scan_lower_bound on a sum tree whose only positive leaf is 3 (0.5)",
            params={"size": size, "mass": [0.25]}, expected=[3], actual=got))
    for how in ("never written", "zeroed"):
        tree = trees.segment_tree(size=size, reduce="sum")
        if how == "zeroed":
            tree.write(np.arange(size), np.ones(size))
            tree.write(np.arange(size), 0.0)
        try:
            got = tree.scan_lower_bound(np.array([0.0, 0.5]))
        except Exception:  # any refusal will do
            continue
        raise AssertionError(message(
            "scan_lower_bound on a sum tree of total 0 returned indices", params={
                "size": size, "leaves": how, "mass": [0.0, 0.5]},
            expected="an exception (no leaf has any mass)", actual=got, link=TORCHRL_TREES))


#: leaves 1..7 (sum) or their quarters (min), and what a bad write tries to put past them: a
#: value that would move the tree's reduction if it landed on any leaf, real or padding
_PAST_THE_END = {"sum": (np.arange(1.0, 8.0), 64.0), "min": (np.arange(1.0, 8.0) / 4, 1 / 64)}


@pytest.mark.parametrize("reduce", ["sum", "min"], ids=lambda r: f"reduce={r}")
def test_an_index_past_the_last_leaf_is_refused(trees, reduce):
    """``tree[index] = value`` and ``tree[index]`` with an index past the last of 7 leaves
    raise, with an error that names the bad index (any error type: the words are the spec), and
    a refused write changes no leaf and no reduction, also when the index array holds valid
    indices before the bad one. Only indices just past the end (7 and 9) are tried: a tree
    that does not check may touch memory outside its leaves, and a farther or negative index
    could then write outside its buffer and crash the run. (TorchRL's C++ trees index
    ``index | capacity`` unchecked, capacity 8 here: index 7 is a padding leaf that the root's
    reduction, and so ``query(0, 7)``, includes; index 9 is leaf 1.)"""
    size = 7
    leaves, bad_value = _PAST_THE_END[reduce]
    tree = trees.segment_tree(size=size, reduce=reduce)
    tree.write(np.arange(size), leaves)
    op = np.sum if reduce == "sum" else np.min
    want_query = float(op(leaves))
    attempts = [("tree[7] = v", 7, lambda: tree.write(7, bad_value)),
                ("tree[9] = v", 9, lambda: tree.write(9, bad_value)),
                ("tree[[2, 7]] = [v, v]", 7,
                 lambda: tree.write(np.array([2, 7]), np.array([bad_value, bad_value]))),
                ("tree[[0, 9]] = v", 9, lambda: tree.write(np.array([0, 9]), bad_value)),
                ("tree[[7]]", 7, lambda: tree.values(np.array([7]))),
                ("tree[[0, 9]]", 9, lambda: tree.values(np.array([0, 9])))]
    for what, bad, attempt in attempts:
        params = {"size": size, "reduce": reduce, "leaves": leaves.tolist(), "call": what,
                  "v": bad_value}
        try:
            got = attempt()
        except Exception as exc:  # noqa: BLE001 - any error type, its words are the spec
            got, error = None, f"{type(exc).__name__}: {exc}"
        else:
            error = None
        now = np.asarray(tree.values(np.arange(size)), dtype=np.float64).reshape(-1)
        query = tree.query(0, size)
        unchanged = np.array_equal(now, leaves) and query == want_query
        if error is None:
            raise AssertionError(message(
                f"{what} with an index past the last leaf was accepted", params=params,
                expected="an error naming the index, leaves and reduction unchanged",
                actual=(f"returned {np.asarray(got).tolist()}" if got is not None
                        else "no error")
                + f"; leaves now {now.tolist()}, query(0, {size}) = {query} (was {want_query})",
                link=TORCHRL_TREES))
        if not unchanged:
            raise AssertionError(message(
                f"a refused {what} changed the tree", params=params,
                expected=f"leaves unchanged, query(0, {size}) = {want_query}",
                actual=f"leaves {now.tolist()}, query(0, {size}) = {query}; {error}"))
        if not re.search(rf"(?<![\d.]){bad}(?![\d.])", error):
            raise AssertionError(message(
                f"the refusal of {what} does not name the bad index {bad}", params=params,
                expected=f"an error whose message holds {bad}", actual=error))


def test_a_min_tree_has_no_prefix_sum_search(trees):
    """``scan_lower_bound`` is a sum tree's: on a min tree it raises (TorchRL's
    ``MinSegmentTreeFp32`` has no such method), naming ``scan_lower_bound``, rather than
    searching minima as if they were masses."""
    tree = trees.segment_tree(size=8, reduce="min")
    tree.write(np.arange(8), np.arange(1, 9) / 4)
    try:
        got = tree.scan_lower_bound(np.array([0.5]))
    except (AttributeError, TypeError) as exc:
        if re.search(r"\bscan_lower_bound\b", str(exc)):
            return
        got = f"{type(exc).__name__}: {exc}"
    raise AssertionError(message(
        "scan_lower_bound on a min tree was not refused naming scan_lower_bound",
        params={"size": 8, "reduce": "min"},
        expected="AttributeError or TypeError naming scan_lower_bound", actual=got))
