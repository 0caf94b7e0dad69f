"""Probes of the equivalent mutants of ``impls/segment_tree.py`` (``classified/prioritized_replay.json``):
each applies mutmut's very edit and shows that nothing a user can observe changes.

The tree's shape (``_shape``: how many levels, how wide) is free as long as the levels cover
every leaf: starting the count at one level, adding a level when the top would be exactly full,
counting levels two at a time, or another first guess of the branching (widened until the
levels cover every leaf) gives another complete tree with the same leaves, reductions and
searches (only the cost moves).
"""

import numpy as np
import pytest
import torch

import impls.segment_tree as original
from tests.mutants.source import mutated_module

_B = "b = max(2, math.ceil((size / t_max) ** (1.0 / height)) - 1)"
EDITS = {
    "height-starts-at-one": ("    height = 0\n", "    height = 1\n"),
    "height-loop-at-full-top": ("    while t_max * b_max ** height < size:\n",
                                "    while t_max * b_max ** height <= size:\n"),
    "two-levels-at-a-time": ("        height += 1\n", "        height += 2\n"),
    # the first guess of the branching (the loop after it widens it until the levels cover
    # every leaf): any guess gives a complete tree
    "branching-at-least-three": (_B, _B.replace("max(2,", "max(3,")),
    "branching-guess-plus-one": (_B, _B.replace(") - 1)", ") + 1)")),
    "branching-guess-product": (_B, _B.replace("(size / t_max) ** (1.0", "(size / t_max) * (1.0")),
    "branching-guess-square": (_B, _B.replace("(1.0 / height)", "(2.0 / height)")),
    "branching-guess-minus-two": (_B, _B.replace(") - 1)", ") - 2)")),
    # the top is sized from the branching (ceil(size / b ** height)), so any b >= 2 covers
    "branching-loop-product": ("        while t_max * b ** height < size:\n",
                               "        while t_max * b * height < size:\n"),
    "branching-loop-at-full-top": ("        while t_max * b ** height < size:\n",
                                   "        while t_max * b ** height <= size:\n"),
    "branching-loop-two-at-a-time": ("            b += 1\n", "            b += 2\n"),
    # the root level is read at [:, 0]: a second, never-written slot changes nothing
    "root-level-of-two": ("for lvl in range(height + 1)] + [1]",
                          "for lvl in range(height + 1)] + [2]"),
}
SIZES = [1, 7, 32, 1024, 1025, 3000, 32768, 40000]


def _observe(module, size: int) -> dict:
    """Everything a user reads from a sum tree, a min tree and a (sum, min) tree of ``size``
    leaves after seeded writes."""
    rng = np.random.default_rng(size)
    values = torch.as_tensor(rng.integers(0, 8, size).astype(np.float64))
    sums = module.SegmentTree(size)
    sums[torch.arange(size)] = values
    index = torch.as_tensor(rng.choice(size, min(size, 50), replace=False))
    sums[index] = 3.0
    mins = module.SegmentTree(size, "min")
    mins[torch.arange(size)] = values + 1
    both = module.SegmentTree(size, ("sum", "min"))
    both.set(torch.arange(size), torch.stack([values, values + 1]))
    both.rebuild()
    ranges = [(0, size)] + [tuple(sorted(rng.integers(0, size + 1, 2))) for _ in range(30)]
    ranges = [(a, b) for a, b in ranges if a < b]
    total = float(sums.root)
    mass = torch.as_tensor(rng.uniform(0, total, 200)) if total > 0 else torch.zeros(0)
    return {
        "leaves": sums.leaves.clone(), "roots": (sums.root, mins.root, both.root),
        "queries": [(sums.query(a, b), mins.query(a, b), both.query(a, b)) for a, b in ranges],
        "search": sums.scan_lower_bound(mass) if total > 0 else None,
        "values": sums[index],
    }


@pytest.mark.parametrize("edit", list(EDITS))
def test_tree_shape_edit_is_not_observable(edit):
    mutated = mutated_module("impls.segment_tree", *EDITS[edit], tag=edit.replace("-", "_"))
    for size in SIZES:
        want, got = _observe(original, size), _observe(mutated, size)
        for name in want:
            assert str(got[name]) == str(want[name]) or all(
                torch.equal(torch.as_tensor(g), torch.as_tensor(w))
                for g, w in zip(_flat(got[name]), _flat(want[name]), strict=True)), (
                f"{edit}: size {size}: {name} differs")


def _flat(x):
    if isinstance(x, (list, tuple)):
        return [y for item in x for y in _flat(item)]
    return [x]
