"""§5 Prioritized replay: the maximum priority within the buffer.

New transitions enter a prioritized buffer with the *default priority*, the largest priority
around, so that each is sampled soon (Schaul et al. 2015, Algorithm 1). These specs build a
buffer with in-buffer tracking on (TorchRL: ``max_priority_within_buffer=True``) and drive it
next to a brute-force float64 model of the ring buffer (conformance/oracles/prioritized_replay.py):

- the default priority is the largest raw priority among the items stored now, capped by the
  optional upper bound; an empty buffer uses the implementation's documented initial value;
- a write first evicts the items whose slots it reuses, then gives every new item the default of
  what remains: an item that left the buffer no longer counts (overwriting the slot of the
  maximum lowers the default; it is neither kept, nor reset to 1.0);
- the sum tree holds ``q = (p + eps) ** alpha`` once for every item, new items included;
- item ``i`` is drawn with probability ``q_i / sum_j q_j``, every stored index included, and its
  importance weight is ``(q_i / min_j q_j) ** -beta``;
- checkpoints, a change of ``alpha`` and two-dimensional storages keep all of this.

Inputs: priorities are multiples of 1/64 (float32-exact), so float32 trees see exactly the
oracle's inputs. Tolerances: tree values rtol 2e-6 and importance weights rtol 1e-5 (float32
trees round to 6e-8, their pow to ~1e-7); raw priorities rtol 1e-5 (TorchRL recovers the raw
maximum by inverting a float32 tree value). Every known-wrong variant named in the messages
differs from the right value by at least 3e-4 relative in these scenarios (the double transform
of a priority of 1, which only eps = 1e-3 tells apart), 30x the widest tolerance.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from conformance import capabilities, device
from conformance._assertions import assert_close, assert_refused_naming, message
from conformance.oracles import prioritized_replay as oracle

ALPHA, BETA, EPS = 0.6, 0.4, 1e-3
TREE_RTOL, RAW_RTOL, WEIGHT_RTOL = 2e-6, 1e-5, 1e-5
PER_PAPER = "https://arxiv.org/abs/1511.05952"
ISSUE_2210 = "https://github.com/pytorch/rl/issues/2210"
PR_2215 = "https://github.com/pytorch/rl/pull/2215"
PR_3925 = "https://github.com/pytorch/rl/pull/3925"
PR_4014 = "https://github.com/pytorch/rl/pull/4014"
BASELINES_171 = "https://github.com/openai/baselines/issues/171"


def grid(rng: np.random.Generator, n: int, low: int = 1, high: int = 640) -> np.ndarray:
    """``n`` priorities in [low/64, high/64), float32-exact."""
    return rng.integers(low, high, n) / 64.0


class Run:
    """One implementation's buffer, driven step by step next to the oracle."""

    def __init__(self, area, *, capacity, alpha=ALPHA, beta=BETA, eps=EPS, upper=None,
                 row_width=1):
        self.area = area
        self.buf = area.buffer(capacity=capacity, alpha=alpha, beta=beta, eps=eps,
                               upper_priority=upper, row_width=row_width,
                               **device.keyword(area))
        if device.declares(area):
            device.check_placed(self.buf, "the buffer")
        self.model = oracle.ReplayModel(capacity, alpha, beta, eps,
                                        initial_priority=float(area.initial_priority),
                                        upper_priority=upper, row_width=row_width)
        self.log: list[str] = []

    def params(self, **extra) -> dict:
        m = self.model
        p = {"capacity": m.capacity, "alpha": m.alpha, "beta": m.beta, "eps": m.eps}
        if m.upper_priority is not None:
            p["upper"] = m.upper_priority
        if m.row_width > 1:
            p["storage"] = f"{m.rows}x{m.row_width}"
        p.update(extra)
        p["steps"] = "; ".join(self.log[-4:]) or "none"
        return p

    # ------------------------------------------------------------------------ operations
    def extend(self, rows: int = 1, *, check: bool = True) -> np.ndarray:
        held = [float(self.model.priority[s]) for s in self.model.slots_of_next(rows)
                if not np.isnan(self.model.priority[s])]
        written = np.asarray(self.buf.extend(rows))
        slots = self.model.extend(rows)
        over = f" over priorities {_short(held)}" if held else ""
        self.log.append(f"extend({rows}) -> slots {_short(slots)}{over}")
        if not np.array_equal(written, slots):
            raise AssertionError(message(
                "extend() did not write the ring buffer's next slots", params=self.params(),
                expected=slots, actual=written))
        if check:
            self.check_new_items(slots)
        return slots

    def update(self, index, priority) -> None:
        """``priority``: one per index, or one for all of them (a number or a one-element
        sequence, passed as is)."""
        index = np.atleast_1d(np.asarray(index, dtype=np.int64))
        priority = np.asarray(priority, dtype=np.float64)
        self.buf.update_priority(index, priority if priority.ndim else priority.copy())
        self.model.update(index, np.broadcast_to(priority, index.shape))
        self.log.append(f"update({_short(index)} <- {_short(priority)})")

    def set_alpha(self, alpha: float) -> float:
        previous = self.model.alpha
        self.buf.set_alpha(alpha)
        self.model.set_alpha(alpha)
        self.log.append(f"alpha {previous} -> {alpha}")
        return previous

    # ---------------------------------------------------------------------------- checks
    def explain(self, cause: str | None, link: str | None) -> tuple[str | None, str | None]:
        """The likely cause and link of a failure; when the implementation documents that very
        design as its own choice, the message says so, in its words, with its documentation."""
        designs = getattr(self.area, "documented_design", None) or {}
        # the cause may name two candidates ("either ...; or ..."): any documented one counts
        key = next((k for text, k in oracle.DESIGNS.items() if cause and text in cause), None)
        if key in designs:
            account, docs = designs[key]
            return f"{cause} -- documented design of this implementation: {account}", docs
        return cause, link

    def check_len(self) -> None:
        if len(self.buf) != len(self.model):
            raise AssertionError(message("number of stored items", params=self.params(),
                                         expected=len(self.model), actual=len(self.buf)))

    def check_new_items(self, slots: np.ndarray) -> None:
        __tracebackhide__ = True
        self.check_len()
        tree = np.asarray(self.buf.tree_values(), dtype=np.float64)
        expected = self.model.tree_values()
        bad = ~np.isclose(tree[slots], expected[slots], rtol=TREE_RTOL, atol=0)
        cause = None
        if bad.any():
            cause = oracle.diagnose_new_item(self.model, float(tree[slots][bad][0]), slots)
        default = self.model.default_priority(evicting=slots)
        cause, link = self.explain(cause, ISSUE_2210)
        assert_close(
            f"tree value of the new item(s) != (d + eps)^alpha, d = {default:.6g} = the largest "
            "priority among the items that stay (initial value if none)",
            tree[slots], expected[slots], params=self.params(), rtol=TREE_RTOL, atol=0,
            cause=cause, link=link)

    def check_default(self, what: str = "default priority != largest raw priority stored", *,
                      link: str = ISSUE_2210) -> None:
        __tracebackhide__ = True
        actual = float(self.buf.default_priority())
        expected = self.model.default_priority()
        cause, link = self.explain(oracle.diagnose_default(self.model, actual, rtol=RAW_RTOL),
                                   link)
        assert_close(what, actual, expected, params=self.params(), rtol=RAW_RTOL, atol=0,
                     cause=cause, link=link)

    def check_tree(self, *, previous_alpha=None, what="tree values != (p + eps)^alpha",
                   link: str = PR_3925) -> None:
        __tracebackhide__ = True
        self.check_len()
        tree = np.asarray(self.buf.tree_values(), dtype=np.float64)
        expected = self.model.tree_values()
        cause = None
        if tree.shape == expected.shape:
            cause = oracle.diagnose_tree(self.model, tree, previous_alpha=previous_alpha,
                                         rtol=TREE_RTOL * 10)
        assert_close(what, tree, expected, params=self.params(), rtol=TREE_RTOL, atol=0,
                     cause=cause, link=link)

    def check_sample(self, n: int, seed: int):
        """Draw ``n`` items; check indices, items and importance weights; return the draw."""
        __tracebackhide__ = True
        draw = self.buf.sample(n, device.generator(seed))
        index = np.asarray(draw.index, dtype=np.int64)
        params = self.params(batch=n, seed=seed)
        stored = self.model.stored()
        outside = ~np.isin(index, stored)
        if len(index) != n or outside.any():
            raise AssertionError(message(
                "sample() returned indices that hold no item", params=params,
                expected=f"{n} indices among {_short(stored)}", actual=index))
        items = self.model.items_at(index)
        if not np.array_equal(np.asarray(draw.item), items):
            raise AssertionError(message(
                "sample() returned items other than those stored at the indices it reports",
                params=params, expected=items, actual=np.asarray(draw.item)))
        expected = self.model.importance_weights(index)
        cause, link = self.explain(oracle.diagnose_weights(self.model, index, draw.weight),
                                   PER_PAPER)
        assert_close("importance weights != (q_i / min_j q_j)^-beta", draw.weight, expected,
                     params=params, rtol=WEIGHT_RTOL, atol=0, cause=cause, link=link)
        return draw


def _short(values, limit: int = 6) -> str:
    values = [float(v) if not float(v).is_integer() else int(v) for v in np.ravel(values)]
    text = ", ".join(f"{v:g}" for v in values[:limit])
    return f"[{text}{', ...' if len(values) > limit else ''}]"


def _filled(area, capacity, priorities, **kwargs) -> Run:
    """A buffer holding ``len(priorities)`` items with these priorities (slot i <- p[i])."""
    run = Run(area, capacity=capacity, **kwargs)
    run.extend(len(priorities) // run.model.row_width)
    run.update(np.arange(len(priorities)), priorities)
    return run


# ------------------------------------------------------------------ the default priority


def test_empty_buffer_uses_the_documented_initial_priority(prioritized_replay):
    """Before any priority is known the default is the documented initial value (positive and
    finite), and the first items are stored with it."""
    init = float(prioritized_replay.initial_priority)
    assert np.isfinite(init) and init > 0, f"initial_priority must be positive, got {init}"
    run = Run(prioritized_replay, capacity=8)
    run.check_default("default priority of an empty buffer != documented initial value")
    run.extend(3)
    run.check_default()


@pytest.mark.parametrize("alpha", [0.3, 0.6, 0.9], ids=lambda a: f"alpha={a}")
def test_new_item_gets_the_largest_stored_priority(prioritized_replay, alpha):
    """Priorities [2, 10, 3, 0.5, 4] (the maximum is neither first nor last): a new item gets
    raw priority 10, i.e. tree value (10 + eps)^alpha, and the default stays 10."""
    run = _filled(prioritized_replay, 8, [2.0, 10.0, 3.0, 0.5, 4.0], alpha=alpha)
    run.check_default()
    run.extend(1)
    run.check_default()


# Slot 2 once held 20 (lowered to 3), so the historical maximum (20), the evicted maximum (10),
# the fallback (1.0) and the right answer (8) all differ.
_RING = [10.0, 8.0, 20.0, 2.0, 1.0]


def _ring(area, **kwargs) -> Run:
    run = _filled(area, 5, _RING, **kwargs)
    run.update([2], [3.0])  # contents [10, 8, 3, 2, 1]; the cursor is back at slot 0
    return run


@pytest.mark.parametrize("rows", [1, 2, 5], ids=lambda r: f"extend={r}")
def test_item_written_over_the_max_slot_gets_the_max_of_what_remains(prioritized_replay, rows):
    """Contents [10, 8, 3, 2, 1], cursor at slot 0 (the maximum, the oldest item). Writing
    ``rows`` items evicts slots 0..rows-1 first: the new items get 8, the largest priority that
    stays (extend=5 replaces everything: the initial value), not the evicted 10."""
    run = _ring(prioritized_replay)
    run.extend(rows)


def test_default_after_overwriting_the_max_slot_is_the_max_of_what_remains(prioritized_replay):
    """After the slot of the maximum was overwritten, the default is the largest priority
    stored (8 here): not the initial value 1.0 (torchrl erases the tracked maximum instead of
    recomputing it, pytorch/rl#2215), not the historical 20. The next write gets it too."""
    run = _ring(prioritized_replay)
    run.extend(1, check=False)  # the item written over slot 0 is the previous spec's subject
    run.check_default("default priority after overwriting the max slot != largest stored",
                      link=PR_2215)
    run.extend(1)
    run.check_default()


def test_lowering_the_max_priority_lowers_the_default(prioritized_replay):
    """Lowering the maximum 10 to 0.5 makes the default 8; raising another item to 12 makes it
    12; a new item then gets 12. The historical maximum (20) never comes back."""
    run = _ring(prioritized_replay)
    run.update([0], [0.5])
    run.check_default("default priority after lowering the maximum != largest stored")
    run.update([3], [12.0])
    run.check_default()
    run.update([3], [0.25])
    run.check_default("default priority after lowering the maximum again != largest stored")
    run.extend(1)
    run.check_default()


def test_upper_bound_caps_the_default(prioritized_replay):
    """With an upper bound of 4 the default is min(max stored, 4): 4 while 10 is stored, 3 once
    the maximum is 3, and min(initial, 4) while empty. A bound of 0.5 caps the initial value."""
    run = Run(prioritized_replay, capacity=6, upper=4.0)
    run.check_default("default priority of an empty buffer != min(initial, upper bound)")
    run.extend(2)
    run.update([0, 1], [10.0, 2.0])
    run.check_default("default priority != min(largest stored, upper bound)")
    run.extend(1)
    run.update([0], [3.0])
    run.check_default("default priority != min(largest stored, upper bound)")
    low = Run(prioritized_replay, capacity=4, upper=0.5)
    low.check_default("default priority of an empty buffer != min(initial, upper bound)")
    low.extend(2)


# -------------------------------------------------------------------------- the sum tree


@pytest.mark.parametrize("alpha", [0.3, 0.6, 0.9], ids=lambda a: f"alpha={a}")
def test_tree_holds_the_transformed_priority_once(prioritized_replay, alpha):
    """Every item, whether its priority was set or defaulted, is held in the tree once as
    (p + eps)^alpha: 3.9813 for p = 10 at alpha 0.6, not ((p + eps)^alpha + eps)^alpha = 2.2913
    (torchrl 0.5 - 0.13.2 wrote new items' defaults transformed twice, pytorch/rl#3925)."""
    run = _filled(prioritized_replay, 8, [10.0, 0.25, 3.0, 7.0], alpha=alpha)
    run.check_tree()
    run.extend(2)
    run.update([5], [0.5])
    run.extend(2)
    run.check_tree()


# ----------------------------------------------------------------------------- sampling

N_DRAWS, GOF_SIZE, GOF_SEED = 40_000, 1e-3, 6


@pytest.mark.parametrize("filled", [16, 11], ids=["full", "partly-filled"])
def test_sampling_frequencies_follow_the_priorities(prioritized_replay, filled):
    """40 000 draws (seed 6) against P(i) = q_i / sum q: Pearson's chi-square at size 1e-3
    (expected counts >= 660 per cell). Its power against the Baselines off-by-one (the last
    stored index never drawn, openai/baselines#171) is computed from the noncentral chi-square
    (noncentrality 1657 full, 2345 partly filled) and must be >= 0.999: it is 1.0 to double
    precision. With 11 of 16 slots filled, empty slots must never be drawn."""
    priorities = grid(np.random.default_rng(5), filled, 16, 640)
    priorities[-1] = 2.0  # the last stored item: neither negligible nor dominant
    run = _filled(prioritized_replay, 16, priorities)
    law = run.model.probabilities()
    power = oracle.chi_square_power(law, oracle.off_by_one_law(law), N_DRAWS, size=GOF_SIZE)
    assert power >= 0.999, f"test design: power {power} against the off-by-one is too low"
    draw = run.buf.sample(N_DRAWS, device.generator(GOF_SEED))
    counts = np.bincount(np.asarray(draw.index), minlength=16).astype(np.float64)[:16]
    fit = oracle.chi_square(counts, law, size=GOF_SIZE)
    if fit.rejected:
        raise AssertionError(message(
            f"sampling frequencies do not follow q_i / sum q (chi-square, size {GOF_SIZE:g})",
            params=run.params(draws=N_DRAWS, seed=GOF_SEED),
            expected=f"statistic <= {fit.critical:.4g} ({fit.dof} dof)",
            actual=f"{fit.statistic:.4g} (p = {fit.p_value:.3g})",
            detail=f"counts {_short(counts, 16)} vs expected {_short(np.round(N_DRAWS * law), 16)}",
            cause=oracle.diagnose_law(counts, run.model), link=PER_PAPER))


@pytest.mark.parametrize("filled", [8, 5], ids=["full", "partly-filled"])
def test_every_stored_index_is_reachable(prioritized_replay, filled):
    """Priorities 1..filled: every P(i) >= 0.052, so in 1024 draws (seed 8) a given stored
    index is missed with probability < 1e-24. The last stored index is the one a total mass
    that stops one item short never reaches (openai/baselines#171)."""
    run = _filled(prioritized_replay, 8, np.arange(1.0, filled + 1.0))
    draw = run.check_sample(1024, seed=8)
    missing = sorted(set(run.model.stored().tolist()) - set(np.asarray(draw.index).tolist()))
    if missing:
        last = int(run.model.stored()[-1])
        raise AssertionError(message(
            "stored indices never sampled in 1024 draws", params=run.params(draws=1024, seed=8),
            expected="every stored index", actual=f"missing {missing}",
            cause=oracle.OFF_BY_ONE if missing == [last] else None, link=BASELINES_171))


@pytest.mark.parametrize("beta", [0.4, 1.0], ids=lambda b: f"beta={b}")
def test_importance_weights_are_normalised_by_the_minimum(prioritized_replay, beta):
    """Weights (q_i / min_j q_j)^-beta over the stored items (so the least likely item weighs
    exactly 1), for 256 draws (seed 9); not (N P(i))^-beta, not normalised per batch. Two
    new items (at the default priority, the maximum) then join the law and the minimum."""
    run = _filled(prioritized_replay, 12, grid(np.random.default_rng(9), 10, 4, 640), beta=beta)
    run.check_sample(256, seed=9)
    run.extend(2)
    run.check_sample(256, seed=10)


SMALL_BATCH, SMALL_DRAWS = 4, 5


def test_small_batch_weights_are_normalised_by_the_buffer_minimum(prioritized_replay):
    """The weights of a batch that does not contain the least likely item are still
    (q_i / min_j q_j)^-beta over the whole buffer: none of them is 1. One item of priority 1/64
    among seven of 10 to 20 (P = 0.25% at alpha 0.6); five batches of 4 (seeds 14-18). A
    normaliser by the batch's own largest weight (Tianshou's ``weight / weight.max()``) gives 1
    to the batch's least likely item, 4.7x or more the right weight here, and escapes only if
    every batch holds the least likely item: probability below 1e-10 (asserted below), whatever
    the generator. The 256-draw spec above cannot tell: its batches always hold it."""
    priorities = np.concatenate([[1 / 64], grid(np.random.default_rng(14), 7, 640, 1280)])
    run = _filled(prioritized_replay, 8, priorities)
    p_least = float(run.model.probabilities()[0])
    escape = (1.0 - (1.0 - p_least) ** SMALL_BATCH) ** SMALL_DRAWS
    assert escape < 1e-10, f"test design: a batch-max normaliser escapes with p = {escape:.3g}"
    for seed in range(14, 14 + SMALL_DRAWS):
        run.check_sample(SMALL_BATCH, seed=seed)


# --------------------------------------------------------------- at real capacities

# Every spec above builds at most 32 items; a real buffer holds 1e5 - 1e6, where a segment
# tree has several levels below its root (the reference's tree gains a level past 1024 leaves
# and another past 32 768; TorchRL's C++ trees have log2(N) levels). 3000 and 100 000 items
# run those levels; 1e6 would add nothing but time (same number of levels as 1e5).
CAPACITIES = [3000, 100_000]
HEAVY, LIGHT_CELLS, LAW_DRAWS, LAW_SIZE = 64, 32, 20_000, 1e-4


def _law_cells(run: Run, heavy: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Cells for a goodness-of-fit test over many leaves: each heavy item its own cell, the
    other stored items in ``LIGHT_CELLS`` runs of consecutive slots. Returns the cell of every
    slot (-1 for empty slots) and the cells' probabilities under the model."""
    m = run.model
    cell = np.full(m.capacity, -1, dtype=np.int64)
    stored = m.stored()
    cell[stored] = HEAVY + (stored * LIGHT_CELLS) // m.capacity
    cell[heavy] = np.arange(len(heavy))
    law = np.bincount(cell[stored], weights=m.probabilities()[stored],
                      minlength=HEAVY + LIGHT_CELLS)
    return cell, law


def _check_law(run: Run, heavy: np.ndarray, seed: int) -> None:
    """``LAW_DRAWS`` draws (indices, items and weights checked), then Pearson's chi-square of
    their cells against the model at size ``LAW_SIZE``."""
    __tracebackhide__ = True
    draw = run.check_sample(LAW_DRAWS, seed=seed)
    cell, law = _law_cells(run, heavy)
    counts = np.bincount(cell[np.asarray(draw.index)], minlength=len(law)).astype(np.float64)
    fit = oracle.chi_square(counts, law, size=LAW_SIZE)
    if fit.rejected:
        worst = int(np.argmax((counts - LAW_DRAWS * law) ** 2 / np.maximum(law, 1e-300)))
        where = f"heavy item {int(heavy[worst])}" if worst < len(heavy) else "a run of light items"
        raise AssertionError(message(
            f"sampling frequencies over {len(run.model)} items do not follow q_i / sum q "
            f"(chi-square over {len(law)} cells, size {LAW_SIZE:g})",
            params=run.params(draws=LAW_DRAWS, seed=seed),
            expected=f"statistic <= {fit.critical:.4g} ({fit.dof} dof)",
            actual=f"{fit.statistic:.4g} (p = {fit.p_value:.3g})",
            detail=(f"worst cell: {where}, {int(counts[worst])} draws, expected "
                    f"{LAW_DRAWS * law[worst]:.1f}"),
            cause="the descent of a multi-level segment tree picks the wrong leaves",
            link=PER_PAPER))


@pytest.mark.parametrize("capacity", CAPACITIES, ids=lambda n: f"capacity={n}")
def test_multi_level_trees_agree_with_the_model(prioritized_replay, capacity):
    """A buffer of 3000 or 100 000 items, against the same brute-force model as above: 7/8 of
    it filled (new items at the initial priority), every priority set at once (light ones in
    [1/64, 1/4), 64 heavy ones in [40, 80) at seeded slots spread over the tree), then the
    maximum lowered, a write that wraps around the ring over heavy items, a new minimum deep
    in the tree and the old one raised; then a checkpoint restored into a new buffer and alpha
    changed there (both rebuild every level). After each step: every tree value, the default
    (the largest priority stored), and 20 000 draws (indices, items, weights and their law by
    chi-square over 64 heavy cells and 32 runs of light ones). Slot numbers are seeded (13)."""
    rng = np.random.default_rng(13)
    run = Run(prioritized_replay, capacity=capacity)
    run.extend(capacity - capacity // 8)
    stored = run.model.stored()
    heavy = np.sort(rng.choice(stored, HEAVY, replace=False))
    priorities = grid(rng, len(stored), 1, 16)
    priorities[heavy] = grid(rng, HEAVY, 40 * 64, 80 * 64)
    run.update(stored, priorities)
    run.check_tree()
    run.check_default()
    _check_law(run, heavy, seed=21)

    top = int(heavy[np.argmax(run.model.priority[heavy])])
    run.update([top], [0.125])  # the maximum, deep in the tree, goes light
    run.check_default("default priority after lowering the maximum != largest stored")
    slots = run.extend(capacity // 4)  # fills the empty tail, then wraps over slots 0, 1, ...
    run.check_default()
    run.update(slots, grid(rng, len(slots), 1, 16))  # the new items go light
    run.check_default("default priority after lowering the maximum != largest stored")
    run.check_tree()

    old_min = int(np.nanargmin(run.model.priority))
    low = int(rng.choice(np.setdiff1d(run.model.stored(), [old_min])))
    run.update([low, old_min], [0.0, 1.0])  # a new minimum q = eps^alpha, the old one raised
    run.check_tree()
    heavy = heavy[run.model.priority[heavy] >= 40]
    _check_law(run, heavy, seed=22)

    # a checkpoint restored into a new buffer, then alpha changed: both rebuild every level
    state, at_checkpoint = run.buf.state_dict(), run.model.copy()
    restored = Run(prioritized_replay, capacity=capacity)
    restored.buf.load_state_dict(state)
    restored.model = at_checkpoint
    restored.log.append("load_state_dict(checkpoint of the buffer above)")
    restored.check_tree(what="tree values after load_state_dict != (p + eps)^alpha")
    restored.check_default("default priority after load_state_dict != largest stored")
    _check_law(restored, heavy, seed=23)
    previous = restored.set_alpha(0.9)
    restored.check_tree(previous_alpha=previous, link=PR_4014,
                        what=f"tree values after alpha {previous} -> 0.9 != (p + eps)^alpha")
    restored.check_default()
    _check_law(restored, heavy, seed=24)


# The maximum's slot sits far from the first top node (slot 0's ancestors), and each write that
# evicts a maximum reaches it from the ring cursor in one call: the default must come from
# what stays, so every level above the evicted slots must be up to date before it is read.
_EVICTED = {700: 9.0, 1500: 7.5, -1: 6.25}  # slot (-1: the last) -> priority


@pytest.mark.parametrize("capacity", CAPACITIES, ids=lambda n: f"capacity={n}")
def test_evicting_a_maximum_deep_in_a_multi_level_tree(prioritized_replay, capacity):
    """A full buffer of 3000 or 100 000 items at the initial priority, three of them raised:
    9 in slot 700, 7.5 in slot 1500, 6.25 in the last slot. One write from slot 0 up to and
    including the slot of 9 evicts it: its items get 7.5 (the largest priority that stays, not
    the evicted 9), and the default is 7.5; the new items are lowered to 0.5, and a second
    write up to the slot of 7.5 evicts that one: 6.25. After each write: the new items' tree
    values, the default, every tree value and 256 draws (indices, items, weights) against the
    model. Deterministic slots; draws seeded (31, 32)."""
    run = Run(prioritized_replay, capacity=capacity)
    run.extend(capacity)  # the ring is full; the cursor is back at slot 0
    slots = [s % capacity for s in _EVICTED]
    run.update(slots, list(_EVICTED.values()))
    run.check_default()
    for step, (evicted, seed) in enumerate(zip(slots[:2], (31, 32), strict=True)):
        cursor = int(run.model.cursor)
        written = run.extend(evicted - cursor + 1)  # checks the new items' tree values
        run.check_default(f"default priority after evicting the maximum in slot {evicted} "
                          "!= largest stored")
        run.check_tree()
        run.check_sample(256, seed=seed)
        if step == 0:
            run.update(written, 0.5)
            run.check_default()


# ------------------------------------------------------------------ edge inputs


UPDATE_EDGES = {
    # name: (index, priority, what it is)
    "repeated-index": ([2, 5, 2], [9.0, 3.0, 0.5], "slot 2 twice: its last priority (0.5) wins"),
    "repeated-max": ([3, 6, 3], [50.0, 2.0, 0.25],
                     "50 set and replaced in the same call: it is not the maximum"),
    "one-priority": ([1, 4, 6], 7.0, "one number for three indices"),
    "one-priority-in-a-list": ([1, 4, 6], [7.0], "a one-element sequence for three indices"),
}


@pytest.mark.parametrize("case", list(UPDATE_EDGES))
def test_update_priority_edge_inputs(prioritized_replay, case):
    """``update_priority`` as training code calls it: a TD-error batch that names a slot twice
    (sampling is with replacement, so a batch often does) sets it to the last priority given,
    and the default is the largest priority stored after the call; one number for several
    indices (or a one-element sequence: ``torch.tensor([p])``) sets them all. Tree, default, new items and draws are checked after it."""
    index, priority, _ = UPDATE_EDGES[case]
    run = _filled(prioritized_replay, 8, [1.0, 2.0, 4.0, 3.0, 6.0, 5.0, 0.5, 1.5])
    run.update(index, priority)
    run.check_tree(what=f"tree values after update_priority ({case}) != (p + eps)^alpha")
    run.check_default(f"default priority after update_priority ({case}) != largest stored")
    run.extend(1)
    run.check_sample(256, seed=15)


def test_beta_zero_gives_weights_of_one(prioritized_replay):
    """beta = 0 (the start of the usual beta schedule, or no correction at all) is a valid
    value: every importance weight is (q_i / min q)^0 = 1."""
    run = _filled(prioritized_replay, 8, [1.0, 2.0, 4.0, 3.0, 6.0, 5.0, 0.5, 1.5], beta=0.0)
    run.check_sample(64, seed=16)


@pytest.mark.parametrize("name", ["alpha", "beta"])
def test_a_negative_exponent_is_refused_naming_it(prioritized_replay, name):
    """alpha < 0 would favour the items with the smallest TD errors, beta < 0 would amplify the
    bias it is meant to correct: building a buffer with either fails at once, with an error
    that names the parameter and the value given (not at the first sample, not silently)."""
    kwargs = {"capacity": 8, "alpha": ALPHA, "beta": BETA, "eps": EPS, name: -0.5,
              **device.keyword(prioritized_replay)}
    assert_refused_naming(lambda: prioritized_replay.buffer(**kwargs), name, -0.5, params=kwargs)


def test_checkpoint_carries_its_alpha(prioritized_replay):
    """A checkpoint taken at alpha 0.6, loaded into a buffer built with alpha 0.9 (an annealed
    run resumed with its initial arguments): the buffer is the checkpointed one, alpha
    included. Its tree holds (p + eps)^0.6, new items are transformed with 0.6, draws and
    weights follow 0.6."""
    source = _filled(prioritized_replay, 8, [2.0, 10.0, 3.0, 1.0, 4.0, 5.0], alpha=0.6)
    state = source.buf.state_dict()
    target = _filled(prioritized_replay, 8, [40.0] * 8, alpha=0.9)
    target.buf.load_state_dict(state)
    target.model = source.model.copy()
    target.log.append("load_state_dict(checkpoint taken at alpha 0.6)")
    target.check_tree(what="tree values after loading a checkpoint of another alpha != "
                      "(p + eps)^alpha of the checkpoint", previous_alpha=0.9)
    target.extend(2)
    target.check_tree()
    target.check_sample(256, seed=17)


# -------------------------------------------------------------- checkpoints, alpha, 2-D


def test_state_dict_round_trips_the_tracked_maximum(prioritized_replay):
    """A checkpoint of a partly filled buffer (6 of 8 slots), taken after the maximum was
    lowered (10 -> 0.5: the maximum is 5), restores that maximum into a full buffer that held
    40, and into the source after it moved on to 50; the next items then get 5."""
    source = _filled(prioritized_replay, 8, [2.0, 10.0, 3.0, 1.0, 4.0, 5.0])
    source.update([1], [0.5])
    state, at_checkpoint = source.buf.state_dict(), source.model.copy()
    source.update([5], [50.0])

    other = _filled(prioritized_replay, 8, [40.0] * 8)
    for run in (other, source):
        run.buf.load_state_dict(state)
        run.model = at_checkpoint.copy()
        run.log.append("load_state_dict(checkpoint)")
        run.check_default("default priority after load_state_dict != checkpointed maximum")
        run.check_tree()
        run.extend(1)  # into the empty slot 6: the new item gets 5
        run.extend(2)  # slot 7, then over slot 0 (priority 2): 5 again
        run.check_default()
        run.check_sample(64, seed=11)


@pytest.mark.parametrize("alphas", [(0.6, 0.9), (0.6, 0.3), (0.6, 0.0, 0.8)],
                         ids=["0.6-0.9", "0.6-0.3", "0.6-0-0.8"])
def test_changing_alpha_keeps_the_tree_and_the_maximum_consistent(prioritized_replay, alphas):
    """After alpha changes (e.g. annealed by a scheduler), every item is held as
    (p + eps)^alpha_new, the default is still the largest raw priority, new items and sampling
    use the new alpha. Through alpha = 0 too: the raw priorities must survive it (torchrl keeps
    them only in the tree, so it cannot, and warns; pytorch/rl#4014)."""
    run = _filled(prioritized_replay, 8, grid(np.random.default_rng(12), 8, 16, 640),
                  alpha=alphas[0])
    run.update([int(np.argmax(run.model.priority))], [0.75])  # the maximum moves
    for alpha in alphas[1:]:
        previous = run.set_alpha(alpha)
        run.check_tree(previous_alpha=previous, link=PR_4014,
                       what=f"tree values after alpha {previous} -> {alpha} != (p + eps)^alpha")
        run.check_default()
    run.extend(1)
    run.check_default()
    run.check_sample(256, seed=12)


def test_two_dimensional_storage(prioritized_replay):
    """A [4, 3] storage written a row at a time: flat (row-major) indices, the default over
    all stored items, whole-row overwrites and sampled indices that match the items."""
    run = Run(prioritized_replay, capacity=12, row_width=3)
    run.extend(2)  # rows 0 and 1 (slots 0-5) at the initial priority
    run.update([1, 4], [6.0, 9.0])
    run.check_default()  # 9
    run.extend(2)  # rows 2 and 3 (slots 6-11) get 9
    run.update([4, 6, 7, 8, 9, 10, 11], [0.5, 1.0, 1.5, 0.75, 3.0, 2.0, 0.25])
    run.check_default("default priority after lowering the maximum != largest stored")  # 6
    run.update([1], [0.5])
    run.check_default("default priority after lowering the maximum != largest stored")  # 3
    run.extend(1)  # row 0 (1, 0.5, 1) is replaced; its new items get 3 (slot 9)
    run.check_default()
    run.check_tree()
    run.check_sample(256, seed=13)


# ------------------------------------------------------------ long seeded random sequences


def _random_step(run: Run, rng: np.random.Generator, step: int) -> None:
    m = run.model
    kind = rng.choice(["extend", "update", "lower-max", "sample"], p=[0.35, 0.35, 0.15, 0.15])
    if kind == "extend" or len(m) == 0:
        run.extend(int(rng.integers(1, min(4, m.rows) + 1)))
    elif kind == "update":
        stored = m.stored()
        index = rng.choice(stored, size=int(rng.integers(1, min(6, len(stored)) + 1)),
                           replace=False)
        run.update(index, grid(rng, len(index), 0, 1280))
    elif kind == "lower-max":
        run.update([int(np.nanargmax(m.priority))], grid(rng, 1, 0, 64))
    else:
        run.check_sample(64, seed=1000 + step)
    run.check_default()
    run.check_tree()


@pytest.mark.parametrize("seed", [0, 1, 2], ids=lambda s: f"seed={s}")
def test_random_sequences_agree_with_the_model(prioritized_replay, seed):
    """200 seeded random steps (extend 1-4 items over a ring of 16, update 1-6 priorities,
    lower the maximum, sample 64) against the oracle after every step: new items' tree values,
    the default priority, every tree value, sampled indices, items and weights."""
    rng = np.random.default_rng(seed)
    run = Run(prioritized_replay, capacity=16)
    for step in range(200):
        _random_step(run, rng, step)


@st.composite
def programs(draw):
    capacity = draw(st.integers(1, 9), label="capacity")
    ops = draw(st.lists(st.tuples(st.sampled_from(["extend", "update", "lower-max", "sample"]),
                                  st.integers(0, 2**31 - 1)), min_size=1, max_size=12),
               label="ops")
    return capacity, ops


@given(program=programs())
def test_property_random_programs_agree_with_the_model(prioritized_replay, program):
    """Short random programs on small rings (capacity 1-9), shrunk by hypothesis to a minimal
    failing sequence; each step is checked as in the seeded sequences."""
    capacity, ops = program
    run = Run(prioritized_replay, capacity=capacity)
    for kind, seed in ops:
        rng = np.random.default_rng(seed)
        m = run.model
        if kind == "extend" or len(m) == 0:
            run.extend(int(rng.integers(1, m.rows + 1)))
        elif kind == "update":
            stored = m.stored()
            index = rng.choice(stored, size=int(rng.integers(1, len(stored) + 1)), replace=False)
            run.update(index, grid(rng, len(index), 0, 1280))
        elif kind == "lower-max":
            run.update([int(np.nanargmax(m.priority))], grid(rng, 1, 0, 64))
        else:
            run.check_sample(32, seed=seed)
        run.check_default()
        run.check_tree()


# ------------------------------------------------------- issue #31: zero mass, historical max


def test_all_zero_priorities_with_eps_zero_refuse_to_sample(prioritized_replay):
    """eps = 0 and every priority 0: every q is 0, no item has any probability. ``sample``
    refuses (RuntimeError or ValueError, as TorchRL's "non-positive p_sum") instead of
    returning draws, and the buffer is intact: once priorities are positive again it samples
    by them."""
    run = _filled(prioritized_replay, 8, [0.0] * 8, eps=0.0)
    run.check_tree(what="tree values of zero priorities with eps = 0 != 0")
    try:
        draw = run.buf.sample(16, device.generator(17))
    except (RuntimeError, ValueError):
        pass
    else:
        raise AssertionError(message(
            "sample() of a buffer whose every q = (0 + 0)^alpha is 0 returned draws",
            params=run.params(batch=16, seed=17), expected="RuntimeError or ValueError",
            actual=f"indices {_short(draw.index)}, weights {_short(draw.weight)}"))
    run.update(np.arange(8), [1.0, 2.0, 4.0, 3.0, 6.0, 5.0, 0.5, 1.5])
    run.check_tree()
    run.check_sample(256, seed=18)


class _HistoricalRun(Run):
    """A buffer with in-buffer tracking off, next to the model that keeps the largest priority
    ever given."""

    def __init__(self, area, *, capacity):
        self.area = area
        self.buf = area.historical_buffer(capacity=capacity, alpha=ALPHA, beta=BETA, eps=EPS,
                                          **device.keyword(area))
        self.model = oracle.ReplayModel(capacity, ALPHA, BETA, EPS,
                                        initial_priority=float(area.initial_priority),
                                        within_buffer=False)
        self.log = ["max_priority_within_buffer=False"]

    def explain(self, cause, link):
        # the diagnoses name in-buffer designs: here the historical maximum is the spec
        return None, "https://github.com/pytorch/rl/blob/v0.14.1/torchrl/data/replay_buffers/" \
            "samplers/prioritized.py"


@pytest.fixture
def historical(request, impl, prioritized_replay):
    return capabilities.require(request, impl, "prioritized_replay", prioritized_replay,
                                "historical_buffer")


def test_without_in_buffer_tracking_the_default_is_the_historical_maximum(historical):
    """``max_priority_within_buffer=False`` (TorchRL's default): the default priority is the
    largest priority ever given, also after that item was lowered or overwritten; before any,
    the documented initial value. On a ring of 8: filled, priorities set, the maximum lowered,
    a wrap over three slots, a new maximum set and then overwritten by a whole ring of new
    items; default, tree (new items included) and draws checked along the way. Seeded (19)."""
    rng = np.random.default_rng(19)
    run = _HistoricalRun(historical, capacity=8)
    run.check_default("default priority of an empty buffer != the initial value")
    run.extend(8)
    run.update(np.arange(8), grid(rng, 8, 1, 640))
    run.check_tree()
    run.check_default("default priority != largest priority ever given")
    top = int(np.nanargmax(run.model.priority))
    run.update([top], [0.125])
    run.check_default("default priority after lowering the maximum != largest ever given")
    run.extend(3)  # slots 0, 1, 2 get the historical maximum
    run.update([5], [30.0])
    run.check_default("default priority != largest priority ever given")
    run.extend(8)  # the whole ring rewritten: 30 left the buffer, the default stays 30
    run.check_default("default priority after the maximum was overwritten != largest ever "
                      "given")
    run.update(np.arange(8), grid(rng, 8, 1, 64))
    run.check_tree()
    run.check_sample(256, seed=20)
