"""§5 the prioritized buffer classes with the options a training script passes, and the tree's
search on item boundaries.

TorchRL's examples build ``TensorDictPrioritizedReplayBuffer(alpha=, beta=, eps=,
storage=LazyTensorStorage(N))``; real scripts also pass, or leave out, TorchRL's other
constructor keywords (``conformance.interface.PrioritizedBufferOptions``). Built so:

- a storage of more than 1000 items is sampled whole: the sampler holds as many slots as the
  storage, items written past slot 1000 included;
- without ``storage=`` the buffer holds TorchRL's default 1000 items, and its sampler's
  checkpoint says so (``_max_capacity`` 1000: it loads into a buffer of 1000 items);
- ``dtype=torch.float64`` (``PrioritizedReplayBuffer``) keeps float64 precision end to end:
  tree values, importance weights, the ``state_dict`` trees and the dumped files agree with the
  float64 model to 1e-12, not to float32's 6e-8;
- float64 priorities (a float64 critic's TD errors) are accepted by a float32 buffer, whose
  trees and dumped files hold them rounded to float32, as float32 trees hold them;
- ``sync=False`` (TorchRL's writer-process mode: the priorities are caught up at the next
  ``sample``) follows the same law, the upper bound on the default included;
- ``reduction`` reduces a ``td_error`` with several entries per item (max, min, mean, median)
  to the item's priority.

And the segment tree's prefix-sum search (``scan_lower_bound``) with masses exactly on item
boundaries, 0 included (a uniform draw of exactly 0 is possible: ``torch.rand`` returns 0 with
probability 2**-24 per draw): the leaf found has a positive weight and its interval holds the
mass; which of two positive neighbours a shared boundary belongs to is left open.

Oracle: ``conformance.oracles.prioritized_replay.ReplayModel`` (numpy, float64) with the
default rule of these buffers (the largest priority ever given), and numpy prefix sums for the
tree. Priorities are multiples of 1/64 (float32-exact) except where float64 precision is the
point (uniform float64 priorities, seeded).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from conformance import capabilities, device
from conformance._assertions import assert_close, message
from conformance.interface import EXAMPLE_BUFFER_KINDS
from conformance.test_prioritized_replay import Run, grid
from conformance.test_prioritized_replay_buffer_classes import HistoricalModel

ALPHA, BETA, EPS = 0.6, 0.4, 1e-3
TREE_RTOL, RAW_RTOL, WEIGHT_RTOL = 2e-6, 1e-5, 1e-5
F64_RTOL = 1e-12  # float64 end to end; float32 rounding is 6e-8, far above it
BIG = 3000  # > 1000 (TorchRL's default storage) and > 1024 (a tree with a level below its top)
DEFAULT_STORAGE = 1000  # TorchRL's ListStorage(max_size=1_000) when storage= is left out
TD, PLAIN = "TensorDictPrioritizedReplayBuffer", "PrioritizedReplayBuffer"
PER_PAPER = "https://arxiv.org/abs/1511.05952"
OPTIONS_DOCS = "https://pytorch.org/rl/stable/reference/generated/torchrl.data.PrioritizedReplayBuffer.html"
ISSUE_2210 = "https://github.com/pytorch/rl/issues/2210"
NOT_PASSED = "the buffer class does not hand this option to the sampler it holds"
MIXED_DTYPES = "a tree of one dtype written with values of another"


@pytest.fixture
def options(request, impl, prioritized_replay):
    return capabilities.require(request, impl, "prioritized_replay", prioritized_replay,
                                "option_buffer")


@pytest.fixture
def options_and_checkpoints(request, impl, prioritized_replay):
    capabilities.require(request, impl, "prioritized_replay", prioritized_replay, "option_buffer")
    return capabilities.require(request, impl, "prioritized_replay", prioritized_replay,
                                "dump_sampler")


def option_run(area, kind: str, capacity: int | None, *, upper: float | None = None,
               **options) -> Run:
    """A ``Run`` (the step log and checks of ``conformance/test_prioritized_replay.py``) on a
    buffer built by ``option_buffer``; ``capacity=None``: no ``storage=``."""
    run = Run.__new__(Run)
    shown = {k: v for k, v in options.items() if k != "priority_dtype"}
    run.area, run.log = area, [f"{kind}(capacity={capacity or 'default'}, {shown})"]
    run.buf = area.option_buffer(kind=kind, capacity=capacity, alpha=ALPHA, beta=BETA, eps=EPS,
                                 upper_priority=upper, **options, **device.keyword(area))
    run.model = HistoricalModel(capacity or DEFAULT_STORAGE, ALPHA, BETA, EPS,
                                initial_priority=float(area.initial_priority),
                                upper_priority=upper)
    return run


def check(run: Run, what: str, *, rtol: float = TREE_RTOL, link: str = OPTIONS_DOCS) -> None:
    """Every tree value and the default priority against the model."""
    __tracebackhide__ = True
    run.check_len()
    assert_close(f"tree values {what} != (p + eps)^alpha", run.buf.tree_values(),
                 run.model.tree_values(), params=run.params(), rtol=rtol, cause=NOT_PASSED,
                 link=link)
    assert_close(f"default priority {what} != largest priority ever given (capped)",
                 float(run.buf.default_priority()), run.model.default_priority(),
                 params=run.params(), rtol=RAW_RTOL, cause=NOT_PASSED, link=link)


def _dumped(area, buf, path: Path) -> tuple[dict, np.ndarray]:
    """The metadata and the sum-tree file of ``buf``'s sampler checkpoint."""
    area.dump_sampler(buf, str(path))
    meta = json.loads((path / "sampler_metadata.json").read_text())
    return meta, np.fromfile(path / "sumtree.memmap", dtype=np.float64)


def _accepted(run: Run, what: str, step, cause: str) -> None:
    """Run ``step``; an exception it raises fails the spec with the call and its parameters."""
    __tracebackhide__ = True
    try:
        step()
    except AssertionError:  # a check of the step itself, already readable
        raise
    except Exception as exc:  # noqa: BLE001 -- any refusal of a valid input is the failure
        raise AssertionError(message(
            f"{what} raised {type(exc).__name__}", params=run.params(), expected="accepted",
            actual=f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}",
            cause=cause, link=OPTIONS_DOCS)
        ) from exc


# ------------------------------------------------------------------------------ storage


@pytest.mark.parametrize("kind", EXAMPLE_BUFFER_KINDS)
def test_a_storage_past_1000_items_is_sampled_whole(options, kind):
    """``storage=LazyTensorStorage(3000)``, filled in three writes (1200, 1200, 600): every
    item at the initial priority; then a priority for each; draws reach the items past slot
    1000 and follow the model; four more items wrap the ring over slots 0 - 3 and get the
    largest priority ever given."""
    run = option_run(options, kind, BIG)
    for rows in (1200, 1200, 600):
        _accepted(run, f"extend({rows}) of a buffer over LazyTensorStorage(3000)",
                  lambda rows=rows: run.extend(rows, check=False),
                  "the sampler holds fewer slots than the storage")
    check(run, "after filling 3000 slots")
    run.update(np.arange(BIG), grid(np.random.default_rng(61), BIG, 16, 640))
    check(run, "after a priority for every item")
    draw = run.check_sample(4096, seed=61)
    top = int(np.max(draw.index))
    if top < 2 * DEFAULT_STORAGE:
        raise AssertionError(message(
            "4096 draws over 3000 items of similar priorities never reached past slot 2000",
            params=run.params(batch=4096, seed=61), expected="draws past slot 2000",
            actual=f"largest index drawn: {top}", cause=NOT_PASSED, link=OPTIONS_DOCS))
    run.extend(4, check=False)
    check(run, "after a write that wraps the ring")


def test_without_a_storage_the_buffer_holds_1000_items(options_and_checkpoints, tmp_path):
    """``PrioritizedReplayBuffer(alpha=, beta=, eps=)`` with no ``storage=``: TorchRL's
    ``ListStorage`` of 1000 items. 1000 items then 200 more (over slots 0 - 199), priorities,
    draws; the sampler's checkpoint is for 1000 items (``_max_capacity``), so it loads into
    a buffer of that size."""
    area = options_and_checkpoints
    run = option_run(area, PLAIN, None)
    run.extend(1000, check=False)
    run.update(np.arange(1000), grid(np.random.default_rng(62), 1000, 16, 640))
    run.extend(200, check=False)
    check(run, "after 1200 items in the default storage")
    run.check_sample(512, seed=62)
    meta, _ = _dumped(area, run.buf, tmp_path / "sampler")
    if float(meta.get("_max_capacity", -1)) != DEFAULT_STORAGE:
        raise AssertionError(message(
            "the sampler of a buffer with the default storage is not sized for it",
            params=run.params(), expected=f"_max_capacity {DEFAULT_STORAGE}",
            actual=f"_max_capacity {meta.get('_max_capacity')}", cause=NOT_PASSED,
            link=OPTIONS_DOCS))


# -------------------------------------------------------------------------------- dtype


def _float64_priorities(n: int, seed: int) -> np.ndarray:
    """Priorities that float32 cannot hold exactly (float64 TD errors), seeded."""
    return np.random.default_rng(seed).uniform(0.05, 10.0, n)


def test_float64_buffer_keeps_float64_precision(options_and_checkpoints, tmp_path):
    """``PrioritizedReplayBuffer(dtype=torch.float64)`` over 3000 items, float64 priorities:
    tree values, importance weights, the ``state_dict`` trees and the dumped sum-tree file
    agree with the float64 model to 1e-12."""
    area = options_and_checkpoints
    run = option_run(area, PLAIN, BIG, dtype="float64", priority_dtype="float64")
    _accepted(run, "extend(3000) of a float64 buffer", lambda: run.extend(BIG, check=False),
              MIXED_DTYPES)
    _accepted(run, "update_priority(float64 priorities) of a float64 buffer",
              lambda: run.update(np.arange(BIG), _float64_priorities(BIG, 63)), MIXED_DTYPES)
    check(run, "of a float64 buffer", rtol=F64_RTOL)
    draw = run.buf.sample(1024, device.generator(63))
    params = run.params(batch=1024, seed=63)
    assert_close("importance weights of a float64 buffer != (q_i / min_j q_j)^-beta",
                 draw.weight, run.model.importance_weights(np.asarray(draw.index)),
                 params=params, rtol=F64_RTOL, cause=NOT_PASSED, link=OPTIONS_DOCS)
    q = run.model.tree_values()
    state = {}
    _accepted(run, "state_dict() of a float64 buffer",
              lambda: state.update(area.sampler_state(run.buf)), MIXED_DTYPES)
    held = np.array([float(state["_sum_tree"][i]) for i in range(BIG)])
    assert_close("state_dict['_sum_tree'][i] of a float64 buffer != (p + eps)^alpha", held, q,
                 params=params, rtol=F64_RTOL, cause="float32 trees in the checkpoint",
                 link=OPTIONS_DOCS)
    _, values = _dumped(area, run.buf, tmp_path / "sampler")
    assert_close("sumtree.memmap of a float64 buffer != (p + eps)^alpha", values[:BIG], q,
                 params=params, rtol=F64_RTOL, cause="the file holds float32-rounded values",
                 link=OPTIONS_DOCS)


@pytest.mark.parametrize("kind", EXAMPLE_BUFFER_KINDS)
def test_float64_priorities_in_a_float32_buffer(options_and_checkpoints, tmp_path, kind):
    """A default (float32) buffer of 3000 items given float64 priorities: accepted; its tree
    and weights follow the model (float32 rounding allowed) and its dumped sum-tree file holds
    float32 values, as TorchRL's float32 trees hold them."""
    area = options_and_checkpoints
    run = option_run(area, kind, BIG, priority_dtype="float64")
    run.extend(BIG, check=False)
    _accepted(run, "update_priority(float64 priorities) of a float32 buffer",
              lambda: run.update(np.arange(BIG), _float64_priorities(BIG, 64)), MIXED_DTYPES)
    check(run, "after float64 priorities")
    run.check_sample(1024, seed=64)
    _, values = _dumped(area, run.buf, tmp_path / "sampler")
    values = values[:BIG]
    rounded = values.astype(np.float32).astype(np.float64)
    off = np.flatnonzero(rounded != values)
    if off.size:
        raise AssertionError(message(
            "sumtree.memmap of a float32 buffer holds values float32 cannot hold",
            params=run.params(), expected="float32 values (what float32 trees hold)",
            actual=f"{off.size} of {BIG}, first at slot {off[0]}: {values[off[0]]!r}",
            link=OPTIONS_DOCS))
    assert_close("sumtree.memmap of a float32 buffer != (p + eps)^alpha", values,
                 run.model.tree_values(), params=run.params(), rtol=TREE_RTOL,
                 link=OPTIONS_DOCS)


# --------------------------------------------------------------------------------- sync


@pytest.mark.parametrize("upper", [None, 4.0], ids=lambda u: f"upper={u}")
@pytest.mark.parametrize("kind", EXAMPLE_BUFFER_KINDS)
def test_sync_false_follows_the_same_law(options, kind, upper):
    """``sync=False``: writes reach the sampler at the next ``sample`` (TorchRL catches up
    there), so each write is followed by a draw. Six items, priorities (10 the largest), two
    more items: they get the largest priority ever given (capped by ``upper_priority`` when
    one is asked for: the reference's classes have it, TorchRL's do not, pytorch/rl#2210)."""
    run = option_run(options, kind, 16, upper=upper, sync=False)
    run.extend(6, check=False)
    run.check_sample(64, seed=65)
    run.update(np.arange(6), [10.0, 2.0, 0.5, 3.0, 1.5, 0.25])
    check(run, "after update_priority", link=ISSUE_2210 if upper else OPTIONS_DOCS)
    run.extend(2, check=False)
    run.check_sample(256, seed=66)
    check(run, "after extend(2) and a draw", link=ISSUE_2210 if upper else OPTIONS_DOCS)


# ---------------------------------------------------------------------------- reduction

REDUCTIONS = {"max": np.max, "min": np.min, "mean": np.mean, "median": np.median}


@pytest.mark.parametrize("reduction", list(REDUCTIONS))
def test_reduction_of_a_td_error_with_several_entries(options, reduction):
    """``TensorDictPrioritizedReplayBuffer(reduction=...)``: a ``td_error`` of three entries
    per item (an ensemble of critics, say) becomes the item's priority by that reduction."""
    run = option_run(options, TD, 16, reduction=reduction)
    run.extend(8, check=False)
    td_error = grid(np.random.default_rng(67), 24, 16, 640).reshape(8, 3)
    run.buf.update_priority(np.arange(8), td_error)
    run.model.update(np.arange(8), REDUCTIONS[reduction](td_error, axis=1))
    run.log.append(f"update_tensordict_priority(td_error [8, 3], reduction={reduction})")
    check(run, f"after a [8, 3] td_error reduced by {reduction}")
    run.check_sample(128, seed=67)


# -------------------------------------------------------------- the search on boundaries

TREE_SIZES = [7, 3000, 100_000]  # one level; a level below the top; two levels below it


def _boundary_leaves(size: int) -> np.ndarray:
    """Small integers (exact prefix sums in float32), seeded, 40 % zeros, the first leaves
    zero (a block of zeros at the start of the top level at every size)."""
    rng = np.random.default_rng(size)
    leaves = rng.integers(1, 5, size).astype(np.float64)
    leaves[rng.random(size) < 0.4] = 0.0
    leaves[: min(size // 2, 150)] = 0.0
    leaves[-1] = max(leaves[-1], 1.0)
    return leaves


@pytest.mark.parametrize("size", TREE_SIZES, ids=lambda s: f"size={s}")
def test_a_mass_on_an_item_boundary_finds_a_leaf_of_positive_weight(request, impl,
                                                                    prioritized_replay, size):
    """A sum tree whose leaves include runs of zeros (items of priority 0 with ``eps = 0``),
    searched at 0 and at every prefix sum exactly: each leaf found has a positive weight and
    an interval ``[prefix before it, prefix through it]`` holding the mass."""
    area = capabilities.require(request, impl, "prioritized_replay", prioritized_replay,
                                "segment_tree")
    leaves = _boundary_leaves(size)
    tree = area.segment_tree(size=size, reduce="sum")
    tree.write(np.arange(size), leaves)
    through = np.cumsum(leaves)
    mass = np.unique(np.concatenate([[0.0], through]))
    found = np.asarray(tree.scan_lower_bound(mass), dtype=np.int64)
    params = {"size": size, "zero leaves": int((leaves == 0).sum()), "masses": len(mass)}
    if found.shape != mass.shape or ((found < 0) | (found >= size)).any():
        raise AssertionError(message("scan_lower_bound returned indices outside the tree",
                                     params=params, expected=f"{len(mass)} leaves in [0, {size})",
                                     actual=found))
    bad = np.flatnonzero((leaves[found] <= 0) | (through[found] - leaves[found] > mass)
                         | (through[found] < mass))
    if bad.size:
        i = bad[0]
        raise AssertionError(message(
            "a mass on an item boundary found a leaf of weight 0 or one whose interval does "
            "not hold it", params={**params, "mass": float(mass[i])},
            expected="a leaf of positive weight whose interval holds the mass",
            actual=f"leaf {found[i]} (weight {leaves[found[i]]:g}, interval "
                   f"[{through[found[i]] - leaves[found[i]]:g}, {through[found[i]]:g}]); "
                   f"{bad.size} of {len(mass)} masses so",
            cause="the search returns the first leaf whose prefix sum reaches the mass (a "
                  "lower bound), which at 0 is a leading leaf of weight 0",
            link=PER_PAPER))
