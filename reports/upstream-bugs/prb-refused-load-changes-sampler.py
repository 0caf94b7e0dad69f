"""PrioritizedSampler: a checkpoint that loads / load_state_dict refuse still changes the sampler.
loads sets alpha, beta and eps from the folder's metadata and copies its maximum into the
sampler's own maximum tensors (in place) before it compares the capacities and raises; a state
without _sum_tree makes load_state_dict raise KeyError only after it has assigned alpha, beta,
eps and the maximum. The caller catches the error and goes on with a sampler whose parameters
and default priority are the refused checkpoint's, while its trees still hold the old values.
Both should check the checkpoint first and leave the sampler as it was when they refuse it.
"""
import sys
import tempfile
import warnings
from pathlib import Path

import torch
from torchrl.data import LazyTensorStorage, PrioritizedSampler, ReplayBuffer

warnings.filterwarnings("ignore")
TARGET = dict(alpha=0.6, beta=0.4, eps=1e-3)  # the sampler that refuses the checkpoint
CHECKPOINT = dict(alpha=0.9, beta=1.0, eps=0.1)  # the checkpoint's own parameters


def sampler_with(capacity, priorities, params):
    sampler = PrioritizedSampler(capacity, max_priority_within_buffer=True, **params)
    rb = ReplayBuffer(storage=LazyTensorStorage(capacity), sampler=sampler)
    rb.extend(torch.arange(len(priorities)))
    rb.update_priority(torch.arange(len(priorities)), torch.tensor(priorities))
    return sampler


def snapshot(sampler):
    """alpha, beta, eps, default priority and the tree values: all a refused load must keep."""
    return {"alpha": sampler.alpha, "beta": sampler.beta, "eps": sampler._eps,
            "default priority": round(float(sampler.default_priority), 6),
            "tree": [round(float(sampler._sum_tree[i]), 6) for i in range(sampler._max_capacity)]}


def kwargs(params):
    return ", ".join(f"{k}={v}" for k, v in params.items())


def changes(before, after):
    return ", ".join(f"{k} {before[k]} -> {after[k]}" for k in before
                     if k != "tree" and before[k] != after[k]) + (
        ", tree values" if before["tree"] != after["tree"] else "")


def main(folder):
    source = sampler_with(16, [1.0, 2.0, 3.0, 5.0], CHECKPOINT)
    source.dumps(folder)
    state = {k: v for k, v in source.state_dict().items() if k not in ("_sum_tree", "_min_tree")}

    # (a) loads: a folder of 16 slots into a sampler of 8 (refused: the capacities differ)
    # (b) load_state_dict: a state without _sum_tree / _min_tree, same capacity (refused: no trees)
    cases = [("loads(folder of 16 slots) into 8 slots", 8, lambda s: s.loads(folder),
              (RuntimeError, ValueError)),
             ("load_state_dict(state without trees) into 16 slots", 16,
              lambda s: s.load_state_dict(state), (KeyError, ValueError))]
    print(f"parameters: checkpoint: PrioritizedSampler(16, {kwargs(CHECKPOINT)}) holding "
          "priorities [1, 2, 3, 5]; sampler loading it: PrioritizedSampler(8 or 16, "
          f"{kwargs(TARGET)}, max_priority_within_buffer=True) holding 4 items of priority 40")
    print(f"expected:   both loads refused with an error; the sampler keeps alpha "
          f"{TARGET['alpha']}, beta {TARGET['beta']}, eps {TARGET['eps']}, default priority 40 "
          "and its tree values")
    bugs = []
    for what, capacity, load, refusals in cases:
        sampler = sampler_with(capacity, [40.0] * 4, TARGET)
        before = snapshot(sampler)
        try:
            load(sampler)
        except refusals as exc:  # the refusal (today's or a fixed release's)
            refusal = f"{type(exc).__name__}: {exc}"
        else:
            refusal = None
        after = snapshot(sampler)
        if refusal is None:
            print(f"actual:     {what}: accepted (no error)")
            bugs.append(f"{what} was accepted")
        elif after != before:
            print(f"actual:     {what}: refused ({refusal[:70]}), yet {changes(before, after)}")
            bugs.append(f"{what} changed the sampler")
        else:
            print(f"actual:     {what}: refused ({refusal[:70]}); the sampler is unchanged")
    if bugs:
        print(f"BUG: a refused checkpoint changes the sampler ({'; '.join(bugs)})")
        return 1
    print("ok: a refused checkpoint leaves the sampler as it was")
    return 0


with tempfile.TemporaryDirectory() as tmp:
    code = main(Path(tmp) / "sampler")
sys.exit(code)
