"""PrioritizedSampler.load_state_dict takes the state of a sampler of another capacity without a
word. It assigns alpha, beta, eps, the maximum and deep copies of the state's two trees in turn and
never compares the trees' size with its own max_capacity (its file twin, loads, does compare and
raises). A state of 16 slots loaded into a sampler of 8 or 32 slots leaves that sampler with trees
of 16 leaves and the checkpoint's maximum as the default priority: a resumed run with another
buffer size goes on with trees that do not match its storage. load_state_dict should refuse it (a
ValueError naming both capacities) and leave the sampler as it was.
"""
import sys
import warnings

import torch
from torchrl.data import LazyTensorStorage, PrioritizedSampler, ReplayBuffer

warnings.filterwarnings("ignore")
ALPHA, BETA, EPS = 0.6, 0.4, 1e-3
SOURCE_CAPACITY = 16


def sampler_with(capacity, priorities):
    """A sampler of ``capacity`` slots in a buffer holding ``len(priorities)`` items."""
    sampler = PrioritizedSampler(capacity, alpha=ALPHA, beta=BETA, eps=EPS,
                                 max_priority_within_buffer=True)
    rb = ReplayBuffer(storage=LazyTensorStorage(capacity), sampler=sampler)
    rb.extend(torch.arange(len(priorities)))
    rb.update_priority(torch.arange(len(priorities)), torch.tensor(priorities))
    return sampler


def snapshot(sampler):
    """What a refused load must leave alone: leaves per tree, default priority, tree values."""
    capacity = sampler._max_capacity
    return (sampler._sum_tree.size, round(float(sampler.default_priority), 6),
            [round(float(sampler._sum_tree[i]), 6) for i in range(capacity)])


state = sampler_with(SOURCE_CAPACITY, [1.0, 2.0, 3.0, 5.0]).state_dict()
print(f"parameters: state_dict of a PrioritizedSampler({SOURCE_CAPACITY}, alpha={ALPHA}, "
      f"beta={BETA}, eps={EPS}) holding priorities [1, 2, 3, 5], loaded with load_state_dict into "
      "samplers of 8 and 32 slots holding 4 items of priority 40")
print(f"expected:   an error naming both capacities ({SOURCE_CAPACITY} and 8 / 32); the sampler "
      "keeps its own trees (8 / 32 leaves) and its default priority 40")
bugs = []
for capacity in (8, 32):
    sampler = sampler_with(capacity, [40.0] * 4)
    before = snapshot(sampler)
    try:
        sampler.load_state_dict(state)
    except (ValueError, RuntimeError) as exc:  # what a fixed release raises
        refusal = f"{type(exc).__name__}: {exc}"
    else:
        refusal = None
    after = snapshot(sampler)
    if refusal is None:
        print(f"actual:     capacity {capacity}: accepted (no error); the sampler now has trees "
              f"of {after[0]} leaves for {capacity} slots, default priority {before[1]:g} -> "
              f"{after[1]:g}")
        bugs.append(f"capacity {capacity}: accepted")
        continue
    named = str(SOURCE_CAPACITY) in refusal and str(capacity) in refusal
    print(f"actual:     capacity {capacity}: refused ({refusal}); the sampler "
          f"{'is unchanged' if after == before else f'changed: {before[:2]} -> {after[:2]}'}")
    if not named:
        bugs.append(f"capacity {capacity}: the error does not name both capacities")
    if after != before:
        bugs.append(f"capacity {capacity}: the refused state changed the sampler")
if bugs:
    print(f"BUG: load_state_dict does not refuse a state of another capacity ({'; '.join(bugs)})")
    sys.exit(1)
print("ok: a state of another capacity is refused and the sampler is left as it was")
