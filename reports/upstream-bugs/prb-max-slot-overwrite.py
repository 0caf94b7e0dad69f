"""PrioritizedSampler(max_priority_within_buffer=True): writing over the slot that holds the
maximum priority goes wrong twice.
  1. The new item's priority is computed (writer -> mark_update -> default_priority) before the
     overwritten maximum is dropped (sampler.extend -> _maybe_erase_max_priority), so the new
     item inherits the evicted maximum: 10 instead of 8, the largest priority that remains.
  2. The tracked maximum is then erased instead of recomputed, so the default priority falls
     back to the initial 1.0 although the buffer holds 8 (and the new item's 10).
Expected values follow from the option's definition: the default priority is the largest
priority among the items in the buffer; an evicted item no longer counts.
"""
import sys

import torch
from torchrl.data import LazyTensorStorage, PrioritizedSampler, ReplayBuffer

ALPHA, EPS = 0.7, 1e-8
PRIORITIES = [10.0, 8.0, 3.0, 2.0, 1.0]
sampler = PrioritizedSampler(len(PRIORITIES), alpha=ALPHA, beta=0.5, eps=EPS,
                             max_priority_within_buffer=True)
rb = ReplayBuffer(storage=LazyTensorStorage(len(PRIORITIES)), sampler=sampler)
rb.extend(torch.arange(len(PRIORITIES)))
rb.update_priority(torch.arange(len(PRIORITIES)), torch.tensor(PRIORITIES))
rb.extend(torch.tensor([100]))  # the ring is full: this item goes to slot 0, evicting the 10

# the tree holds (p + eps) ** alpha; invert it to read the new item's raw priority
new_item = float(sampler._sum_tree[0]) ** (1 / ALPHA) - EPS
default = float(sampler.default_priority)
expected_new = max(PRIORITIES[1:])
expected_default = max(PRIORITIES[1:] + [expected_new])

print(f"parameters: PrioritizedSampler(capacity 5, alpha={ALPHA}, max_priority_within_buffer="
      f"True), priorities {PRIORITIES}, then extend(1) over slot 0 (the maximum)")
print(f"expected:   new item's priority {expected_new:g}, default priority {expected_default:g}  "
      "(the largest priority among the items that remain in the buffer)")
print(f"actual:     new item's priority {new_item:.6g}, default priority {default:.6g}")
problems = []
if abs(new_item - expected_new) > 1e-3 * expected_new:
    problems.append("the item written over the max slot inherits the evicted maximum")
if abs(default - expected_default) > 1e-3 * expected_default:
    problems.append("the default priority no longer is the largest stored one")
if problems:
    print("BUG: " + "; ".join(problems))
    sys.exit(1)
print("ok: the maximum is recomputed from what remains")
