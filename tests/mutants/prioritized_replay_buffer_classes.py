"""The reference's drop-in buffer classes (``impls/prioritized_buffers.py``) broken one line at
a time, seen through ``example_buffer`` (``conformance/test_prioritized_replay_buffer_classes.py``):

- ``SAMPLER_NOT_SWAPPED``: ``TensorDictPrioritizedReplayBuffer`` keeps the sampler TorchRL's
  constructor built (the reference's options never reach a sampler);
- ``UPPER_NOT_PASSED``: ``PrioritizedReplayBuffer`` drops ``upper_priority``;
- ``ALPHA_BETA_SWAPPED``: ``TensorDictPrioritizedReplayBuffer`` hands alpha as beta and beta
  as alpha to its sampler.
"""

from __future__ import annotations

from tests.mutants import implementation
from tests.mutants.source import mutated_module

MUTANTS = {
    "SAMPLER_NOT_SWAPPED": ("        buffer._sampler = sampler\n", "        pass\n"),
    "UPPER_NOT_PASSED": ("                upper_priority=upper_priority, initial_priority=initial_priority)",
                         "                upper_priority=None, initial_priority=initial_priority)"),
    "ALPHA_BETA_SWAPPED": ("self._storage.max_size, alpha, beta, eps,",
                           "self._storage.max_size, beta, alpha, eps,"),
}


def with_classes(name: str, old: str = "", new: str = ""):
    from conformance.implementations.torchrl_areas.prioritized_replay import (
        PrioritizedReplayArea,
    )
    from impls import PrioritizedSampler

    module = mutated_module("impls.prioritized_buffers", old, new, tag=name)
    area = PrioritizedReplayArea(PrioritizedSampler, default_is_raw=True,
                                 cuda_problem=lambda: None)
    area.example_classes = {n: getattr(module, n) for n in
                            ("PrioritizedReplayBuffer", "TensorDictPrioritizedReplayBuffer")}
    return implementation(name.lower().replace("_", "-"), prioritized_replay=area)


SAMPLER_NOT_SWAPPED = with_classes("SAMPLER_NOT_SWAPPED", *MUTANTS["SAMPLER_NOT_SWAPPED"])
UPPER_NOT_PASSED = with_classes("UPPER_NOT_PASSED", *MUTANTS["UPPER_NOT_PASSED"])
ALPHA_BETA_SWAPPED = with_classes("ALPHA_BETA_SWAPPED", *MUTANTS["ALPHA_BETA_SWAPPED"])
UNMUTATED = with_classes("UNMUTATED")
