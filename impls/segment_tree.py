"""A segment tree in pure torch: several reductions over one set of leaves, O(log N) per batch.

``SegmentTree`` is a complete array tree: ``height`` levels cut into ``branching``-wide blocks
(at most ``MAX_BRANCHING``, one block per node of the level above) under a top level of at most
``MAX_TOP`` nodes, whose reduction is the root. A batch of leaf writes recomputes its ancestors
level by level (``index_select`` the children blocks, reduce, ``index_copy_``), then reduces the
top whole; prefix-sum sampling descends the top (one block shared by every draw) and then level
by level (cumulative sum of one block per draw, ``searchsorted``). A buffer of 1e6 items has a
top of 977 nodes and 2 levels of 32 below it. Each operation costs a fixed number of tensor ops
per level plus O(MAX_TOP) work: O(log N), whatever the batch size.

No C++ extension: the tree is torch tensors, so it runs on any torch build, CPU or CUDA.
"""

from __future__ import annotations

import math
from itertools import pairwise

import torch

MAX_BRANCHING = 32
MAX_TOP = 1024
_OPS = {"sum": torch.sum, "min": torch.amin, "max": torch.amax}
_NEUTRAL = {"sum": 0.0, "min": math.inf, "max": -math.inf}


class SegmentTree:
    """A segment tree over ``size`` leaves: ``height`` levels of ``branching``-wide blocks
    under a top level of at most ``MAX_TOP`` nodes, whose reduction is the root.

    ``reduce`` is ``"sum"``, ``"min"`` or ``"max"``, or one of them per channel (a sequence):
    a multi-channel tree holds ``[channels, size]`` leaves and reduces each channel with its own
    operation, with one gather and one scatter per level for all of them. Leaves that were never
    written (and the padding up to ``top * branching ** height``) hold the neutral element.

    The tree is complete: every node below the top has exactly ``branching`` children, so a
    descent never leaves the arrays. The top level is reduced whole (a constant-size op) rather
    than by gathering blocks, which saves a level in every write.
    """

    #: the widest block (None: ``MAX_BRANCHING``, read at each construction)
    max_branching: int | None = None

    def __init__(self, size: int, reduce="sum", *, dtype=torch.float64, device=None):
        # Like TorchRL's trees, a tree of 0 leaves is accepted; a negative size fails in
        # ``repeat`` below, and an unknown reduction is a KeyError naming it (_NEUTRAL[op]).
        ops = (reduce,) if isinstance(reduce, str) else tuple(reduce)
        self._neutral = torch.tensor([_NEUTRAL[op] for op in ops], dtype=dtype).unsqueeze(1)
        height, b, top = _shape(size, self.max_branching)
        self.size, self.ops, self.branching, self.height, self.top = size, ops, b, height, top
        self._single = isinstance(reduce, str)
        # runs of channels sharing an operation (the sampler's two min channels): one call each
        starts = [c for c, op in enumerate(ops) if c == 0 or op != ops[c - 1]]
        self._groups = [(_OPS[ops[lo]], lo, hi) for lo, hi in pairwise([*starts, len(ops)])]
        # levels[0] = leaves, levels[height] = top, levels[height + 1] = root
        lengths = [top * b ** (height - lvl) for lvl in range(height + 1)] + [1]
        self.levels = [self._neutral.repeat(1, n) for n in lengths]
        self.to(device)  # places the levels and makes the views

    def _out(self, x: torch.Tensor) -> torch.Tensor:
        return x[0] if self._single else x

    def _make_views(self) -> None:
        """Views of the levels (remade when ``to`` moves them): per level below the top,
        ``[channels, parents, branching]`` blocks; per channel group, (op, its part of the top,
        its part of the root)."""
        c, b = len(self.ops), self.branching
        self._blocks = [level.view(c, -1, b) for level in self.levels[: self.height]]
        top, root = self.levels[self.height], self.levels[-1][:, 0]
        self._root_parts = [(op, top[lo:hi], root[lo:hi]) for op, lo, hi in self._groups]
        # Every tensor op costs microseconds of dispatch whatever its size, and an operation
        # on the tree is a few dozen small ops: what can be made once is made here.
        self._zero = self._neutral.new_zeros(())  # nextafter's direction in the descent
        self._sum_parts = {}  # channel -> its views for the descent (``_sum_views``)
        self._channel_parts = {}  # channel -> its op and levels (``fill_channel``)

    def _tensor(self, x) -> torch.Tensor:
        """``x`` (a tensor, a number or a sequence) as a tensor on the tree's device: the one
        place where inputs are moved."""
        return torch.as_tensor(x, device=self.device)

    # ------------------------------------------------------------------------------ reading
    @property
    def device(self) -> torch.device:
        return self.levels[0].device

    @property
    def dtype(self) -> torch.dtype:
        return self.levels[0].dtype

    @property
    def root(self) -> torch.Tensor:
        return self._out(self.levels[-1][:, 0])

    @property
    def leaves(self) -> torch.Tensor:
        return self._out(self.levels[0][:, : self.size])

    def __getitem__(self, index):
        # a non-long index tensor is refused by index_select, as by TorchRL's trees
        index = self._tensor(index)
        values = self.levels[0].index_select(1, index.reshape(-1))
        return self._out(values.reshape(len(self.ops), *index.shape))

    def __len__(self) -> int:
        return self.size

    def query(self, start: int, end: int) -> torch.Tensor:
        """Reduce the leaves ``[start, end)`` of every channel: O(branching * height + top)."""
        start, end = max(int(start), 0), min(int(end), self.size)
        b = self.branching
        parts = [self._neutral]
        # once the range is empty (start >= end) every slice below is empty too
        for level in self.levels[: self.height]:
            left_end = min(-(-start // b) * b, end)
            right_start = max(end // b * b, left_end)
            parts += [level[:, start:left_end], level[:, right_start:end]]
            start, end = -(-start // b), end // b
        parts.append(self.levels[self.height][:, start:end])
        return self._out(self._reduce(torch.cat(parts, 1)))

    def _reduce(self, x: torch.Tensor, out: torch.Tensor | None = None) -> torch.Tensor:
        """Reduce the last dimension of ``x`` ([channels, ..., n > 0]) channel by channel."""
        if out is None:  # x: [channels, n] (a query)
            out = x.new_empty(len(x))
        for op, lo, hi in self._groups:
            op(x[lo:hi], -1, out=out[lo:hi])
        return out

    # ------------------------------------------------------------------------------ writing
    def _parents(self, index: torch.Tensor, unique: bool = False):
        """The ancestors of leaves ``index``, level by level up to the top (one division
        each); with ``unique``, each parent once (sorted)."""
        parent = index
        for _ in range(self.height):
            parent = torch.div(parent, self.branching, rounding_mode="floor")
            if unique:
                parent = torch.unique(parent)
            yield parent

    def _wide(self, index: torch.Tensor) -> bool:
        """A write so wide that its children blocks (``branching`` values per written leaf)
        would hold more values than the whole leaf level (a fill of 1e7 items would gather 1e7
        blocks of 32, 7.7 GB): its parents are then taken once each (``_set_wide``)."""
        return self.height > 0 and index.numel() * self.branching > self.levels[0].shape[1]

    def _set_wide(self, index: torch.Tensor) -> None:
        """``set``'s recomputation of the ancestors for a wide write: each parent once, so no
        level gathers more values than the leaf level holds (no scratch: the sizes vary)."""
        blocks = self._blocks
        for level, parent in enumerate(self._parents(index, unique=True), 1):
            self.levels[level].index_copy_(
                1, parent, self._reduce(blocks[level - 1].index_select(1, parent),
                                        self._neutral.new_empty((len(self.ops), parent.numel()))))

    def set(self, index: torch.Tensor, value: torch.Tensor) -> None:
        """Write leaves ``index`` (a long tensor without repeats; ``value``: ``[k]`` for a
        single-channel tree, ``[channels, k]`` otherwise) and recompute their ancestors."""
        levels, channels = self.levels, len(self.ops)
        blocks = self._blocks
        if value.dtype != self.dtype:
            value = value.to(self.dtype)
        levels[0].index_copy_(1, index, value.reshape(channels, -1))
        if self._wide(index):
            self._set_wide(index)
        elif self.height:
            reduced, groups = self._scratch(index.numel())
            children, parts = self._gather_buffer(index.numel())
            for level, parent in enumerate(self._parents(index), 1):
                torch.index_select(blocks[level - 1], 1, parent, out=children)
                for (op, _lo, _hi, out), part in zip(groups, parts, strict=True):
                    op(part, -1, out=out)
                # a parent listed twice is recomputed twice from the same children: same value
                levels[level].index_copy_(1, parent, reduced)
        for op, top, root in self._root_parts:
            op(top, 1, out=root)  # top: [channels, nodes]

    def fill_channel(self, channel: int, index: torch.Tensor, value: float) -> None:
        """Write ``value`` into leaves ``index`` of one channel only and recompute that
        channel's ancestors: a gather and a reduction per level for one channel instead of
        every channel's (the sampler's eviction reads one channel)."""
        op, rows, blocks, root = self._channel_views(channel)
        rows[0].index_fill_(0, index, value)
        for level, parent in enumerate(self._parents(index, self._wide(index)), 1):
            rows[level].index_copy_(0, parent, op(blocks[level - 1].index_select(0, parent), -1))
        op(rows[self.height], 0, out=root)

    def _channel_views(self, channel: int):
        """One channel's operation, its row of every level, those below the top as
        ``[parents, branching]`` blocks, and its root: views, made once."""
        if channel not in self._channel_parts:
            op = next(op for op, lo, hi in self._groups if lo <= channel < hi)
            rows = [level[channel] for level in self.levels]
            blocks = [row.view(-1, self.branching) for row in rows[: self.height]]
            self._channel_parts[channel] = op, rows, blocks, rows[-1][0]
        return self._channel_parts[channel]

    def _scratch(self, k: int):
        """A ``[channels, k]`` buffer for the reduced blocks and its per-group rows (the last
        size used is kept: batches usually have one size)."""
        if self._scratch_cache is None or self._scratch_cache[0].shape[1] != k:
            reduced = self._neutral.new_empty((len(self.ops), k))  # the tree's dtype, device
            self._scratch_cache = (reduced, [(op, lo, hi, reduced[lo:hi])
                                             for op, lo, hi in self._groups])
        return self._scratch_cache

    def _gather_buffer(self, k: int):
        """A ``[channels, k, branching]`` buffer for the children blocks a write gathers, and
        its per-group rows: gathered into in place, and its rows reduced without a slicing op
        per level (the last size used is kept)."""
        if self._gather_cache is None or self._gather_cache[0].shape[1] != k:
            children = self._neutral.new_empty((len(self.ops), k, self.branching))
            self._gather_cache = (children, [children[lo:hi] for _, lo, hi in self._groups])
        return self._gather_cache

    def __setitem__(self, index, value) -> None:
        """``tree[index] = value``, TorchRL's tree API (single-channel trees): an int or a long
        tensor of indices, one value or one per index (``set`` converts the dtype; a non-long
        index is refused by ``index_copy_``, as by TorchRL's trees)."""
        index = self._tensor(index).reshape(-1)
        value = self._tensor(value).reshape(-1)
        # checked before anything is written: index_copy_ refuses a bad index only after it
        # has copied the ones before it, and set() would then skip their ancestors
        outside = (index < 0) | (index >= self.size)
        if bool(outside.any()):
            raise IndexError(f"segment tree index {index[outside][0].item()} is out of range "
                             f"for {self.size} leaves; nothing written")
        self.set(index, value.expand(index.numel()))

    def rebuild(self) -> None:
        """Recompute every inner node from the leaves (O(size))."""
        blocks = self._blocks
        for level in range(self.height):
            self._reduce(blocks[level], self.levels[level + 1])
        for op, top, root in self._root_parts:
            op(top, 1, out=root)

    def to(self, device) -> None:
        """Move the tree to ``device`` (None: stay)."""
        self._neutral, *self.levels = (t.to(device) for t in (self._neutral, *self.levels))
        self._scratch_cache = self._gather_cache = None  # allocated on the old device
        self._make_views()

    # ---------------------------------------------------------------------------- sampling
    def scan_lower_bound(self, mass: torch.Tensor) -> torch.Tensor:
        """Per entry of ``mass``, the first leaf whose inclusive prefix sum (of the first
        channel, a ``"sum"``) exceeds it. Zero leaves are never returned while the total is
        positive; a mass at or above the total (rounding) returns the last positive leaf."""
        return self.scan(mass)[0]

    def scan(self, mass: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """``scan_lower_bound`` and the values of the leaves found. An all-zero tree (on the
        CPU, where checking costs no sync) is refused: no leaf has any mass."""
        if self.ops[0] != "sum":
            raise TypeError("scan_lower_bound needs a sum tree")
        if self.device.type == "cpu" and not self.levels[-1][0, 0].item() > 0:
            raise RuntimeError("non-positive p_sum")
        # float32 masses (TorchRL's trees' dtype) or float64 ones: the descent promotes them
        return self._scan(self._tensor(mass), 0)

    def _scan(self, mass: torch.Tensor, channel: int) -> tuple[torch.Tensor, torch.Tensor]:
        node = self._descend(mass.reshape(-1, 1), channel)
        return node, self.levels[0][channel].index_select(0, node)

    def _descend(self, mass, channel):
        # Rounding can put a mass at or above a block's total (the parent was summed in another
        # order, or the mass is a remainder): the search would then end on the block's last
        # leaf, wrong when that leaf is empty. Each mass is kept just below its block's total
        # (a mass below it is unchanged), so the descent ends on the last positive leaf.
        b = self.branching
        top, below = self._sum_views(channel)
        zero = self._zero
        # The top level is one block shared by every draw; below it, each draw has its own.
        inclusive = top.cumsum(0)
        mass = torch.minimum(mass, torch.nextafter(inclusive[-1:], zero)).clamp_min_(0)
        # the first child whose inclusive sum exceeds the mass
        k = torch.searchsorted(inclusive, mass, right=True).clamp_max_(len(top) - 1)
        mass = mass - torch.take(inclusive - top, k)
        node = k.view(-1)
        for level in below:
            block = level.index_select(0, node)
            inclusive = block.cumsum(1)
            mass = torch.minimum(mass, torch.nextafter(inclusive[:, -1:], zero)).clamp_min_(0)
            k = torch.searchsorted(inclusive, mass, right=True).clamp_max_(b - 1)
            mass = mass - (inclusive - block).gather(1, k)
            node = torch.add(k.view(-1), node, alpha=b)
        return node

    def _sum_views(self, channel: int):
        """One channel's top level, then its lower levels as ``[nodes above, branching]``
        blocks, from the top down (views, made once per channel: a microsecond each)."""
        if channel not in self._sum_parts:
            b = self.branching
            below = [level[channel].view(-1, b) for level in self.levels[: self.height]]
            self._sum_parts[channel] = self.levels[self.height][channel], below[::-1]
        return self._sum_parts[channel]


class _Channel:
    """One channel of a multi-channel tree, seen as upstream's single tree (``_sum_tree``: the
    sampler's first channel, the only one ``scan_lower_bound`` searches)."""

    def __init__(self, tree: SegmentTree, channel: int):
        self.tree, self.channel = tree, channel

    def __getitem__(self, index):
        return self.tree[index][self.channel]

    def __len__(self) -> int:
        return self.tree.size

    def query(self, start: int, end: int) -> float:
        return float(self.tree.query(start, end)[self.channel])

    def scan_lower_bound(self, mass):
        return self.tree.scan_lower_bound(mass)

    @property
    def device(self) -> torch.device:
        return self.tree.device


def _shape(size: int, max_branching: int | None = None) -> tuple[int, int, int]:
    """(height, branching, top) of the complete tree over ``top * branching ** height`` >=
    ``size`` leaves: the fewest levels with at most ``MAX_BRANCHING`` children per node under a
    top of at most ``MAX_TOP`` nodes, then the smallest branching and top for them. The
    constants are read at each call: the reference's self-tests lower them to build deep trees
    at small sizes. ``max_branching`` replaces ``MAX_BRANCHING`` (a subclass's own bound)."""
    b_max, t_max = max_branching or MAX_BRANCHING, MAX_TOP
    height = 0
    while t_max * b_max ** height < size:
        height += 1
    b = b_max
    if height:
        b = max(2, math.ceil((size / t_max) ** (1.0 / height)) - 1)
        while t_max * b ** height < size:
            b += 1
    return height, b, -(-size // b ** height)
