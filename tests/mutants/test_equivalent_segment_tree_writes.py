"""Probes of the equivalent mutants of ``impls/segment_tree.py``'s writes
(``classified/prioritized_replay.json``): each applies mutmut's very edit and shows that the tree
a seeded sequence of writes leaves (every level, every root, the searches) is bit for bit the
unmutated one's.

- ``_wide`` only chooses between two correct recomputations of the ancestors: per written leaf
  (a parent written twice is recomputed twice from the same children) or each parent once; an
  edit of its threshold moves writes from one to the other (only memory and time change);
- the same for the ``unique`` flag of ``_set_wide`` and ``fill_channel``;
- ``zip(..., strict=True)`` in ``set`` zips two lists of the same length (one per channel group);
- the reductions of ``fill_channel`` run over a 2-D block (dim ``+1`` is dim ``-1``) and over
  the 1-D top row (no dim, or ``None``, is dim 0).
"""

import numpy as np
import pytest
import torch

import impls.segment_tree as original
from tests.mutants.source import mutated_module

_WIDE = "return self.height > 0 and index.numel() * self.branching > self.levels[0].shape[1]"
_SET_WIDE = "for level, parent in enumerate(self._parents(index, unique=True), 1):"
_FILL = "for level, parent in enumerate(self._parents(index, self._wide(index)), 1):"
_ZIP = "for (op, _lo, _hi, out), part in zip(groups, parts, strict=True):"
_FILL_OP = "op(blocks[level - 1].index_select(0, parent), -1))"
_ROOT = "op(rows[self.height], 0, out=root)"
EDITS = {
    "wide-or": (_WIDE, _WIDE.replace("> 0 and", "> 0 or")),
    "wide-height-ge-0": (_WIDE, _WIDE.replace("height > 0", "height >= 0")),
    "wide-height-gt-1": (_WIDE, _WIDE.replace("height > 0", "height > 1")),
    "wide-divided": (_WIDE, _WIDE.replace("numel() * self", "numel() / self")),
    "wide-at-equal": (_WIDE, _WIDE.replace("branching > self", "branching >= self")),
    "wide-level-one": (_WIDE, _WIDE.replace("levels[0]", "levels[1]")),
    "set-wide-unique-none": (_SET_WIDE, _SET_WIDE.replace("unique=True", "unique=None")),
    "set-wide-unique-dropped": (_SET_WIDE, _SET_WIDE.replace("unique=True", "")),
    "set-wide-unique-false": (_SET_WIDE, _SET_WIDE.replace("unique=True", "unique=False")),
    "fill-unique-none": (_FILL, _FILL.replace("self._wide(index)", "None")),
    "fill-unique-dropped": (_FILL, _FILL.replace("self._wide(index)", "")),
    "zip-strict-none": (_ZIP, _ZIP.replace("strict=True", "strict=None")),
    "zip-strict-dropped": (_ZIP, _ZIP.replace("strict=True", "")),
    "zip-strict-false": (_ZIP, _ZIP.replace("strict=True", "strict=False")),
    "fill-reduce-dim-plus-one": (_FILL_OP, _FILL_OP.replace("-1))", "+1))")),
    "fill-root-dim-none": (_ROOT, _ROOT.replace(", 0,", ", None,")),
    "fill-root-dim-dropped": (_ROOT, _ROOT.replace(", 0,", ",")),
}
# (MAX_BRANCHING, MAX_TOP): trees of height 0, 1 and 2 at these sizes
SHAPES = [(32, 1024), (4, 8), (3, 5)]
SIZES = [7, 100, 3000]


def _observe(module, size: int, shape) -> list:
    """Every level and root of a (sum, min, min) tree, like the sampler's, after seeded narrow
    and wide writes and one-channel fills, and a search of its sum channel."""
    saved = module.MAX_BRANCHING, module.MAX_TOP
    module.MAX_BRANCHING, module.MAX_TOP = shape
    try:
        tree = module.SegmentTree(size, ("sum", "min", "min"))
    finally:
        module.MAX_BRANCHING, module.MAX_TOP = saved
    rng = np.random.default_rng(size)
    seen = []
    for k in (size, 1, max(1, size // 3), 2, size):  # wide and narrow writes
        index = torch.as_tensor(rng.choice(size, k, replace=False))
        value = torch.as_tensor(rng.uniform(0, 4, (3, k)))
        tree.set(index, value)
        fill = torch.as_tensor(rng.choice(size, max(1, k // 2), replace=False))
        tree.fill_channel(2, fill, float("inf"))
        seen += [level.clone() for level in tree.levels]
        total = float(tree.root[0])
        if total > 0:
            seen.append(tree.scan(torch.as_tensor(rng.uniform(0, total, 50)))[0])
    return seen


@pytest.mark.parametrize("edit", list(EDITS))
def test_tree_write_edit_is_not_observable(edit):
    mutated = mutated_module("impls.segment_tree", *EDITS[edit], tag=edit.replace("-", "_"))
    for size in SIZES:
        for shape in SHAPES:
            want, got = _observe(original, size, shape), _observe(mutated, size, shape)
            assert len(want) == len(got)
            for i, (w, g) in enumerate(zip(want, got, strict=True)):
                assert torch.equal(w, g), f"{edit}: size {size}, shape {shape}: item {i} differs"


def test_the_probe_sees_a_fill_that_skips_its_ancestors():
    """The probe's own check: an edit that is not equivalent (the eviction's ancestors not
    recomputed) is seen."""
    mutated = mutated_module(
        "impls.segment_tree",
        _FILL,
        _FILL.replace("self._parents(index, self._wide(index))", "self._parents(index[:0], False)"),
        tag="fill_none",
    )
    with pytest.raises(AssertionError):
        for shape in SHAPES[1:]:
            want, got = _observe(original, 3000, shape), _observe(mutated, 3000, shape)
            assert all(torch.equal(w, g) for w, g in zip(want, got, strict=True))
