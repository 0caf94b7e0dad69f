"""PrioritizedSampler: changing alpha away from 0 on a sampler that holds priorities keeps the
trees uniform. The sampler keeps only (p + eps) ** alpha in its trees, and at alpha = 0 that is
1 for every item, so the raw priorities are lost and sampling ignores them until each item is
updated again. TorchRL documents this (the alpha docstring) and warns (UserWarning, printed here:
the warning is the documentation a user sees; the report asks for the raw priorities to be kept). Annealing alpha through 0 (0.6 -> 0 -> 0.8, e.g. with a scheduler) then
samples uniformly at alpha 0.8. Keeping the raw priorities next to the trees fixes it.
"""
import sys

import torch
from torchrl.data import LazyTensorStorage, PrioritizedSampler, ReplayBuffer

EPS = 1e-8
PRIORITIES = torch.tensor([1.0, 2.0, 4.0, 8.0])
sampler = PrioritizedSampler(4, alpha=0.6, beta=0.5, eps=EPS)
rb = ReplayBuffer(storage=LazyTensorStorage(4), sampler=sampler)
rb.extend(torch.arange(4))
rb.update_priority(torch.arange(4), PRIORITIES)
for alpha in (0.0, 0.8):
    sampler.alpha = alpha

# expected: the tree holds (p + eps) ** 0.8 for every stored item
expected = ((PRIORITIES.double() + EPS) ** 0.8).tolist()
actual = [float(sampler._sum_tree[i]) for i in range(4)]
print(f"parameters: PrioritizedSampler(alpha 0.6), priorities {PRIORITIES.tolist()}, then "
      "alpha 0.6 -> 0 -> 0.8")
print(f"expected:   tree values {[round(x, 4) for x in expected]}  ((p + eps) ** 0.8)")
print(f"actual:     tree values {[round(x, 4) for x in actual]}")
if any(abs(a - e) > 1e-4 * e for a, e in zip(actual, expected)):
    print("BUG: the priorities are lost when alpha passes through 0")
    sys.exit(1)
print("ok: the priorities survive alpha = 0")
