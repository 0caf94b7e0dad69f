"""The reference's multi-level segment tree, broken one line at a time: what a mutation tool
left alive while no spec built a buffer of more than 32 items (the tree has no level below its
top up to 1024 leaves, so none of these lines ran). Each is the reference sampler on a tree
with one edit:

- ``DESCENT_CUMSUM_DIM0``: the descent below the top sums each draw's block along the draws
  (``cumsum(0)``) instead of along the block;
- ``DESCENT_MASS_PLUS``: the descent adds the mass of the children it skips instead of
  subtracting it (every draw below the top ends on a block's last leaf);
- ``NO_SCRATCH``: a write never allocates its scratch buffer (NameError past 1024 leaves);
- ``REBUILD_SKIPS_LEVELS``: a rebuild from the leaves (checkpoint load, alpha change) recomputes
  the top but not the levels below it;
- ``HEIGHT_DECREMENT``: the tree's shape loop counts its levels down, never reaching a shape
  past 1024 leaves (the constructor never returns).
"""

from __future__ import annotations

from tests.mutants import implementation
from tests.mutants.source import mutated_module

MUTANTS = {
    "DESCENT_CUMSUM_DIM0": ("            inclusive = block.cumsum(1)",
                            "            inclusive = block.cumsum(0)"),
    "DESCENT_MASS_PLUS": ("mass = mass - (inclusive - block).gather(1, k)",
                          "mass = mass + (inclusive - block).gather(1, k)"),
    "NO_SCRATCH": ("reduced, groups = self._scratch(index.numel())", "pass"),
    "HEIGHT_DECREMENT": ("        height += 1\n", "        height -= 1\n"),
    "REBUILD_SKIPS_LEVELS": ("            self._reduce(blocks[level], self.levels[level + 1])\n",
                             "            pass\n"),
}


def reference_with_tree(name: str, old: str, new: str, trees: bool = False):
    """The reference implementation's replay area, its sampler on a mutated segment tree; with
    ``trees``, the tree specs also build that mutated tree directly (left off for the mutants
    of this module: their sampler specs kill them, and HEIGHT_DECREMENT would hang each tree
    spec until its timeout)."""
    from conformance.implementations.torchrl_areas.prioritized_replay import (
        PrioritizedReplayArea,
    )

    tree = mutated_module("impls.segment_tree", old, new, tag=name)
    sampler = mutated_module("impls.prioritized_replay", tag=name,
                             SegmentTree=tree.SegmentTree, _Channel=tree._Channel)
    area = PrioritizedReplayArea(sampler.PrioritizedSampler, default_is_raw=True,
                                 cuda_problem=lambda: None)
    if trees:
        area.tree_factory = lambda size, reduce: tree.SegmentTree(size, reduce)
    return implementation(name.lower().replace("_", "-"), prioritized_replay=area)


DESCENT_CUMSUM_DIM0 = reference_with_tree("DESCENT_CUMSUM_DIM0", *MUTANTS["DESCENT_CUMSUM_DIM0"])
DESCENT_MASS_PLUS = reference_with_tree("DESCENT_MASS_PLUS", *MUTANTS["DESCENT_MASS_PLUS"])
NO_SCRATCH = reference_with_tree("NO_SCRATCH", *MUTANTS["NO_SCRATCH"])
HEIGHT_DECREMENT = reference_with_tree("HEIGHT_DECREMENT", *MUTANTS["HEIGHT_DECREMENT"])
REBUILD_SKIPS_LEVELS = reference_with_tree("REBUILD_SKIPS_LEVELS",
                                          *MUTANTS["REBUILD_SKIPS_LEVELS"])
#: the same construction without an edit: the harness alone passes
UNMUTATED = reference_with_tree("UNMUTATED", "", "")
