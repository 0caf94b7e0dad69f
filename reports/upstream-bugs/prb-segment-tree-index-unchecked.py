"""SumSegmentTreeFp32 and MinSegmentTreeFp32 (torchrl.data.replay_buffers.samplers, the C++
trees every prioritized sampler keeps) check no index. The C++ tree stores its leaves at
values_[capacity, 2 * capacity), capacity the smallest power of two above the size, and
tree[i] reads or writes values_[i | capacity] (csrc/segment_tree.h, At and Update):
- an index in [size, capacity) lands on a padding leaf, which the root, and so
  query(0, size), includes: the tree's total changes while every real leaf reads the same;
- an index in [capacity, 2 * capacity) overwrites the leaf index - capacity;
- an index of 2 * capacity or more, or a negative one, reads or writes outside the buffer.
PrioritizedSampler.update_priority hands its slots to these trees unchecked, so
rb.update_priority(9, p) in a buffer of 7 slots overwrites slot 1's priority. tree[index] =
value, tree[index] and update_priority should raise for an index outside [0, size) and change
nothing. Only the in-buffer cases are run here (a write outside the buffer corrupts the heap).
"""
import sys

import torch
from torchrl.data import LazyTensorStorage, PrioritizedReplayBuffer
from torchrl.data.replay_buffers.samplers import SumSegmentTreeFp32

SIZE = 7  # capacity 8
LEAVES = torch.arange(1.0, 8.0)
print(f"parameters: SumSegmentTreeFp32({SIZE}) with leaves {LEAVES.tolist()} (total 28); "
      "then tree[7] = 64, tree[9] = 64, tree[7] (read); and a PrioritizedReplayBuffer of 7 "
      "slots (alpha 1, eps 0) with the same priorities, then update_priority(9, 64)")
print("expected:   IndexError for each tree call (7 and 9 are outside [0, 7)), leaves and "
      "query(0, 7) = 28 unchanged; update_priority(9, 64) refused, slot 1 keeps priority 2")
found = []
for index, action in ((7, "write"), (9, "write"), (7, "read")):
    tree = SumSegmentTreeFp32(SIZE)
    tree[torch.arange(SIZE)] = LEAVES
    try:
        if action == "write":
            tree[index] = 64.0
        else:
            got = tree[index]
    except IndexError as exc:  # the fixed behaviour
        print(f"actual:     tree[{index}] ({action}): IndexError: {exc}")
        continue
    leaves = [float(tree[i]) for i in range(SIZE)]
    total = float(tree.query(0, SIZE))
    what = f"returned {float(got)}" if action == "read" else "accepted"
    print(f"actual:     tree[{index}] ({action}): {what}; leaves now {leaves}, "
          f"query(0, 7) = {total}")
    found.append(f"tree[{index}] ({action})")
rb = PrioritizedReplayBuffer(alpha=1.0, beta=0.4, eps=0.0, storage=LazyTensorStorage(SIZE))
rb.extend(torch.arange(SIZE))
rb.update_priority(torch.arange(SIZE), LEAVES)
try:
    rb.update_priority(torch.tensor([9]), torch.tensor([64.0]))
except (IndexError, RuntimeError, ValueError) as exc:  # the fixed behaviour: refused
    print(f"actual:     rb.update_priority(9, 64): {type(exc).__name__}: {exc}")
else:
    slots = [float(rb.sampler._sum_tree[i]) for i in range(SIZE)]
    print(f"actual:     rb.update_priority(9, 64): accepted; the slots' tree values now {slots}")
    found.append("rb.update_priority(9, 64)")
if found:
    print(f"BUG: {', '.join(found)} not refused: indices outside [0, {SIZE}) reach the "
          "padding leaves and other items' leaves")
    sys.exit(1)
print("ok: indices outside the tree are refused")
