"""Prioritized experience replay in pure torch: a drop-in for ``torchrl.data.PrioritizedSampler``.

No C++ extension: the segment tree (``impls.segment_tree``) is torch tensors, so the sampler
runs on any torch build, on CPU or CUDA (``device=``); every operation is a fixed number of
vectorised tensor ops per tree level, batched over the indices or draws.

The sampler keeps one tree with two or three channels over the same leaves, so that one gather
and one scatter per level serve all of them (the min channels are reduced by one op):

- ``q = (p + eps) ** alpha``, reduced by sum: the sampling law;
- ``q`` again, reduced by min: the normaliser of the importance weights;
- with ``max_priority_within_buffer`` only, ``-p`` (raw priorities, negated), reduced by min:
  the largest stored priority, i.e. the default priority (the negated-min-tree idea of
  pytorch/rl#2210). Without the flag nothing reads it, and every channel costs a gather and a
  reduction per level on every write, so it is not kept.

Raw priorities are kept exactly, in a plain per-slot vector beside the tree (no reduction reads
them): the maximum never has to be recovered by inverting ``q`` (impossible at ``alpha == 0``)
and changing ``alpha`` re-transforms exactly.

The tree is float64. ``q`` is computed as TorchRL computes it, in the dtype the priorities come
in (``torch.pow(priority + eps, alpha)``), and the weights as ``(q / q_min) ** -beta`` in
``dtype``, so that with float64 trees on both sides (``dtype=torch.float64``) the two samplers
agree draw for draw and weight for weight; against TorchRL's float32 trees they agree up to
float32 rounding of the sums at item boundaries.

Differences from ``torchrl.data.PrioritizedSampler`` (0.14.1), all intended:

- ``max_priority_within_buffer=True``: a write first evicts the items it replaces, then gives the
  new items the largest priority among the items that stay (``initial_priority`` when none
  stay). Upstream lets a new item inherit the priority of the item it overwrites and then falls
  back to 1.0 for the next write; it also rescans every slot (O(capacity)) when the max item is
  overwritten or lowered. Here the maximum is a tree root: O(log N) always.
- ``upper_priority`` (optional) caps the default priority (pytorch/rl#2210's ``_upper_priority``).
- A repeated index in one ``update_priority`` call takes its last priority (every priority
  given still counts for the historical maximum, as upstream).
- Changing ``alpha`` rebuilds the sums from the raw priorities in one O(capacity) pass (every
  weight changes, so nothing cheaper exists), also away from ``alpha == 0``.
- ``state_dict`` stores raw priorities (plus TorchRL's tree objects, so that either class loads
  the other's checkpoints: ``impls.replay_checkpoint``); ``load_state_dict`` rebuilds the tree.
- Draws follow TorchRL's random stream (numpy's global generator, or the buffer's generator):
  same seeds and priorities give the same samples, up to rounding at item boundaries.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torchrl.data import PrioritizedSampler as _TorchRLPrioritizedSampler

from impls import replay_checkpoint as checkpoint
from impls.segment_tree import SegmentTree, _Channel

_EMPTY_STORAGE_ERROR = "Cannot sample from an empty storage."


_Q, _Q_MIN, _NEG_P = 0, 1, 2  # channels of the sampler's tree (_NEG_P: within-buffer max only)
#: the per-slot tensors beside the tree, moved with it (``PrioritizedSampler._to``)
_STATE = ("_raw", "_historical", "_last_position", "_positions")


class PrioritizedSampler(_TorchRLPrioritizedSampler):
    r"""Prioritized replay sampler (Schaul et al. 2015) with pure-torch segment trees.

    Samples stored item ``i`` with probability ``q_i / sum_j q_j``, ``q = (p + eps) ** alpha``,
    and reports importance weights ``(q_i / min_j q_j) ** (-beta)`` under ``"priority_weight"``.

    Args:
        max_capacity, alpha, beta, eps, dtype, reduction, max_priority_within_buffer, device:
            as for ``torchrl.data.PrioritizedSampler``; ``dtype`` is the dtype of the weights
            returned (the trees are float64).

    Keyword Args:
        upper_priority (float, optional): cap on the default priority of new items.
        initial_priority (float): the default priority while the buffer is empty (and, with
            ``max_priority_within_buffer``, whenever a write replaces every stored item).
            Defaults to 1.0, as upstream.
    """

    _STATE_SCHEMA_VERSION = 1

    def __init__(
        self,
        max_capacity: int,
        alpha: float,
        beta: float,
        eps: float = 1e-8,
        dtype: torch.dtype = torch.float,
        reduction: str = "max",
        max_priority_within_buffer: bool = False,
        device: torch.device | str | None = None,
        *,
        upper_priority: float | None = None,
        initial_priority: float = 1.0,
    ) -> None:
        if alpha < 0:
            raise ValueError(f"alpha must be greater or equal than 0, got alpha={alpha}")
        if beta < 0:
            raise ValueError(f"beta must be greater or equal to 0, got beta={beta}")
        if eps < 0:
            raise ValueError(f"eps must be >= 0, got eps={eps}")
        if upper_priority is not None and not upper_priority > 0:
            raise ValueError(f"upper_priority must be > 0, got {upper_priority}")
        if not initial_priority >= 0:
            raise ValueError(f"initial_priority must be >= 0, got {initial_priority}")
        self._max_capacity = int(max_capacity)
        self._alpha = float(alpha)
        self._beta = float(beta)
        self._eps = float(eps)
        self.dtype = dtype
        self.reduction = reduction
        self._max_priority_within_buffer = bool(max_priority_within_buffer)
        self._upper_priority = None if upper_priority is None else float(upper_priority)
        self._initial_priority = float(initial_priority)
        self._device = torch.device(device) if device is not None else None
        self._init()

    # ------------------------------------------------------------------------------- state
    def _init(self) -> None:
        ops = ("sum", "min", "min") if self._max_priority_within_buffer else ("sum", "min")
        self._tree = self._make_tree(ops)
        self._sum_tree = _Channel(self._tree, _Q)
        # raw priority per slot, +inf where no item is stored
        self._raw = torch.full((self._max_capacity,), math.inf, dtype=torch.float64)
        self._historical = self._raw.new_full((), -math.inf)  # float64, as _raw
        # scratch for finding repeated indices in O(batch) (only entries just written are read)
        self._last_position = torch.zeros(self._max_capacity, dtype=torch.long)
        self._positions = torch.arange(self._max_capacity)
        # built on the CPU and moved in one place (_to), shared with a storage's device
        self._to(self._device or self.device)

    def _make_tree(self, ops) -> SegmentTree:
        """The tree of the sampler's channels (``impls.fused_tree`` gives its own)."""
        return SegmentTree(self._max_capacity, ops)

    def _to(self, device: torch.device) -> None:
        """Move the tree and every per-slot tensor to ``device`` (a no-op where they are)."""
        self._tree.to(device)
        for name in _STATE:
            setattr(self, name, getattr(self, name).to(device))

    def _empty(self) -> None:
        self._init()

    @property
    def device(self) -> torch.device:
        return self._tree.device

    def _maybe_init_from_storage(self, storage) -> None:
        # follow a CUDA storage unless a device was given, as upstream does
        if self._device is not None or storage is None:
            return
        device = getattr(storage, "device", None)
        if device is None or device == "auto":
            return
        device = torch.device(device)
        if device.type == "cuda" and device != self.device:
            self._to(device)

    @property
    def alpha(self) -> float:
        return self._alpha

    @alpha.setter
    def alpha(self, value: float) -> None:
        if value < 0:
            raise ValueError(f"alpha must be greater or equal than 0, got alpha={value}")
        if float(value) != self._alpha:
            self._alpha = float(value)
            self._retransform()

    @property
    def beta(self) -> float:
        return self._beta

    @beta.setter
    def beta(self, value: float) -> None:
        self._beta = value

    @property
    def _raw_priority(self) -> torch.Tensor:
        """Raw priority per slot, +inf for slots that hold no item."""
        return self._raw

    def _retransform(self) -> None:
        raw = self._raw_priority
        written = torch.isfinite(raw)
        q = self._transform(torch.where(written, raw, torch.zeros_like(raw)))
        self._set_leaves(torch.where(written, q, torch.zeros_like(q)),
                         torch.where(written, q, torch.full_like(q, math.inf)), raw)

    def _set_leaves(self, q: torch.Tensor, q_min: torch.Tensor, raw: torch.Tensor) -> None:
        """Write every leaf (q, its min channel, raw priorities; +inf marks empty slots) and
        rebuild the tree: O(capacity)."""
        leaves = self._tree.leaves
        leaves[_Q] = q
        leaves[_Q_MIN] = q_min
        if self._max_priority_within_buffer:
            leaves[_NEG_P] = torch.where(torch.isinf(raw), math.inf, -raw)
        self._raw.copy_(raw)
        self._tree.rebuild()

    def _transform(self, raw: torch.Tensor) -> torch.Tensor:
        return (raw + self._eps).pow(self._alpha)

    # ---------------------------------------------------------------------- max priority
    @property
    def _max_priority(self) -> tuple[torch.Tensor | None, None]:
        m = self._stored_max() if self._max_priority_within_buffer else self._historical
        return (None if not bool(torch.isfinite(m)) else m, None)

    def _stored_max(self) -> torch.Tensor:
        return -self._tree.root[_NEG_P]  # -inf when nothing is stored

    def _default_from(self, m: torch.Tensor) -> torch.Tensor:
        # the initial priority where m is not finite (nothing stored), in one op
        init = self._initial_priority
        d = torch.nan_to_num(m, nan=init, posinf=init, neginf=init)
        if self._upper_priority is not None:
            d = d.clamp_max(self._upper_priority)
        return d

    @property
    def default_priority(self) -> float | torch.Tensor:
        """The raw priority a new item gets: a float, as upstream (``TensorDictReplayBuffer``
        feeds it to ``torch.tensor``, which warns on a tensor), or a 0-d tensor on an
        accelerator, where a float would cost a host sync."""
        d = self._default_tensor()
        return float(d) if d.device.type == "cpu" else d

    def _default_tensor(self) -> torch.Tensor:
        m = self._stored_max() if self._max_priority_within_buffer else self._historical
        return self._default_from(m)

    # -------------------------------------------------------------------------- indices
    def _flat(self, index, storage) -> torch.Tensor:
        """Flat (row-major) long indices on the tree's device, from an int, a sequence, a
        tensor of flat indices or an ``[..., ndim]`` tensor of storage coordinates (the buffer
        stacks the tuple that ``sample`` returns for an N-d storage into one)."""
        index = torch.as_tensor(index, dtype=torch.long, device=self.device)
        if index.ndim < 2:
            return index.reshape(-1)
        if storage is None:
            raise RuntimeError(
                f"storage should be provided to update_priority when the storage has more "
                f"than one dimension (got an index of shape {tuple(index.shape)})")
        flat = 0  # Horner's scheme over the coordinates: row-major
        for size, column in zip(storage.shape, index.unbind(-1), strict=True):
            flat = flat * size + column
        return flat.reshape(-1)

    def _unique(self, index: torch.Tensor, priority: torch.Tensor | None = None,
                with_q: bool = False):
        """Drop the -1 entries (TensorDictMaxValueWriter) and keep the last of repeats, so
        that every channel gets the same value for a repeated index. With ``with_q``, also
        return ``q`` computed, as upstream does, on the whole vector of valid priorities before
        repeats are dropped (torch's vectorised pow can differ by one ulp with the length and
        position of an element, and the same q as upstream's is what makes the weights equal),
        and that vector itself: every priority given counts for the historical maximum, also
        one that a later entry of the same call replaces (as upstream)."""
        n = index.numel()
        if 1 < n <= self._max_capacity and self._distinct_and_valid(index):
            return (index, priority, self._q(priority), priority) if with_q else (index, priority)
        if bool((index < 0).any()):
            keep = index >= 0
            index = index[keep]
            if priority is not None and priority.ndim:
                priority = priority[keep]
            n = index.numel()
        q = self._q(priority) if with_q else None
        given = priority
        if n > 1:
            position = torch.arange(n, device=index.device)
            self._last_position.scatter_reduce_(0, index, position, "amax", include_self=False)
            last = self._last_position.index_select(0, index) == position
            index = index[last]
            if priority is not None and priority.ndim:
                priority, q = priority[last], q[last]
        return (index, priority, q, given) if with_q else (index, priority)

    def _distinct_and_valid(self, index: torch.Tensor) -> bool:
        """True when ``index`` (1 < n <= capacity entries) holds no -1 and no repeat, in O(n)
        and one host read: each entry writes its position into a per-slot scratch, and a repeat
        leaves at least one entry reading back another entry's position (whichever write won).
        A sort (``torch.unique``) cost several times more at batch 256. The scratch check is
        correct on any device: whichever of the repeated writes wins, another entry of the
        repeat reads a position that is not its own."""
        low, high = torch.aminmax(index)
        if low.item() < 0 or high.item() >= self._max_capacity:
            return False
        position = self._positions[: index.numel()]
        self._last_position.index_copy_(0, index, position)
        return bool(self._last_position.index_select(0, index).eq_(position).all())

    def _q(self, priority: torch.Tensor) -> torch.Tensor:
        """``(p + eps) ** alpha`` in the priorities' own dtype, as upstream (integers promote
        to the default dtype when eps, a Python float, is added)."""
        return torch.pow(priority + self._eps, self._alpha)

    # ------------------------------------------------------------------------ updates
    def _write(self, index: torch.Tensor, raw: torch.Tensor, q=None) -> None:
        raw = raw if raw.ndim else raw.expand(index.shape)  # one priority for all, or one each
        q = self._q(raw) if q is None else q
        tree = self._tree
        leaves = self._raw.new_empty((len(tree.ops), index.numel()))  # float64, tree's device
        leaves.copy_(q)  # q in every channel, promoted; the -p channel is written below
        raw = raw.to(torch.float64)
        if self._max_priority_within_buffer:
            torch.neg(raw, out=leaves[_NEG_P])
        self._raw.index_copy_(0, index, raw)
        tree.set(index, leaves)

    def _seen(self, raw_max: torch.Tensor) -> None:
        self._historical = torch.maximum(self._historical, raw_max)  # promoted to float64

    def update_priority(self, index, priority, *, storage=None) -> None:
        """Set the raw priorities of stored items (see ``torchrl.data.PrioritizedSampler``)."""
        self._maybe_init_from_storage(storage)
        device = self.device
        # the usual call (flat long indices, one priority each, on the tree's device) needs
        # no conversion; any other form is converted first
        if not (type(index) is torch.Tensor and type(priority) is torch.Tensor
                and index.ndim == 1 and index.shape == priority.shape
                and index.dtype == torch.long and index.device == priority.device == device):
            priority = torch.as_tensor(priority, device=device)
            index = self._flat(index, storage)
            if priority.numel() > 1 and priority.shape != index.shape:
                try:
                    priority = priority.reshape(index.shape)
                except RuntimeError as err:
                    raise RuntimeError(
                        f"priority should be a number or an iterable of the same length as "
                        f"index: got priority of shape {tuple(priority.shape)} for "
                        f"{index.numel()} indices") from err
            elif priority.numel() <= 1:
                priority = priority.reshape(())
        index, priority, q, given = self._unique(index, priority.detach(), with_q=True)
        if index.numel():
            self._write(index, priority, q=q)
            if not self._max_priority_within_buffer:
                self._seen(given.max())

    def mark_update(self, index, *, storage=None) -> None:
        """New items were written at ``index``: give them the default priority."""
        self._maybe_init_from_storage(storage)
        index, _ = self._unique(self._flat(index, storage))
        if index.numel() == 0:
            return
        if self._max_priority_within_buffer:
            # the replaced items leave the buffer before the new ones get their priority: from
            # the -p channel, the only one read before _write rewrites every channel
            self._tree.fill_channel(_NEG_P, index, math.inf)
            self._raw.index_fill_(0, index, math.inf)
        # as upstream's torch.as_tensor(default_priority): the default dtype
        default = self._default_tensor().to(torch.get_default_dtype())
        self._write(index, default)
        if not self._max_priority_within_buffer:
            self._seen(default)

    def add(self, index) -> None:
        return  # priorities of new items are written by mark_update

    def extend(self, index) -> None:
        return

    # ---------------------------------------------------------------------------- sample
    def sample(self, storage, batch_size: int):
        self._maybe_init_from_storage(storage)
        if len(storage) == 0:
            raise RuntimeError(_EMPTY_STORAGE_ERROR)
        if self.device.type == "cpu":  # host numbers: free here, and upstream's refusal
            total, q_min = self._tree.levels[-1][: _Q_MIN + 1, 0].tolist()
            if not total > 0:
                raise RuntimeError("non-positive p_sum")
        else:  # 0-d tensors on the device: no host sync
            total, q_min = self._tree.root[: _Q_MIN + 1]
        mass = _uniform_mass(batch_size, total, self._rng, self.device)
        index, q = self._tree._scan(mass, _Q)
        # upstream's formula and dtype, so that equal q give bitwise-equal weights
        weight = torch.pow(q.to(self.dtype) / q_min, -self._beta)
        if storage.ndim > 1:
            index = _unravel(index, tuple(storage.shape))
        return index, {"priority_weight": weight}

    # ----------------------------------------------------------------------- checkpoints
    # A checkpoint is state, not configuration: max_priority_within_buffer, upper_priority,
    # initial_priority, dtype and reduction stay the loading sampler's own (TorchRL keeps its
    # max_priority_within_buffer, dtype and reduction the same way); alpha, beta and eps come
    # with the checkpoint, as in TorchRL.
    def _written(self) -> torch.Tensor:
        return torch.isfinite(self._raw_priority)

    def _state(self) -> dict[str, Any]:
        """TorchRL's entries without its tree objects, plus the raw priorities (NaN where no
        item is stored) and ``q`` as computed at write time (in the priorities' dtype)."""
        raw = self._raw_priority.clone()
        raw[torch.isinf(raw)] = math.nan
        m = self._max_priority[0]
        return {
            "_schema_version": self._STATE_SCHEMA_VERSION,
            "_alpha": self._alpha,
            "_beta": self._beta,
            "_eps": self._eps,
            # the raw maximum (stored, or ever given without in-buffer tracking), as TorchRL
            "_max_priority": (None if m is None else float(m), None),
            "_raw_priority": raw.cpu(),
            "_q": self._tree.leaves[_Q].cpu().clone(),
        }

    def state_dict(self) -> dict[str, Any]:
        """TorchRL's entries (``_sum_tree`` / ``_min_tree`` as its C++ tree objects, so that
        ``torchrl.data.PrioritizedSampler.load_state_dict`` restores the same sampling law; see
        ``impls.replay_checkpoint``) plus the raw priorities."""
        state = self._state()
        trees = checkpoint.torchrl_trees(self._tree.leaves[_Q], self._written(), self.dtype)
        if trees is not None:
            state["_sum_tree"], state["_min_tree"] = trees
        return state

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Restore a reference ``state_dict``, or a TorchRL sampler's (priorities recovered
        from its trees)."""
        if "_raw_priority" not in state_dict:  # TorchRL's: a state without _sum_tree is
            # refused there, as TorchRL refuses it (KeyError: '_sum_tree'), before any change
            state_dict = checkpoint.raw_from_torchrl_state(state_dict, self._max_capacity)
        raw = state_dict["_raw_priority"].to(self.device)
        if raw.numel() != self._max_capacity:
            raise RuntimeError(f"capacity of the state ({raw.numel()}) differs from "
                               f"max_capacity ({self._max_capacity})")
        self._alpha = float(state_dict["_alpha"])
        self._beta = float(state_dict["_beta"])
        self._eps = float(state_dict["_eps"])
        m = checkpoint.max_value(state_dict["_max_priority"])
        self._historical = torch.full_like(self._historical, -math.inf if m is None else m)
        empty = torch.isnan(raw)
        q = state_dict["_q"].to(self.device)
        self._set_leaves(torch.where(empty, 0.0, q), torch.where(empty, math.inf, q),
                         torch.where(empty, math.inf, raw))

    def dumps(self, path) -> None:
        """Write TorchRL's files (``sampler_metadata.json``, ``sumtree.memmap`` /
        ``mintree.memmap``) and, beside them, the raw priorities (``raw_priority.pt``), which
        TorchRL's files cannot hold at ``alpha == 0``."""
        path = Path(path).absolute()
        path.mkdir(exist_ok=True)  # as TorchRL's: ReplayBuffer.dumps made the parent
        state = self._state()
        torch.save(state.pop("_raw_priority"), path / checkpoint.RAW_FILE)
        del state["_q"]  # sumtree.memmap holds it
        checkpoint.write_torchrl_files(path, self._tree.leaves[_Q], self._written(), self.dtype)
        state["_max_capacity"] = self._max_capacity
        (path / checkpoint.METADATA_FILE).write_text(json.dumps(state))

    def loads(self, path) -> None:
        """Restore what ``dumps`` wrote, or what TorchRL's sampler ``dumps`` wrote."""
        path = Path(path).absolute()
        metadata = json.loads((path / checkpoint.METADATA_FILE).read_text())
        if metadata["_max_capacity"] != self._max_capacity:
            raise RuntimeError(f"max capacity of loaded metadata ({metadata['_max_capacity']}) "
                               f"differs from self._max_capacity ({self._max_capacity}).")
        raw_file = path / checkpoint.RAW_FILE
        raw = torch.load(raw_file, weights_only=True) if raw_file.exists() else None
        self.load_state_dict(checkpoint.read_torchrl_files(path, metadata, raw))


def _uniform_mass(batch_size: int, total, rng, device: torch.device) -> torch.Tensor:
    """``batch_size`` float64 masses uniform on ``[0, total)`` on ``device``, drawn from the same
    random stream as ``torchrl.data.PrioritizedSampler``: numpy's global generator on the CPU
    when the buffer has no generator of its own (``np.random.uniform``), else float32 draws of
    the buffer's torch generator (or, on an accelerator without one, torch's default generator
    there), scaled by the total. With the same seeds and the same priorities, both samplers
    therefore draw the same masses; they pick the same items unless a mass falls within
    rounding of a boundary between two items (TorchRL's float32 trees vs float64 here). A
    generator on another device than the tree is refused by torch, as upstream."""
    if rng is None and device.type == "cpu":
        return torch.from_numpy(np.random.uniform(0.0, total, size=batch_size))
    return torch.rand(batch_size, device=device, generator=rng).to(torch.float64).mul_(total)


def _unravel(index: torch.Tensor, shape: tuple[int, ...]) -> tuple[torch.Tensor, ...]:
    out = []
    for size in reversed(shape):
        out.append(index % size)
        index = torch.div(index, size, rounding_mode="floor")
    return tuple(reversed(out))
