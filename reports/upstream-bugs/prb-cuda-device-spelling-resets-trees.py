"""PrioritizedSampler(device="cuda") rebuilds empty CUDA trees at every sample() and
update_priority(). Both start with _maybe_init_from_storage, which compares the device asked for
(torch.device("cuda"), no index) with the sampler's `device` property, i.e. the device the CUDA
trees report: the device of their values, which always has an index (cuda:0). The two compare
unequal, so _init() builds new, empty trees each time. The same happens to a sampler without a
device under a storage built with device="cuda". Spelling the device "cuda:0" avoids it, and
TorchRL's CUDA tests all spell it that way.

This runs without a GPU: the CUDA tree classes are replaced by Python stand-ins that report the
device as the real ones do ("cuda:0" for a tree built on "cuda"); nothing else is touched, so the
code under test is the sampler's own Python.
"""
import sys

import torch
import torchrl.data.replay_buffers.samplers.prioritized as prioritized
from torchrl.data import PrioritizedSampler

built = []


class CudaTreeStandIn:
    """Like torchrl._torchrl.Cuda{Sum,Min}SegmentTreeFp{32,64}: device() is the values' device."""

    def __init__(self, size, device):
        self.values = [0.0] * size
        built.append(self)

    @property
    def device(self):
        return "cuda:0"  # values_.device() of a tree allocated on "cuda" (current device 0)

    def __setitem__(self, index, value):
        self.values[int(index)] = float(value)

    def __getitem__(self, index):
        return self.values[int(index)]


for name in ("CudaSumSegmentTreeFp32", "CudaMinSegmentTreeFp32", "CudaSumSegmentTreeFp64",
             "CudaMinSegmentTreeFp64"):
    setattr(prioritized, name, CudaTreeStandIn)


class CudaStorage:  # what _tree_device_from_storage reads from a LazyTensorStorage(device="cuda")
    device = torch.device("cuda")


def rebuilds(spelling, storage=None):
    """Trees built by one sampler and three sample()/update_priority() entries; the value kept."""
    built.clear()
    sampler = PrioritizedSampler(8, alpha=1.0, beta=1.0, device=spelling)
    sampler._maybe_init_from_storage(storage)  # the first statement of sample()
    sampler._sum_tree[0] = 5.0  # a priority written by update_priority
    for _ in range(3):
        sampler._maybe_init_from_storage(storage)  # sample(), update_priority(), sample()
    return len(built), sampler._sum_tree[0]


print(f"torch.device('cuda') == torch.device('cuda:0'): "
      f"{torch.device('cuda') == torch.device('cuda:0')}")
cases = {'device="cuda"': rebuilds("cuda"), 'device="cuda:0"': rebuilds("cuda:0"),
         'no device, storage on "cuda"': rebuilds(None, CudaStorage())}
print("parameters: PrioritizedSampler(8, alpha=1, beta=1, device=...), a priority 5.0 written "
      "into the sum tree, then three calls of _maybe_init_from_storage (sample/update_priority)")
print("expected:   2 trees built (sum and min) and the priority 5.0 kept, for every spelling")
for case, (trees, kept) in cases.items():
    print(f"actual:     {case}: {trees} trees built, sum_tree[0] = {kept}")
if any(trees != 2 or kept != 5.0 for trees, kept in cases.values()):
    print("BUG: a CUDA device without an index rebuilds empty trees at every call")
    sys.exit(1)
print("ok: the trees survive whatever the spelling")
