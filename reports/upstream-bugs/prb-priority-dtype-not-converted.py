"""PrioritizedSampler writes (p + eps) ** alpha into its segment trees in the dtype of the
priorities it was given, not in the trees' dtype. update_priority computes
torch.pow(priority + eps, alpha) and hands that tensor to SumSegmentTreeFp32/Fp64.__setitem__,
which accepts only its own dtype. Both directions fail: float64 priorities (a float64 critic's
TD error) into the default float32 trees raise "expected scalar type Float but found Double";
and a sampler built with dtype=torch.float64 cannot take its first extend, because the default
priority of an empty buffer (the Python float 1.0, made a float32 tensor) is written into its
float64 trees ("expected scalar type Double but found Float"). The priorities should be converted
to the trees' dtype before the transform, so that float64 trees hold float64-exact values.
"""
import sys

import torch
from torchrl._utils import logger as torchrl_logger
from torchrl.data import LazyTensorStorage, PrioritizedSampler, ReplayBuffer

torchrl_logger.setLevel("WARNING")  # the storages' INFO lines
ALPHA, EPS = 0.6, 1e-8
PRIORITIES = [0.25, 1.75, 3.0, 4.5]  # exact in float32 and float64
torch.manual_seed(0)


def tree_error(exc):
    # the dtype refusal of the C++ trees is the bug; anything else is a crash, not a verdict
    if "expected scalar type" not in str(exc):
        raise exc
    return f"RuntimeError: {exc}"


def case(tree_dtype, priority_dtype):
    """A sampler with trees in tree_dtype: extend 4 items, then update_priority with priorities
    in priority_dtype. Returns (what went wrong or None, the tree values read back)."""
    sampler = PrioritizedSampler(4, alpha=ALPHA, beta=0.5, eps=EPS, dtype=tree_dtype)
    rb = ReplayBuffer(storage=LazyTensorStorage(4), sampler=sampler)
    try:
        rb.extend(torch.arange(4))
    except RuntimeError as exc:
        return f"extend raised {tree_error(exc)}", None
    try:
        rb.update_priority(torch.arange(4), torch.tensor(PRIORITIES, dtype=priority_dtype))
    except RuntimeError as exc:
        return f"update_priority raised {tree_error(exc)}", None
    return None, [float(sampler._sum_tree[i]) for i in range(4)]


print(f"parameters: PrioritizedSampler(4, alpha={ALPHA}, beta=0.5, eps={EPS}, dtype=<trees>), "
      f"extend(4 items), update_priority(arange(4), {PRIORITIES} in <priorities' dtype>)")
print("expected:   no error; the trees hold (p + eps) ** alpha in their own dtype "
      "(to 1e-12 where trees and priorities are float64)")
bugs = []
for tree_dtype, priority_dtype in ((torch.float32, torch.float64),
                                   (torch.float64, torch.float32),
                                   (torch.float64, torch.float64)):
    label = f"trees {str(tree_dtype)[6:]}, priorities {str(priority_dtype)[6:]}"
    error, values = case(tree_dtype, priority_dtype)
    if error:
        print(f"actual:     {label}: {error}")
        bugs.append(label)
        continue
    # the expected tree values, computed here in float64 and rounded to the trees' dtype
    want = (torch.tensor(PRIORITIES, dtype=torch.float64) + EPS) ** ALPHA
    want = want.to(tree_dtype).double().tolist()
    # float64 precision where trees and priorities are both float64, float32 rounding otherwise
    tol = 1e-12 if tree_dtype == priority_dtype == torch.float64 else 1e-6
    wrong = [i for i in range(4) if abs(values[i] - want[i]) > tol * want[i]]
    print(f"actual:     {label}: tree values {[round(v, 9) for v in values]}"
          + (f" (expected {[round(v, 9) for v in want]})" if wrong else ""))
    if wrong:
        bugs.append(label)
if bugs:
    print("BUG: the value written into the trees is not converted to their dtype "
          f"({'; '.join(bugs)})")
    sys.exit(1)
print("ok: priorities of either dtype are written into the trees in the trees' dtype")
