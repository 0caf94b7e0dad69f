"""PrioritizedSampler.loads of a checkpoint folder that lacks sumtree.memmap (a partial copy, an
interrupted upload) raises nothing. loads opens each tree file with
MemoryMappedTensor.from_filename, which maps it through torch.from_file(shared=True): a missing file
is created, filled with zeros, in the checkpoint folder. The sampler's sum tree is then all zeros
while its maximum and min tree come from the checkpoint, and the next sample fails far from the
cause ("non-positive p_sum"). loads should check that its files exist before it changes anything
and raise FileNotFoundError naming sumtree.memmap, leaving the sampler and the folder as they were.
"""
import sys
import tempfile
import warnings
from pathlib import Path

import torch
from torchrl.data import LazyTensorStorage, PrioritizedSampler, ReplayBuffer

warnings.filterwarnings("ignore")
ALPHA, BETA, EPS, CAPACITY = 0.6, 0.4, 1e-3, 16


def buffer_with(priorities):
    sampler = PrioritizedSampler(CAPACITY, alpha=ALPHA, beta=BETA, eps=EPS,
                                 max_priority_within_buffer=True)
    rb = ReplayBuffer(storage=LazyTensorStorage(CAPACITY), sampler=sampler, batch_size=4)
    rb.extend(torch.arange(len(priorities)))
    rb.update_priority(torch.arange(len(priorities)), torch.tensor(priorities))
    return rb


def snapshot(sampler):
    return (round(float(sampler.default_priority), 6),
            [round(float(sampler._sum_tree[i]), 6) for i in range(CAPACITY)])


def main(folder):
    torch.manual_seed(0)
    buffer_with([1.0, 2.0, 3.0, 5.0]).sampler.dumps(folder)
    (folder / "sumtree.memmap").unlink()
    rb = buffer_with([40.0] * 4)
    before = snapshot(rb.sampler)
    print(f"parameters: PrioritizedSampler({CAPACITY}, alpha={ALPHA}, beta={BETA}, eps={EPS})"
          ".dumps of priorities [1, 2, 3, 5]; sumtree.memmap deleted from the folder; loads into "
          "a sampler holding 4 items of priority 40")
    print("expected:   FileNotFoundError naming sumtree.memmap; the sampler keeps default "
          "priority 40 and its tree values; no file is created in the folder")
    try:
        rb.sampler.loads(folder)
    except (OSError, ValueError) as exc:  # what a fixed release raises
        after = snapshot(rb.sampler)
        created = (folder / "sumtree.memmap").exists()
        print(f"actual:     {type(exc).__name__}: {exc}; sampler "
              f"{'unchanged' if after == before else 'changed'}; sumtree.memmap "
              f"{'created' if created else 'not created'}")
        if "sumtree.memmap" not in str(exc) or after != before or created:
            print("BUG: the missing tree file is refused, but not cleanly")
            return 1
        print("ok: a folder without sumtree.memmap is refused and nothing changes")
        return 0
    after = snapshot(rb.sampler)
    tree_file = folder / "sumtree.memmap"
    size = tree_file.stat().st_size if tree_file.exists() else None
    print(f"actual:     no error; sumtree.memmap re-created in the folder ({size} bytes); sum of "
          f"the sampler's tree values {sum(before[1]):g} -> {sum(after[1]):g}; default priority "
          f"{before[0]:g} -> {after[0]:g}")
    try:
        rb.sample()
        print("            then rb.sample() works")
    except RuntimeError as exc:  # what the zeroed sum tree gives on 0.14.1
        print(f"            then rb.sample() raises RuntimeError: {exc}")
    print("BUG: loads accepts a folder without sumtree.memmap (the sum tree is loaded as zeros)")
    return 1


with tempfile.TemporaryDirectory() as tmp:
    code = main(Path(tmp) / "sampler")
sys.exit(code)
