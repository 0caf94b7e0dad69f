"""PrioritizedSampler has no upper bound on the default priority of new items: one transition
with a huge TD error makes every later new item that large, and they crowd the samples. The
bound (a `max_priority` / upper priority option, proposed in pytorch/rl#2210) was not merged.
This reproducer looks for such an argument; it exits 1 while PrioritizedSampler has none, and
once it exists checks that the default priority is min(largest stored, bound).
"""
import inspect
import sys

import torch
from torchrl.data import LazyTensorStorage, PrioritizedSampler, ReplayBuffer

BOUND = 4.0
names = [n for n in inspect.signature(PrioritizedSampler.__init__).parameters
         if "upper" in n or n in ("max_priority", "priority_upper_bound")]
print(f"parameters: PrioritizedSampler(capacity 6, alpha 0.6, max_priority_within_buffer=True, "
      f"<upper bound>={BOUND}), priorities [10, 2]")
print(f"expected:   an argument bounding the default priority; default min(10, {BOUND}) = {BOUND}")
if not names:
    print(f"actual:     no such argument in PrioritizedSampler.__init__{inspect.signature(PrioritizedSampler.__init__)}")
    print("BUG: the default priority of new items cannot be bounded")
    sys.exit(1)
sampler = PrioritizedSampler(6, alpha=0.6, beta=0.5, max_priority_within_buffer=True,
                             **{names[0]: BOUND})
rb = ReplayBuffer(storage=LazyTensorStorage(6), sampler=sampler)
rb.extend(torch.arange(2))
rb.update_priority(torch.arange(2), torch.tensor([10.0, 2.0]))
actual = float(sampler.default_priority)
print(f"actual:     {names[0]}={BOUND}: default priority {actual:g}")
if abs(actual - BOUND) > 1e-6:
    print("BUG: the bound is not applied")
    sys.exit(1)
print("ok: the default priority is bounded")
