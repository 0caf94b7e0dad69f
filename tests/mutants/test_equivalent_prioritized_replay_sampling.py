"""Probes of the equivalent mutants of the reference sampler's construction and sampling
(``classified/prioritized_replay_sampling.json``): each applies mutmut's very edit to
``impls/prioritized_replay.py`` and shows that nothing a user observes changes on seeded inputs.

- ``third-channel-always``: the tree keeps the in-buffer maximum's channel (``-p``) also without
  ``max_priority_within_buffer``; nothing reads it then (the default is the historical maximum),
  so it costs a gather per level and changes no draw, weight, default or checkpoint.
- ``float32-masses``: a buffer generator's float32 draws are scaled by the total in float32
  instead of float64 (TorchRL's own arithmetic, ``torch.rand(n, generator) * p_sum``): a mass
  moves by float32 rounding only, and picks another item only within that rounding of a
  boundary between two items; on these seeded inputs no draw changes.
"""

import numpy as np
import pytest
import torch
from torchrl.data import LazyTensorStorage

from tests.mutants.source import mutated_module

_OPS = 'ops = ("sum", "min", "min") if self._max_priority_within_buffer else ("sum", "min")'
_MASS = "torch.rand(batch_size, device=device, generator=rng).to(torch.float64).mul_(total)"
EDITS = {
    "third-channel-always": (_OPS, _OPS.replace("if self._max_priority_within_buffer",
                                                "if (self._max_priority_within_buffer) or True")),
    "float32-masses": (_MASS, _MASS.replace(".to(torch.float64)", ".to(None)")),
}
CAPACITIES = [16, 3000]


def _observe(module, capacity: int, within: bool) -> list:
    """Defaults, tree values, checkpoint and seeded draws (a torch generator and numpy's global
    stream) of a sampler driven through writes, updates, a lowered maximum and a wrap."""
    rng = np.random.default_rng(capacity)
    sampler = module.PrioritizedSampler(capacity, 0.6, 0.4, 1e-3,
                                        max_priority_within_buffer=within)
    storage = LazyTensorStorage(capacity)
    storage.set(torch.arange(capacity), torch.arange(capacity))
    out = [float(sampler.default_priority)]
    sampler.mark_update(torch.arange(capacity - 3), storage=storage)
    priority = torch.as_tensor(rng.integers(1, 640, capacity - 3) / 64.0, dtype=torch.float32)
    sampler.update_priority(torch.arange(capacity - 3), priority)
    sampler.update_priority(torch.tensor([int(priority.argmax())]), torch.tensor([0.125]))
    sampler.mark_update(torch.arange(capacity - 3, capacity + 2) % capacity, storage=storage)
    out += [float(sampler.default_priority), sampler._sum_tree[torch.arange(capacity)].tolist()]
    state = sampler.state_dict()
    out += [state["_max_priority"], state["_raw_priority"].tolist(), state["_q"].tolist()]
    for seed in (1, 2):
        sampler._rng = torch.Generator().manual_seed(seed)
        index, info = sampler.sample(storage, 4096)
        out += [index.tolist(), info["priority_weight"].tolist()]
    sampler._rng = None
    np.random.seed(3)
    index, info = sampler.sample(storage, 4096)
    return out + [index.tolist(), info["priority_weight"].tolist()]


@pytest.mark.parametrize("edit", list(EDITS))
def test_sampler_edit_is_not_observable(edit):
    original = mutated_module("impls.prioritized_replay", tag="probe_sampling_reference")
    mutant = mutated_module("impls.prioritized_replay", *EDITS[edit],
                            tag=f"probe_sampling_{edit.replace('-', '_')}")
    for capacity in CAPACITIES:
        for within in (False, True):
            want, got = _observe(original, capacity, within), _observe(mutant, capacity, within)
            for k, (w, g) in enumerate(zip(want, got, strict=True)):
                assert g == w, f"{edit}: capacity {capacity}, within={within}: item {k} differs"


def test_the_probe_sees_a_real_difference():
    """The probe is not blind: an edit that does change the draws (masses from torch's global
    generator instead of the buffer's) fails it."""
    changed = mutated_module("impls.prioritized_replay", _MASS,
                             _MASS.replace("generator=rng", "generator=None"),
                             tag="probe_sampling_not_equivalent")
    original = mutated_module("impls.prioritized_replay", tag="probe_sampling_reference")
    assert _observe(changed, 16, False) != _observe(original, 16, False)
