"""SumSegmentTreeFp32.scan_lower_bound, the prefix-sum search that turns a uniform draw into an
item, can return a leaf of weight 0. The C++ descent (ScanLowerBound in csrc/segment_tree.h, the
same in the CUDA kernel) goes right only when the mass is strictly greater than the left
subtree's sum, so it returns the first leaf whose prefix sum reaches the mass (a lower bound):
a mass of exactly 0 (a uniform draw of exactly 0) finds leaf 0 even when it weighs 0 (eps = 0
and priority 0). On a tree whose total is 0 it returns an index (0, a leaf of weight 0, or
`size`, past the last leaf) instead of refusing. A mass m in [0, total] should find a leaf of
positive weight whose interval [prefix before, prefix through] holds m, and a search of a tree
of total 0 should raise.
"""
import sys

import numpy as np
from torchrl.data.replay_buffers.samplers import SumSegmentTreeFp32

SIZE = 7
LEAVES = np.array([0.0, 0.0, 1.0, 0.0, 2.0, 1.0, 3.0], dtype=np.float32)  # items of weight 0
through = np.cumsum(LEAVES.astype(np.float64))
before = through - LEAVES
masses = np.array([0.0, 1.0, 3.0], dtype=np.float32)  # 0 (a draw of exactly 0) and boundaries

tree = SumSegmentTreeFp32(SIZE)
for i, value in enumerate(LEAVES):
    tree[i] = float(value)
print(f"parameters: SumSegmentTreeFp32({SIZE}) with leaves {LEAVES.tolist()}, "
      f"scan_lower_bound({masses.tolist()}); then a tree of {SIZE} leaves all 0, "
      "scan_lower_bound([0.0, 0.5])")
print("expected:   leaves of positive weight whose interval holds the mass: 2 for mass 0 (leaves "
      "0 and 1 weigh 0), 2 or 4 for 1, 4 or 5 for 3; on the all-zero tree an exception")
found = np.asarray(tree.scan_lower_bound(masses), dtype=np.int64)
bad = [(float(m), int(f)) for m, f in zip(masses, found, strict=True)
       if not (0 <= f < SIZE and LEAVES[f] > 0 and before[f] <= m <= through[f])]
weights = [float(LEAVES[f]) if 0 <= f < SIZE else None for f in found]
print(f"actual:     found leaves {found.tolist()} (weights {weights})")

empty = SumSegmentTreeFp32(SIZE)
try:
    got = np.asarray(empty.scan_lower_bound(np.array([0.0, 0.5], dtype=np.float32)))
except (RuntimeError, ValueError, IndexError) as exc:  # a refusal is the fixed behaviour
    refused = f"{type(exc).__name__}: {exc}"
    print(f"actual:     all-zero tree: {refused}")
    got = None
else:
    print(f"actual:     all-zero tree: returned indices {got.tolist()} (0 weighs 0, {SIZE} is past "
          "the last leaf)")
if bad or got is not None:
    what = []
    if bad:
        what.append(f"masses {[m for m, _ in bad]} found leaves {[f for _, f in bad]} of weight 0")
    if got is not None:
        what.append("a tree of total 0 is searched instead of refused")
    print(f"BUG: {'; '.join(what)}")
    sys.exit(1)
print("ok: every mass finds a leaf of positive weight, and a tree of total 0 is refused")
