"""The reference sampler broken where §5's device-spelling spec
(``conformance/test_prioritized_replay_devices.py``) looks, plugged in with
``--impl tests.mutants.prioritized_replay_devices:<NAME>``:

- ``SPELLING_RESETS_TREES``: at every ``sample()`` / ``update_priority()`` the sampler compares
  the device it was given with the device its trees are on, and rebuilds empty trees when the
  two are spelled differently: TorchRL 0.14.1's CUDA defect (``cuda`` against the trees'
  ``cuda:0``), made on the reference. On a CPU the same comparison tells ``cpu:0`` (as given)
  from ``cpu`` (where tensors are), so the spec's ``device=indexed`` case catches it without a
  GPU.
"""

from __future__ import annotations

from conformance.implementations.torchrl_areas.prioritized_replay import PrioritizedReplayArea
from tests.mutants import implementation
from tests.mutants.source import mutated_module

MUTANTS = {
    "SPELLING_RESETS_TREES": (
        "        if self._device is not None or storage is None:\n            return\n",
        "        if self._device is not None and self._device != self.device:\n"
        "            self._init()\n"
        "            return\n"
        "        if self._device is not None or storage is None:\n            return\n"),
}


def spelling_area(name: str) -> PrioritizedReplayArea:
    """The reference's sampler (``UNMUTATED``) or a mutant of it, behind the suite's adapter."""
    old, new = MUTANTS.get(name, ("", ""))
    sampler = mutated_module("impls.prioritized_replay", old, new, tag=name)
    return PrioritizedReplayArea(sampler.PrioritizedSampler, default_is_raw=True,
                                 cuda_problem=lambda: None)


SPELLING_RESETS_TREES = implementation("spelling-resets-trees",
                                       prioritized_replay=spelling_area("SPELLING_RESETS_TREES"))
UNMUTATED = implementation("unmutated", prioritized_replay=spelling_area("UNMUTATED"))
