"""PrioritizedSampler accepts a negative eps. The trees hold (p + eps) ** alpha, which is NaN for
every priority below -eps (a negative base to a fractional power): with eps = -0.5 an item of
priority 0.25 holds NaN, the sum tree's total becomes NaN, and sampling breaks. A buffer with its
own generator then draws item 0 every time with NaN importance weights (torch.rand * NaN is NaN,
and the tree search sends NaN to the leftmost leaf); one without a generator fails in
np.random.uniform(0, NaN). The constructor validates alpha and beta but not eps; it should raise
ValueError naming eps.
"""
import sys

import torch
from torchrl._utils import logger as torchrl_logger
from torchrl.data import LazyTensorStorage, PrioritizedSampler, ReplayBuffer

torchrl_logger.setLevel("WARNING")  # the storage's INFO line
EPS = -0.5
PRIORITIES = [0.25, 1.0, 2.0, 3.0]
print(f"parameters: PrioritizedSampler(4, alpha=0.6, beta=0.5, eps={EPS}); priorities "
      f"{PRIORITIES}, 8 draws from a buffer with generator seed 0")
print("expected:   ValueError naming eps (eps must be >= 0)")
try:
    sampler = PrioritizedSampler(4, alpha=0.6, beta=0.5, eps=EPS)
except ValueError as exc:
    print(f"actual:     ValueError: {exc}")
    if "eps" not in str(exc):
        print("BUG: refused, but the error does not name eps")
        sys.exit(1)
    print("ok: a negative eps is refused")
    sys.exit(0)
rb = ReplayBuffer(storage=LazyTensorStorage(4), sampler=sampler, batch_size=8,
                  generator=torch.Generator().manual_seed(0))
rb.extend(torch.arange(4))
rb.update_priority(torch.arange(4), torch.tensor(PRIORITIES))
tree = [round(float(sampler._sum_tree[i]), 4) for i in range(4)]
_, info = rb.sample(return_info=True)
print(f"actual:     accepted; tree values {tree} (total {float(sampler._sum_tree.query(0, 4))}); "
      f"draws {info['index'].tolist()}, weights {info['priority_weight'].tolist()}")
print("BUG: a negative eps is accepted and turns priorities below -eps into NaN")
sys.exit(1)
