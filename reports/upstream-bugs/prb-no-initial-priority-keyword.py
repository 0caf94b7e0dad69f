"""A feature gap rather than a wrong result: PrioritizedSampler gives the items of an empty
buffer the fixed default priority 1.0 (default_priority falls back to 1.0 while no priority has
been given), and offers no argument to choose it. Priorities are TD errors, whose scale depends
on the task's rewards: the items collected before the first update (e.g. a warm-up of random
frames) all start at 1.0, far above or far below the priorities the learner then writes, so
they are either sampled at the expense of the rest or hardly ever. This reproducer looks for an
`initial_priority` argument; it exits 1 while PrioritizedSampler has none, and once it exists
checks that the first items get it, that later items get the largest priority given since, and
that a negative value is refused naming it.
"""
import inspect
import sys

import torch
from torchrl._utils import logger as torchrl_logger
from torchrl.data import LazyTensorStorage, PrioritizedSampler, ReplayBuffer

torchrl_logger.setLevel("WARNING")  # the storage's INFO line
ALPHA, EPS, INITIAL = 0.6, 1e-8, 0.5
signature = inspect.signature(PrioritizedSampler.__init__)
names = [n for n in signature.parameters
         if "initial" in n or n in ("init_priority", "priority_init")]
print(f"parameters: PrioritizedSampler(8, alpha={ALPHA}, beta=0.5, eps={EPS}, "
      f"<initial priority>={INITIAL}); extend 3 items, update_priority([0], [2.0]), extend 1 item")
print(f"expected:   an argument setting the first default: the 3 first items hold "
      f"({INITIAL} + eps) ** alpha = {(INITIAL + EPS) ** ALPHA:.6f}, the 4th (2 + eps) ** alpha "
      f"= {(2.0 + EPS) ** ALPHA:.6f}; a negative value refused naming it")
if not names:
    print(f"actual:     no such argument in PrioritizedSampler.__init__{signature}; the first "
          "default is always 1.0")
    print("BUG: the default priority of the first items cannot be chosen")
    sys.exit(1)
name = names[0]
sampler = PrioritizedSampler(8, alpha=ALPHA, beta=0.5, eps=EPS, **{name: INITIAL})
rb = ReplayBuffer(storage=LazyTensorStorage(8), sampler=sampler)
rb.extend(torch.arange(3))
rb.update_priority(torch.tensor([0]), torch.tensor([2.0]))
rb.extend(torch.arange(1))
actual = [float(sampler._sum_tree[i]) for i in range(4)]
expected = [(2.0 + EPS) ** ALPHA] + [(INITIAL + EPS) ** ALPHA] * 2 + [(2.0 + EPS) ** ALPHA]
print(f"actual:     {name}={INITIAL}: tree values {[round(v, 6) for v in actual]} (expected "
      f"{[round(v, 6) for v in expected]})")
if any(abs(a - e) > 1e-6 * e for a, e in zip(actual, expected, strict=True)):
    print(f"BUG: {name} is not the default of the first items")
    sys.exit(1)
try:
    PrioritizedSampler(8, alpha=ALPHA, beta=0.5, eps=EPS, **{name: -1.0})
except ValueError as exc:
    print(f"actual:     {name}=-1: ValueError: {exc}")
    if name not in str(exc):
        print(f"BUG: a negative {name} is refused, but the error does not name it")
        sys.exit(1)
else:
    print(f"actual:     {name}=-1 accepted")
    print(f"BUG: a negative {name} is accepted")
    sys.exit(1)
print(f"ok: {name} sets the first default priority")
