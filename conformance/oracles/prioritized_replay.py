"""A brute-force model of a ring-buffer replay with priorities (Schaul et al. 2015), float64.

Every quantity is recomputed from the full contents on every call (O(capacity)), so nothing
here can drift or be stale; that is the point of an oracle.

The buffer holds ``capacity`` slots, numbered row-major over a storage of shape
``[capacity // row_width, row_width]`` (``row_width == 1``: a 1-D storage). ``extend(rows)``
writes ``rows`` whole rows at the ring cursor. Each stored item has a raw priority ``p``; the
sampling weight held for it is ``q = (p + eps) ** alpha``.

Semantics (the spec of conformance/test_prioritized_replay.py, in-buffer tracking on):

- The *default priority* is the largest raw priority among the items currently stored, capped by
  the optional ``upper_priority``; when nothing is stored it is ``initial_priority`` (capped).
- A write first evicts the items whose slots it reuses, then gives every new item the default
  priority of what remains. An item that left the buffer no longer counts: overwriting the slot
  of the maximum lowers the default to the largest priority that stays.
- Sampling draws stored slot ``i`` with probability ``q_i / sum_j q_j``; the importance weight of
  a draw is ``(q_i / min_j q_j) ** (-beta)``, i.e. ``(N P(i)) ** -beta`` normalised by its
  largest possible value.

The model also keeps *shadow* quantities (the historical maximum, the maximum before the last
eviction) and ``WRONG_*`` formulas: specs use them only to name the likely cause of a failure,
never as expected values.
"""

from __future__ import annotations

import copy
import math
from dataclasses import dataclass, field

import numpy as np
from scipy import stats

# ------------------------------------------------------------------ names of known-wrong variants
HISTORICAL_MAX = (
    "historical maximum: the default is the largest priority ever seen, including items that "
    "already left the buffer (max_priority_within_buffer off; pytorch/rl#2210)"
)
FALLBACK_AFTER_OVERWRITE = (
    "fallback to the initial value after the max slot was overwritten: the tracked maximum was "
    "erased instead of recomputed (torchrl 0.5-0.14 `_maybe_erase_max_priority`; pytorch/rl#2215)"
)
INHERITED_FROM_EVICTED = (
    "the new item inherited the priority of the item it overwrote: the default was computed "
    "before the eviction (torchrl `mark_update` runs before `_maybe_erase_max_priority`)"
)
DOUBLE_TRANSFORM = (
    "double transform: the tree holds ((p + eps)^alpha + eps)^alpha for new items "
    "(torchrl 0.5-0.13.2; pytorch/rl#3925)"
)
TRANSFORMED_DEFAULT = (
    "the default priority is reported in the tree domain (p + eps)^alpha instead of as a raw "
    "priority (torchrl < 0.13.3)"
)
UNTRANSFORMED = "the raw priority is stored without the (p + eps)^alpha transform"
UPPER_BOUND_IGNORED = "the upper bound on the default priority is ignored"
STALE_ALPHA = (
    "the tree still holds priorities transformed with the previous alpha (alpha change not "
    "applied to stored entries; pytorch/rl#4014)"
)
OFF_BY_ONE = (
    "the last stored index is never sampled: the total mass excludes it (the Baselines "
    "off-by-one, openai/baselines#171)"
)
UNNORMALISED_WEIGHTS = (
    "importance weights not normalised by the minimum: (N P(i))^-beta instead of "
    "(q_i / min q)^-beta"
)
BATCH_NORMALISED_WEIGHTS = (
    "importance weights normalised by the largest weight in the batch instead of the minimum "
    "priority of the buffer"
)
NO_BETA = "importance weights ignore beta"

#: the known-wrong designs that an implementation may document as its own choice, by the name
#: under which it does (``PrioritizedReplay.documented_design``): the failure message then quotes
#: the implementation's own account and links its documentation
DESIGNS = {
    HISTORICAL_MAX: "historical_max",
    BATCH_NORMALISED_WEIGHTS: "batch_normalised_weights",
}


@dataclass
class ReplayModel:
    capacity: int
    alpha: float
    beta: float
    eps: float = 1e-8
    initial_priority: float = 1.0
    upper_priority: float | None = None
    row_width: int = 1
    #: False: the default is the largest priority ever given, items gone included (TorchRL's
    #: max_priority_within_buffer=False, the conformance.interface.PrioritizedHistorical specs)
    within_buffer: bool = True
    # state
    item: np.ndarray = field(default=None)  # item id per flat slot, -1 when empty
    priority: np.ndarray = field(default=None)  # raw priority per flat slot, nan when empty
    cursor: int = 0  # next row to write
    next_item: int = 0
    # shadows, for diagnosis only
    historical_max: float | None = None
    max_before_last_eviction: float | None = None
    evicted_a_maximum: bool = False  # some write so far replaced an item holding the maximum

    def __post_init__(self):
        if self.capacity % self.row_width:
            raise ValueError("capacity must be a multiple of row_width")
        self.item = np.full(self.capacity, -1, dtype=np.int64)
        self.priority = np.full(self.capacity, np.nan)

    # -------------------------------------------------------------------------------- layout
    @property
    def rows(self) -> int:
        return self.capacity // self.row_width

    @property
    def shape(self) -> tuple[int, ...]:
        return (self.capacity,) if self.row_width == 1 else (self.rows, self.row_width)

    def __len__(self) -> int:
        return int(np.sum(~np.isnan(self.priority)))

    def stored(self) -> np.ndarray:
        """Flat indices of the stored items, ascending."""
        return np.flatnonzero(~np.isnan(self.priority))

    def copy(self) -> ReplayModel:
        return copy.deepcopy(self)

    # ----------------------------------------------------------------------- the max priority
    def stored_max(self, evicting=()) -> float | None:
        keep = ~np.isnan(self.priority)
        keep[np.asarray(evicting, dtype=np.int64)] = False
        return float(self.priority[keep].max()) if keep.any() else None

    def _cap(self, value: float) -> float:
        return value if self.upper_priority is None else min(value, self.upper_priority)

    def default_priority(self, evicting=()) -> float:
        """Raw priority of an item written now, after ``evicting`` (flat slots) left."""
        m = self.stored_max(evicting) if self.within_buffer else self.historical_max
        return self._cap(self.initial_priority if m is None else m)

    # ---------------------------------------------------------------------------- mutations
    def slots_of_next(self, rows: int) -> np.ndarray:
        if not 0 < rows <= self.rows:
            raise ValueError(f"rows must be in [1, {self.rows}]")
        r = (self.cursor + np.arange(rows)) % self.rows
        return (r[:, None] * self.row_width + np.arange(self.row_width)[None, :]).ravel()

    def extend(self, rows: int = 1) -> np.ndarray:
        """Write ``rows`` rows of new items; return their flat slots (row-major)."""
        slots = self.slots_of_next(rows)
        self.max_before_last_eviction = self.stored_max()
        if self.max_before_last_eviction is not None and np.any(
                self.priority[slots] == self.max_before_last_eviction):
            self.evicted_a_maximum = True
        default = self.default_priority(evicting=slots)
        self.item[slots] = np.arange(self.next_item, self.next_item + len(slots))
        self.next_item += len(slots)
        self.priority[slots] = default
        self._seen(default)
        self.cursor = (self.cursor + rows) % self.rows
        return slots

    def update(self, index, priority) -> None:
        """Set raw priorities of stored slots; a repeated index takes its last value."""
        index = np.atleast_1d(np.asarray(index, dtype=np.int64))
        priority = np.broadcast_to(np.asarray(priority, dtype=np.float64), index.shape)
        if np.isnan(self.priority[index]).any():
            raise ValueError("update of an empty slot")
        # the last of repeated indices wins: keep each index's last position only
        last = len(index) - 1 - np.unique(index[::-1], return_index=True)[1]
        self.priority[index[last]] = priority[last]
        self._seen(float(priority.max()))

    def set_alpha(self, alpha: float) -> None:
        self.alpha = float(alpha)

    def _seen(self, value: float) -> None:
        self.historical_max = value if self.historical_max is None else max(
            self.historical_max, value)

    # ------------------------------------------------------------------ derived observables
    def transform(self, p, alpha: float | None = None):
        a = self.alpha if alpha is None else alpha
        return (np.asarray(p, dtype=np.float64) + self.eps) ** a

    def tree_values(self) -> np.ndarray:
        """``(p + eps) ** alpha`` per stored slot, in flat order."""
        return self.transform(self.priority[self.stored()])

    def probabilities(self) -> np.ndarray:
        """Sampling law over all ``capacity`` flat slots (0 for empty slots)."""
        q = np.zeros(self.capacity)
        s = self.stored()
        q[s] = self.transform(self.priority[s])
        return q / q.sum()

    def importance_weights(self, index) -> np.ndarray:
        q = self.transform(self.priority)
        qmin = np.nanmin(q)
        return (q[np.asarray(index, dtype=np.int64)] / qmin) ** (-self.beta)

    def items_at(self, index) -> np.ndarray:
        return self.item[np.asarray(index, dtype=np.int64)]


# ------------------------------------------------------------------------------ diagnosis
def _near(a: float, b: float | None, rtol: float) -> bool:
    return b is not None and math.isclose(a, b, rel_tol=rtol, abs_tol=0.0)


def diagnose_default(model: ReplayModel, observed: float, *, rtol: float = 1e-5) -> str | None:
    """Name the known-wrong value a reported default priority (raw) matches, if one does.

    Call it right after the step that produced ``observed`` (the shadows refer to it)."""
    expected = model.default_priority()
    if _near(observed, expected, rtol):
        return None
    candidates = {
        HISTORICAL_MAX: model.historical_max,
        TRANSFORMED_DEFAULT: float(model.transform(expected)),
    }
    if model.evicted_a_maximum:
        candidates[FALLBACK_AFTER_OVERWRITE] = model.initial_priority
    m = model.stored_max()
    if model.upper_priority is not None and m is not None:
        candidates[UPPER_BOUND_IGNORED] = m
    return _unique_hit(observed, candidates, expected, rtol)


def diagnose_new_item(model: ReplayModel, observed_q: float, evicted: np.ndarray, *,
                      rtol: float = 1e-5) -> str | None:
    """Name the known-wrong value the tree value of a just-written item matches.

    ``model`` is the state after the write; ``evicted`` are the slots the write reused."""
    default = model.default_priority(evicting=evicted)
    # the state just before the write is needed for the pre-eviction maximum
    candidates = {
        DOUBLE_TRANSFORM: float(model.transform(model.transform(default))),
        UNTRANSFORMED: default,
        HISTORICAL_MAX: _tf(model, model.historical_max),
        INHERITED_FROM_EVICTED: _tf(model, model.max_before_last_eviction),
    }
    if model.evicted_a_maximum:
        candidates[FALLBACK_AFTER_OVERWRITE] = _tf(model, model._cap(model.initial_priority))
    if model.upper_priority is not None:
        uncapped = model.stored_max(evicting=evicted)
        candidates[UPPER_BOUND_IGNORED] = _tf(model, uncapped)
    return _unique_hit(observed_q, candidates, float(model.transform(default)), rtol)


def diagnose_tree(model: ReplayModel, observed_q: np.ndarray, *, previous_alpha=None,
                  rtol: float = 1e-5) -> str | None:
    """Name a known-wrong transform that explains a whole vector of tree values."""
    raw = model.priority[model.stored()]
    expected = model.transform(raw)
    variants = {
        DOUBLE_TRANSFORM: model.transform(model.transform(raw)),
        UNTRANSFORMED: raw,
    }
    if previous_alpha is not None and previous_alpha != model.alpha:
        variants[STALE_ALPHA] = model.transform(raw, previous_alpha)
    bad = ~np.isclose(observed_q, expected, rtol=rtol, atol=0)
    hits = [name for name, v in variants.items()
            if np.allclose(observed_q[bad], v[bad], rtol=rtol, atol=0)
            and not np.allclose(v[bad], expected[bad], rtol=rtol, atol=0)]
    return _name(hits)


def diagnose_weights(model: ReplayModel, index, observed) -> str | None:
    index = np.asarray(index, dtype=np.int64)
    observed = np.asarray(observed, dtype=np.float64)
    p = model.probabilities()
    n = len(model)
    unnormalised = (n * p[index]) ** (-model.beta)
    q = model.transform(model.priority)
    batch = (q[index] ** (-model.beta)) / np.max(q[index] ** (-model.beta))
    variants = {
        UNNORMALISED_WEIGHTS: unnormalised,
        BATCH_NORMALISED_WEIGHTS: batch,
        NO_BETA: q[index] / np.nanmin(q),
    }
    expected = model.importance_weights(index)
    hits = [name for name, v in variants.items()
            if np.allclose(observed, v, rtol=1e-5) and not np.allclose(v, expected, rtol=1e-5)]
    return _name(hits)


def _tf(model: ReplayModel, raw: float | None) -> float | None:
    return None if raw is None else float(model.transform(raw))


def _unique_hit(observed: float, candidates: dict, expected: float, rtol: float) -> str | None:
    hits = [name for name, v in candidates.items()
            if _near(observed, v, rtol) and not _near(expected, v, rtol)]
    return _name(hits)


def _name(hits: list[str]) -> str | None:
    """One cause, or the few that explain the value equally well."""
    if not hits or len(hits) > 2:
        return None
    return hits[0] if len(hits) == 1 else f"either {hits[0]}; or {hits[1]}"


# ------------------------------------------------------------------------- sampling law
def off_by_one_law(probabilities: np.ndarray) -> np.ndarray:
    """The law of a sampler whose total mass stops before the last stored slot (Baselines#171)."""
    p = np.asarray(probabilities, dtype=np.float64).copy()
    last = np.flatnonzero(p > 0)[-1]
    p[last] = 0.0
    return p / p.sum()


@dataclass(frozen=True)
class GoodnessOfFit:
    statistic: float
    dof: int
    critical: float
    p_value: float

    @property
    def rejected(self) -> bool:
        return self.statistic > self.critical


def chi_square(counts: np.ndarray, probabilities: np.ndarray, *, size: float) -> GoodnessOfFit:
    """Pearson's chi-square test of ``counts`` against ``probabilities`` (cells with p > 0).

    Draws in a cell of probability 0 make the statistic infinite."""
    counts = np.asarray(counts, dtype=np.float64)
    p = np.asarray(probabilities, dtype=np.float64)
    n = counts.sum()
    support = p > 0
    if counts[~support].sum() > 0:
        stat = math.inf
    else:
        e = n * p[support]
        stat = float(np.sum((counts[support] - e) ** 2 / e))
    dof = int(support.sum()) - 1
    crit = float(stats.chi2.ppf(1.0 - size, dof))
    return GoodnessOfFit(stat, dof, crit, float(stats.chi2.sf(stat, dof)))


def chi_square_power(null: np.ndarray, alternative: np.ndarray, n: int, *, size: float) -> float:
    """Power of the size-``size`` chi-square test of ``null`` when draws follow ``alternative``
    (the usual noncentral chi-square approximation, lambda = n sum (a - p)^2 / p)."""
    p = np.asarray(null, dtype=np.float64)
    a = np.asarray(alternative, dtype=np.float64)
    support = p > 0
    if (a[~support] > 0).any():
        return 1.0
    lam = float(n * np.sum((a[support] - p[support]) ** 2 / p[support]))
    dof = int(support.sum()) - 1
    crit = stats.chi2.ppf(1.0 - size, dof)
    return float(stats.ncx2.sf(crit, dof, lam))


def diagnose_law(counts: np.ndarray, model: ReplayModel) -> str | None:
    """Name the alternative law the counts fit, if one does."""
    counts = np.asarray(counts, dtype=np.float64)
    stored = model.stored()
    if len(stored) > 1 and counts[stored[-1]] == 0:
        alt = chi_square(counts, off_by_one_law(model.probabilities()), size=1e-3)
        if not alt.rejected:
            return OFF_BY_ONE
    return None
