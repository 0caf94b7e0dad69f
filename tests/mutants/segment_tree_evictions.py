"""The reference's multi-level segment tree, broken one line at a time: the three edits that a
mutation run of the prioritized_replay area left alive (no spec evicted a maximum below a tree's
first top node, nor wrote a batch of exactly ``branching`` items after a batch of another size).
Each is the reference sampler on a tree with one edit; each is invisible on a tree of height 0
(up to 1024 leaves), where the top is the leaf level:

- ``EVICTION_ANCESTORS_OF_NODE_0``: ``fill_channel`` (the eviction before a write with
  ``max_priority_within_buffer``) recomputes node 0 of every level (``_parents`` of the boolean
  ``_wide(index)``) instead of the evicted slots' ancestors: the root still holds the evicted
  maximum, so the new items inherit it;
- ``EVICTION_ROOT_IN_LEVEL_1``: ``fill_channel`` writes the reduction of the top into node 0 of
  level 1 instead of the root: the root keeps the evicted maximum;
- ``GATHER_BUFFER_BY_BRANCHING``: the gather buffer of a write is kept while its *branching*
  equals the batch size, so a batch of exactly ``branching`` items after a batch of another size
  gathers into a buffer of the other size (stale children, wrong sums).
"""

from __future__ import annotations

from tests.mutants import segment_tree

MUTANTS = {
    "EVICTION_ANCESTORS_OF_NODE_0": (
        "for level, parent in enumerate(self._parents(index, self._wide(index)), 1):",
        "for level, parent in enumerate(self._parents(self._wide(index)), 1):"),
    "EVICTION_ROOT_IN_LEVEL_1": (
        "self._channel_parts[channel] = op, rows, blocks, rows[-1][0]",
        "self._channel_parts[channel] = op, rows, blocks, rows[+1][0]"),
    "GATHER_BUFFER_BY_BRANCHING": (
        "if self._gather_cache is None or self._gather_cache[0].shape[1] != k:",
        "if self._gather_cache is None or self._gather_cache[0].shape[2] != k:"),
}

EVICTION_ANCESTORS_OF_NODE_0 = segment_tree.reference_with_tree(
    "EVICTION_ANCESTORS_OF_NODE_0", *MUTANTS["EVICTION_ANCESTORS_OF_NODE_0"])
EVICTION_ROOT_IN_LEVEL_1 = segment_tree.reference_with_tree(
    "EVICTION_ROOT_IN_LEVEL_1", *MUTANTS["EVICTION_ROOT_IN_LEVEL_1"])
GATHER_BUFFER_BY_BRANCHING = segment_tree.reference_with_tree(
    "GATHER_BUFFER_BY_BRANCHING", *MUTANTS["GATHER_BUFFER_BY_BRANCHING"])
#: the same construction without an edit: the harness alone passes
UNMUTATED = segment_tree.reference_with_tree("UNMUTATED", "", "")
