"""The reference's segment tree API (``impls/segment_tree.py``: ``query``, ``tree[index] =``,
``scan_lower_bound``, and ``_Channel``, the sampler's ``_sum_tree``) broken one line at a time,
as a mutation tool left it while no spec drove the trees themselves:

- ``QUERY_DROPS_RIGHT_EDGE``: ``query`` leaves out the partial block at the right end of a
  range on every level below the top;
- ``QUERY_TOP_SHORT``: ``query`` stops one node short on the top level;
- ``SETITEM_NO_BROADCAST``: ``tree[index] = number`` for several indices is not broadcast;
- ``SCAN_PAST_TOP``: the descent from the top keeps the mass of the skipped children;
- ``CHANNEL_QUERY_MIN``: the sampler's ``_sum_tree.query`` reads the min channel;
- ``CHANNEL_SCAN_VALUES``: the sampler's ``_sum_tree.scan_lower_bound`` returns the values of
  the leaves found instead of their indices;
- ``SETITEM_UNCHECKED``: ``tree[index] = value`` no longer checks the indices first, so an
  index array with a bad index after valid ones writes those (``index_copy_`` refuses midway)
  and leaves their ancestors stale.
"""

from __future__ import annotations

from tests.mutants import segment_tree

MUTANTS = {
    "QUERY_DROPS_RIGHT_EDGE": (
        "parts += [level[:, start:left_end], level[:, right_start:end]]",
        "parts += [level[:, start:left_end]]"),
    "QUERY_TOP_SHORT": ("parts.append(self.levels[self.height][:, start:end])",
                        "parts.append(self.levels[self.height][:, start:end - 1])"),
    "SETITEM_NO_BROADCAST": ("self.set(index, value.expand(index.numel()))",
                             "self.set(index, value)"),
    "SCAN_PAST_TOP": ("mass = mass - torch.take(inclusive - top, k)",
                      "mass = mass + torch.take(inclusive - top, k)"),
    "CHANNEL_QUERY_MIN": ("return float(self.tree.query(start, end)[self.channel])",
                          "return float(self.tree.query(start, end)[1])"),
    "CHANNEL_SCAN_VALUES": ("return self.tree.scan_lower_bound(mass)",
                            "return self.tree.scan(mass)[1]"),
    "SETITEM_UNCHECKED": ("if bool(outside.any()):", "if False:"),
}


def reference_with_tree(name: str, old: str, new: str):
    """The reference's replay area, its trees and its sampler's tree from a mutated
    ``impls.segment_tree``."""
    return segment_tree.reference_with_tree(name, old, new, trees=True)


QUERY_DROPS_RIGHT_EDGE = reference_with_tree("QUERY_DROPS_RIGHT_EDGE",
                                             *MUTANTS["QUERY_DROPS_RIGHT_EDGE"])
QUERY_TOP_SHORT = reference_with_tree("QUERY_TOP_SHORT", *MUTANTS["QUERY_TOP_SHORT"])
SETITEM_NO_BROADCAST = reference_with_tree("SETITEM_NO_BROADCAST",
                                           *MUTANTS["SETITEM_NO_BROADCAST"])
SCAN_PAST_TOP = reference_with_tree("SCAN_PAST_TOP", *MUTANTS["SCAN_PAST_TOP"])
CHANNEL_QUERY_MIN = reference_with_tree("CHANNEL_QUERY_MIN", *MUTANTS["CHANNEL_QUERY_MIN"])
CHANNEL_SCAN_VALUES = reference_with_tree("CHANNEL_SCAN_VALUES", *MUTANTS["CHANNEL_SCAN_VALUES"])
SETITEM_UNCHECKED = reference_with_tree("SETITEM_UNCHECKED", *MUTANTS["SETITEM_UNCHECKED"])
#: the same construction without an edit: the harness alone passes
UNMUTATED = reference_with_tree("UNMUTATED", "", "")
