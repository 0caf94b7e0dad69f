"""The reference sampler broken where §5's device-spelling spec
(``conformance/test_prioritized_replay_devices.py``) looks:

- ``SPELLING_RESETS_TREES``: at every ``sample()`` / ``update_priority()`` the sampler compares
  the device it was given with the device its trees are on, and rebuilds empty trees when the
  two are spelled differently: TorchRL 0.14.1's CUDA defect (``cuda`` against the trees'
  ``cuda:0``), made on the reference. On a CPU the same comparison tells ``cpu:0`` (as given)
  from ``cpu`` (where tensors are), which is how the self-test reaches it without a GPU.

``spelling_area`` builds the adapter so that a CPU device reaches the sampler as spelled: the
suite's adapter hands a device to the sampler only off the CPU (so that releases without the
keyword build as before), which a CUDA run needs and a CPU self-test cannot have.
"""

from __future__ import annotations

import torch

from conformance.implementations.torchrl_areas.prioritized_replay import (
    PrioritizedReplayArea,
    _Buffer,
)
from tests.mutants.source import mutated_module

MUTANTS = {
    "SPELLING_RESETS_TREES": (
        "        if self._device is not None or storage is None:\n            return\n",
        "        if self._device is not None and self._device != self.device:\n"
        "            self._init()\n"
        "            return\n"
        "        if self._device is not None or storage is None:\n            return\n"),
}


class _SpellingKept(PrioritizedReplayArea):
    """The adapter, with the device handed to the sampler as spelled, CPU included."""

    def buffer(self, *, capacity, alpha, beta, eps, upper_priority=None, row_width=1,
               device=None):
        kwargs = dict(max_capacity=capacity, alpha=alpha, beta=beta, eps=eps, device=device,
                      max_priority_within_buffer=True)
        return _Buffer(self, kwargs, capacity, row_width, torch.device(device.type))


def spelling_area(name: str) -> PrioritizedReplayArea:
    """The reference's sampler (``UNMUTATED``) or a mutant of it, behind ``_SpellingKept``."""
    old, new = MUTANTS.get(name, ("", ""))
    sampler = mutated_module("impls.prioritized_replay", old, new, tag=name)
    return _SpellingKept(sampler.PrioritizedSampler, default_is_raw=True,
                         cuda_problem=lambda: None)
