"""§5 Prioritized replay, max priority within the buffer: the calls its specs make."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

import numpy as np
import torch


@dataclass
class PrioritizedDraw:
    """One ``sample`` call: flat storage indices (row-major), the ids of the items returned with
    them (as written by ``extend``) and their importance weights, all of length ``batch_size``."""

    index: np.ndarray
    item: np.ndarray
    weight: np.ndarray


class PrioritizedBuffer(Protocol):
    """A replay buffer with a prioritized sampler, in-buffer max-priority tracking on.

    Indices are flat (row-major) positions in the storage, whose shape is ``[capacity]`` or
    ``[capacity // row_width, row_width]``. Priorities are raw (before ``(p + eps) ** alpha``).
    """

    def __len__(self) -> int:
        """Number of items stored."""
        ...

    def extend(self, rows: int) -> np.ndarray:
        """Write ``rows`` new rows (``rows * row_width`` items, whose ids continue 0, 1, 2, ... in
        row-major order) at the ring-buffer cursor; return the flat indices written."""
        ...

    def update_priority(self, index: np.ndarray, priority: np.ndarray) -> None:
        """Set the raw priorities of stored items (flat indices, no repeats)."""
        ...

    def sample(self, batch_size: int, generator: torch.Generator) -> PrioritizedDraw:
        """Draw ``batch_size`` items with replacement, using only ``generator`` for randomness
        (a generator on the run's device)."""
        ...

    def tree_values(self) -> np.ndarray:
        """The sampling weight held for each stored flat index ``0 .. len-1``, in order."""
        ...

    def default_priority(self) -> float:
        """The raw priority the sampler reports it would give a new item now."""
        ...

    def set_alpha(self, alpha: float) -> None:
        """Change the priority exponent of a buffer that already holds items."""
        ...

    def state_dict(self) -> object:
        """A checkpoint of the whole buffer (independent of later changes to it)."""
        ...

    def load_state_dict(self, state: object) -> None:
        """Restore a checkpoint taken from a buffer built with the same parameters."""
        ...


class PrioritizedReplay(Protocol):
    """Optionally, ``documented_design``: ``{name: (account, link)}`` for known-wrong designs
    the implementation documents as its own choice (names: the values of
    ``conformance.oracles.prioritized_replay.DESIGNS``, e.g. ``"historical_max"``); a failure
    diagnosed as one of them then quotes the account and links the documentation."""

    #: the documented default priority of items written into an empty buffer
    initial_priority: float

    def buffer(
        self,
        *,
        capacity: int,
        alpha: float,
        beta: float,
        eps: float,
        upper_priority: float | None = None,
        row_width: int = 1,
    ) -> PrioritizedBuffer:
        """An empty buffer of ``capacity`` items. ``upper_priority``: cap on the default priority
        (an implementation without one raises NotImplementedError with the reason).
        ``row_width > 1``: a two-dimensional storage whose rows are written whole. An area that
        declares ``devices`` also receives ``device=`` (``conformance.interface``: Devices)."""
        ...


class PrioritizedSlices(Protocol):
    """§5: a prioritized buffer that samples slices of trajectories."""

    def slice_buffer(
        self, *, capacity: int, alpha: float, beta: float, eps: float, slice_len: int,
        traj_len: int,
    ) -> PrioritizedBuffer:
        """An empty buffer of ``capacity`` items sampled as slices of ``slice_len`` consecutive
        items of one trajectory (PrioritizedSliceSampler-like, in-buffer max tracking on);
        ``extend(rows)`` writes ``rows`` items whose trajectory id is ``item_id // traj_len``.
        ``state_dict`` / ``load_state_dict`` hand the library's own checkpoint object over
        without copying it (the specs check that the buffer does not alias it). An area that
        declares ``devices`` also receives ``device=`` (``conformance.interface``: Devices)."""
        ...


# ------------------------------------------------------------------ issue #31: the trees, the
# historical maximum (optional capabilities; appended in their own block)
class SegmentTreeHandle(Protocol):
    """A segment tree over ``size`` leaves as a user drives it (TorchRL's
    ``SumSegmentTreeFp32`` / ``MinSegmentTreeFp32``: ``tree[index] = value``, ``tree[index]``,
    ``query``, ``scan_lower_bound``), numpy in and out. Values are float32-exact."""

    def write(self, index: np.ndarray | int, value: np.ndarray | float) -> None:
        """``tree[index] = value``: an int index with a number, or an index array with one value
        per index or with one number for all of them."""
        ...

    def values(self, index: np.ndarray) -> np.ndarray:
        """``tree[index]``: the leaves at ``index``."""
        ...

    def query(self, start: int, end: int) -> float:
        """The reduction (sum or min) of the leaves ``[start, end)``, ``start < end``."""
        ...

    def scan_lower_bound(self, mass: np.ndarray | float) -> np.ndarray:
        """(sum trees) Per mass, the first leaf whose inclusive prefix sum exceeds it."""
        ...


class PrioritizedTrees(Protocol):
    """The library's own segment trees, built as a user builds them."""

    def segment_tree(self, *, size: int, reduce: str) -> SegmentTreeHandle:
        """A new tree of ``size`` leaves reduced by ``reduce`` (``"sum"`` or ``"min"``)."""
        ...


class PrioritizedSamplerTree(Protocol):
    """The sum tree a prioritized sampler keeps (TorchRL: ``sampler._sum_tree``)."""

    def sampler_sum_tree(self, buffer: PrioritizedBuffer) -> SegmentTreeHandle:
        """The sum tree of the sampler of ``buffer`` (a buffer made by ``buffer(...)``), read
        only: ``values``, ``query``, ``scan_lower_bound``."""
        ...


class PrioritizedHistorical(Protocol):
    """A prioritized buffer whose default priority is the largest priority ever given (TorchRL:
    ``max_priority_within_buffer=False``, the default)."""

    def historical_buffer(self, *, capacity: int, alpha: float, beta: float,
                          eps: float) -> PrioritizedBuffer:
        """An empty buffer of ``capacity`` items with in-buffer tracking off."""
        ...
