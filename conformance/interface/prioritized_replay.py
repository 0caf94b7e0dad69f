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
class PrioritizedCheckpoints(Protocol):
    """§5: the sampler's checkpoints in TorchRL's formats (what a TorchRL user saves, resumes
    and carries from one release, or one implementation, to another; pytorch/rl#3057, #4014).

    Files (``PrioritizedSampler.dumps`` / ``loads``; ``ReplayBuffer.dumps`` puts them under
    ``sampler/``): ``sampler_metadata.json`` holds ``_alpha``, ``_beta``, ``_eps``,
    ``_max_capacity``, ``_max_priority`` (``[value, index]``, ``null`` for none) and, from
    TorchRL 0.13.3, ``_schema_version`` (1: ``_max_priority`` is a raw priority; a version-less
    file written before pytorch/rl#3925 may hold it transformed, ``(p + eps) ** alpha``);
    ``sumtree.memmap`` and ``mintree.memmap`` hold float64, one value per slot:
    ``(p + eps) ** alpha`` where an item is stored, else 0 (sum) and the float32 maximum (min).
    Other files may sit beside them.

    State (``PrioritizedSampler.state_dict``): a dict with at least TorchRL's keys ``_alpha``,
    ``_beta``, ``_eps``, ``_max_priority`` (``(value, index)``), ``_sum_tree`` and ``_min_tree``
    (TorchRL's tree objects: ``tree[i]`` reads slot ``i``) and ``_schema_version`` as above.

    The buffer that loads holds as many items as the one checkpointed; it may have been built
    with other ``alpha``, ``beta`` and ``eps``: the checkpoint's own apply, as TorchRL does.
    """

    def dump_sampler(self, buffer: PrioritizedBuffer, path: str) -> None:
        """Write the sampler checkpoint of ``buffer`` into the folder ``path``."""
        ...

    def load_sampler(self, buffer: PrioritizedBuffer, path: str) -> None:
        """Restore the sampler of ``buffer`` from the folder ``path``."""
        ...

    def sampler_state(self, buffer: PrioritizedBuffer) -> dict:
        """The sampler's ``state_dict()``."""
        ...

    def load_sampler_state(self, buffer: PrioritizedBuffer, state: dict) -> None:
        """Restore the sampler of ``buffer`` from ``state`` (a ``state_dict()``)."""
        ...


#: the buffer classes of ``PrioritizedBufferClasses.example_buffer``
EXAMPLE_BUFFER_KINDS = ("TensorDictPrioritizedReplayBuffer", "PrioritizedReplayBuffer")


class PrioritizedBufferClasses(Protocol):
    """§5: the prioritized buffer classes, built as TorchRL's examples build them
    (``TensorDictPrioritizedReplayBuffer(alpha=, beta=, eps=, storage=LazyTensorStorage(N))``,
    no sampler argument), which a drop-in must provide with its own sampler inside."""

    def example_buffer(self, *, kind: str, capacity: int, alpha: float, beta: float,
                       eps: float | None, upper_priority: float | None = None
                       ) -> PrioritizedBuffer:
        """An empty buffer of class ``kind`` (one of ``EXAMPLE_BUFFER_KINDS``) with TorchRL's
        defaults: no in-buffer tracking, so the default priority is the largest priority ever
        given (the documented initial value before any); ``eps=None``: not passed (TorchRL's
        default, 1e-8). A tensordict buffer's items are
        tensordicts and its priorities are written by ``update_tensordict_priority`` from the
        ``td_error`` entry, as the examples do. ``upper_priority``: cap on the default (a class
        without one raises AssertionError naming the class). An area that declares ``devices``
        also receives ``device=``."""
        ...


#: the buffers of ``PrioritizedSamplerKeywords.sampler_buffer``: a ``ReplayBuffer`` holding the
#: sampler built with the keywords given, or the tensordict class that builds its own
SAMPLER_BUFFER_KINDS = ("ReplayBuffer", "TensorDictReplayBuffer",
                        "TensorDictPrioritizedReplayBuffer")


class PrioritizedSamplerKeywords(Protocol):
    """§5: the sampler built with TorchRL's keywords as a user passes them (the others left at
    the class's defaults), in a buffer that may hold its own generator, sampled as a training
    loop samples it (no generator handed over at each call)."""

    def sampler_buffer(self, *, kind: str, capacity: int, alpha: float, beta: float,
                       options: dict, generator: torch.Generator | None = None
                       ) -> PrioritizedBuffer:
        """An empty buffer over ``LazyTensorStorage(capacity)`` on the CPU. ``kind``
        ``"ReplayBuffer"``: ``ReplayBuffer(storage=..., sampler=PrioritizedSampler(capacity,
        alpha, beta, **options), generator=generator)``; ``"TensorDictReplayBuffer"``: the same
        with that class (its items are tensordicts, its priorities written by
        ``update_tensordict_priority`` from ``td_error``); ``"TensorDictPrioritizedReplayBuffer"``:
        that class built with ``alpha=, beta=, storage=, generator=`` and ``**options`` (items
        and priorities as the previous one). ``generator=None``: not passed. A keyword the
        class does not take raises AssertionError naming it; a value the class refuses raises
        its own error."""
        ...

    def update_td_error(self, buffer: PrioritizedBuffer, index: np.ndarray,
                        td_error: np.ndarray) -> None:
        """(tensordict kinds) ``buffer.update_tensordict_priority`` of a tensordict of batch
        ``[n]`` holding ``index`` ``[n]`` and ``td_error`` ``[n]`` or ``[n, k]`` (float32), as a
        loss writes it: the buffer reduces each row to one priority."""
        ...

    def draw(self, buffer: PrioritizedBuffer, batch_size: int) -> PrioritizedDraw:
        """``batch_size`` items of ``buffer`` (one made by ``sampler_buffer``) drawn without
        handing it a generator: its own, else the library's default random stream. The weights
        come in the dtype the library returns them in (numpy), not converted; the indices as
        the library returns them (a tuple of one tensor per storage dimension is stacked on a
        last axis), not flattened."""
class PrioritizedBufferOptions(Protocol):
    """§5: the buffer classes built with the constructor options a training script passes
    beyond the examples' (issue #31): TorchRL's own keywords, each passed only when given."""

    def option_buffer(self, *, kind: str, capacity: int | None, alpha: float, beta: float,
                      eps: float, dtype: str | None = None, priority_dtype: str = "float32",
                      sync: bool = True, reduction: str | None = None,
                      upper_priority: float | None = None) -> PrioritizedBuffer:
        """An empty buffer of class ``kind`` (``EXAMPLE_BUFFER_KINDS``), as ``example_buffer``
        builds it, with: ``capacity=None``: no ``storage=`` (TorchRL's default, a
        ``ListStorage`` of 1000 items), else a ``LazyTensorStorage(capacity)``; ``dtype``
        (``"float32"`` / ``"float64"``): the ``dtype=`` of ``PrioritizedReplayBuffer``, the
        dtype of its trees and importance weights; ``sync=False``: TorchRL's writer-process
        mode (the prioritized sampler kept beside a ``RandomSampler``); ``reduction``: how a
        tensordict buffer reduces a ``td_error`` with several entries per item;
        ``upper_priority`` as for ``example_buffer``. A class without a keyword asked for
        raises AssertionError naming the class and the keyword.

        The buffer's ``update_priority`` hands the priorities over in ``priority_dtype`` (a
        float64 critic's TD errors: ``"float64"``); a tensordict buffer also takes a
        ``[n, k]`` array, written whole as the ``td_error`` of the ``n`` items. Its sampler
        (the one holding the priorities, also with ``sync=False``) is what the checkpoint
        capability (``dump_sampler``, ``sampler_state``) reads."""


# ------------------------------------------------ issue #31: index and priority forms
class PrioritizedIndexForms(Protocol):
    """§5: ``update_priority`` and ``mark_update`` called as TorchRL users and TorchRL's own
    writers call them, with the index and priority objects passed on exactly as given (torch
    tensors of any dtype and shape, an int, a list, a tuple of one index tensor per storage
    dimension; ``-1`` entries, as ``TensorDictMaxValueWriter`` writes them for items it did
    not store; repeated entries). ``buffer`` is a buffer made by ``buffer(...)``."""

    def update_as_given(self, buffer: PrioritizedBuffer, index: object,
                        priority: object) -> None:
        """``rb.update_priority(index, priority)`` on the buffer itself."""
        ...

    def mark_update_as_given(self, buffer: PrioritizedBuffer, index: object) -> None:
        """``rb.mark_update(index)``: the items at ``index`` were rewritten in place (what a
        writer reports after a write); they get the default priority."""
        ...

    def sampler_update_as_given(self, buffer: PrioritizedBuffer, index: object,
                                priority: object, *, with_storage: bool) -> None:
        """``sampler.update_priority(index, priority)`` called on the buffer's sampler
        itself, with ``storage=`` the buffer's storage when ``with_storage`` (the keyword
        TorchRL's sampler needs to map an N-d index to a flat one), without it otherwise."""
        ...
