"""The reference's drop-in buffer classes (``impls/prioritized_buffers.py``) broken one line at
a time, seen through ``example_buffer`` (``conformance/test_prioritized_replay_buffer_classes.py``):

- ``SAMPLER_NOT_SWAPPED``: ``TensorDictPrioritizedReplayBuffer`` keeps the sampler TorchRL's
  constructor built (the reference's options never reach a sampler);
- ``UPPER_NOT_PASSED``: ``PrioritizedReplayBuffer`` drops ``upper_priority``;
- ``ALPHA_BETA_SWAPPED``: ``TensorDictPrioritizedReplayBuffer`` hands alpha as beta and beta
  as alpha to its sampler;
- ``WITHIN_BUFFER_BY_DEFAULT``: ``PrioritizedReplayBuffer`` tracks the maximum within the
  buffer unless told otherwise (TorchRL's default is the largest priority ever given);
- ``EPS_DEFAULT_WRONG``: ``TensorDictPrioritizedReplayBuffer``'s default eps is 1e-3, not
  TorchRL's 1e-8.
"""

from __future__ import annotations

from tests.mutants import implementation
from tests.mutants.source import mutated_module

MUTANTS = {
    "SAMPLER_NOT_SWAPPED": ("        buffer._sampler = sampler\n", "        pass\n"),
    "UPPER_NOT_PASSED": ("                                         upper_priority=upper_priority)",
                         "                                         upper_priority=None)"),
    "ALPHA_BETA_SWAPPED": ("self._storage.max_size, alpha, beta, eps,",
                           "self._storage.max_size, beta, alpha, eps,"),
    "WITHIN_BUFFER_BY_DEFAULT": (
        "PrioritizedSampler(capacity, alpha, beta, eps, dtype, device=sampler_device,",
        ("PrioritizedSampler(capacity, alpha, beta, eps, dtype, "
         "max_priority_within_buffer=True, device=sampler_device,")),
    "EPS_DEFAULT_WRONG": ("    def __init__(self, *, alpha: float, beta: float, eps: float = 1e-8,\n"
                          "                 reduction",
                          "    def __init__(self, *, alpha: float, beta: float, eps: float = 1e-3,\n"
                          "                 reduction"),
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
WITHIN_BUFFER_BY_DEFAULT = with_classes("WITHIN_BUFFER_BY_DEFAULT",
                                        *MUTANTS["WITHIN_BUFFER_BY_DEFAULT"])
EPS_DEFAULT_WRONG = with_classes("EPS_DEFAULT_WRONG", *MUTANTS["EPS_DEFAULT_WRONG"])
UNMUTATED = with_classes("UNMUTATED")
