"""PrioritizedSampler.dumps fails on a sampler that holds no maximum yet: a new sampler, or one
whose buffer was emptied (ReplayBuffer.empty()). Its _max_priority reads (None, None) until the
first priority is written, and dumps passes the metadata through tree_map(float, ...), which calls
float(None): TypeError. ReplayBuffer.dumps calls the sampler's dumps, so a prioritized buffer
cannot be checkpointed before collection starts or after it was emptied. dumps should write the
unknown maximum as null (loads already copies a null maximum), so that dumps then loads of an
empty sampler round-trips: default priority 1 (the documented initial value) for the first items.
"""
import sys
import tempfile
import warnings
from pathlib import Path

import torch
from torchrl.data import LazyTensorStorage, PrioritizedSampler, ReplayBuffer

warnings.filterwarnings("ignore")
ALPHA, BETA, EPS, CAPACITY = 0.6, 0.4, 1e-3, 16


def buffer():
    sampler = PrioritizedSampler(CAPACITY, alpha=ALPHA, beta=BETA, eps=EPS)
    return ReplayBuffer(storage=LazyTensorStorage(CAPACITY), sampler=sampler)


def main(folder):
    emptied = buffer()  # a buffer written to, then emptied: its storage is initialized
    emptied.extend(torch.arange(4))
    emptied.empty()
    print(f"parameters: PrioritizedSampler({CAPACITY}, alpha={ALPHA}, beta={BETA}, eps={EPS}) "
          "in a ReplayBuffer(LazyTensorStorage(16)): (a) sampler.dumps of a new sampler, then "
          "loads into another new one and extend(2); (b) ReplayBuffer.dumps after extend(4), "
          "empty()")
    expected_tree = (1.0 + EPS) ** ALPHA
    print(f"expected:   (a) dumps succeeds; after loads the default priority is 1 and the two "
          f"new items hold (1 + eps)^alpha = {expected_tree:.6f}; (b) dumps succeeds")
    failures = []
    for what, dump in (("(a) sampler.dumps of a new sampler",
                        lambda: buffer().sampler.dumps(folder / "sampler")),
                       ("(b) ReplayBuffer.dumps of an emptied buffer",
                        lambda: emptied.dumps(folder / "buffer"))):
        try:
            dump()
        except TypeError as exc:  # float(None) on 0.14.1
            print(f"actual:     {what}: TypeError: {exc}")
            failures.append(what)
    if failures:
        print(f"BUG: dumps fails on a sampler that holds no maximum yet ({'; '.join(failures)})")
        return 1
    target = buffer()
    target.sampler.loads(folder / "sampler")
    default = float(target.sampler.default_priority)
    target.extend(torch.arange(2))
    tree = [float(target.sampler._sum_tree[i]) for i in range(2)]
    print(f"actual:     (a) and (b) dumps succeed; after loads: default priority {default:g}, "
          f"new items' tree values {[round(v, 6) for v in tree]}")
    if abs(default - 1.0) > 1e-6 or any(abs(v - expected_tree) > 1e-5 for v in tree):
        print("BUG: the empty sampler's checkpoint does not round-trip")
        return 1
    print("ok: an empty sampler's checkpoint round-trips")
    return 0


with tempfile.TemporaryDirectory() as tmp:
    code = main(Path(tmp))
sys.exit(code)
