"""The reference sampler broken one line at a time on the edge inputs of §5 (what a mutation
tool left alive while no spec gave them):

- ``FIRST_OF_REPEATS``: a slot named twice in one ``update_priority`` keeps its first priority;
- ``SCALAR_PRIORITY_NOT_BROADCAST``: one number for several indices is not broadcast to them;
- ``BETA_ZERO_REFUSED``: ``beta = 0`` is refused at construction;
- ``LOAD_KEEPS_OWN_ALPHA``: ``load_state_dict`` keeps the loading buffer's alpha;
- ``REFUSAL_NAMES_NOTHING``: a negative beta is refused with an error that says nothing;
- ``HISTORICAL_IS_LAST_GIVEN``: without in-buffer tracking, the default is the last priority
  given instead of the largest ever given;
- ``ZERO_MASS_SAMPLED``: a buffer whose every q is 0 (eps = 0) samples instead of refusing.
"""

from __future__ import annotations

from tests.mutants import implementation
from tests.mutants.source import mutated_module

MUTANTS = {
    "FIRST_OF_REPEATS": ('position, "amax", include_self=False)',
                         'position, "amin", include_self=False)'),
    "SCALAR_PRIORITY_NOT_BROADCAST": ("            priority = priority.reshape(())\n",
                                      "            pass\n"),
    "BETA_ZERO_REFUSED": ("        if beta < 0:\n", "        if beta <= 0:\n"),
    "LOAD_KEEPS_OWN_ALPHA": ('        self._alpha = float(state_dict["_alpha"])\n', ""),
    "REFUSAL_NAMES_NOTHING": ('raise ValueError(f"beta must be greater or equal to 0, got beta={beta}")',
                              "raise ValueError(None)"),
    "HISTORICAL_IS_LAST_GIVEN": (
        "self._historical = torch.maximum(self._historical, raw_max)",
        "self._historical = raw_max.double()"),
    "ZERO_MASS_SAMPLED": ("            if not total > 0:\n", "            if not total >= 0:\n"),
}


def reference_with_sampler(name: str, old: str, new: str):
    from conformance.implementations.torchrl_areas.prioritized_replay import (
        PrioritizedReplayArea,
    )

    sampler = mutated_module("impls.prioritized_replay", old, new, tag=name)
    area = PrioritizedReplayArea(sampler.PrioritizedSampler, default_is_raw=True,
                                 cuda_problem=lambda: None)
    return implementation(name.lower().replace("_", "-"), prioritized_replay=area)


FIRST_OF_REPEATS = reference_with_sampler("FIRST_OF_REPEATS", *MUTANTS["FIRST_OF_REPEATS"])
SCALAR_PRIORITY_NOT_BROADCAST = reference_with_sampler(
    "SCALAR_PRIORITY_NOT_BROADCAST", *MUTANTS["SCALAR_PRIORITY_NOT_BROADCAST"])
BETA_ZERO_REFUSED = reference_with_sampler("BETA_ZERO_REFUSED", *MUTANTS["BETA_ZERO_REFUSED"])
LOAD_KEEPS_OWN_ALPHA = reference_with_sampler("LOAD_KEEPS_OWN_ALPHA",
                                              *MUTANTS["LOAD_KEEPS_OWN_ALPHA"])
REFUSAL_NAMES_NOTHING = reference_with_sampler("REFUSAL_NAMES_NOTHING",
                                               *MUTANTS["REFUSAL_NAMES_NOTHING"])
HISTORICAL_IS_LAST_GIVEN = reference_with_sampler("HISTORICAL_IS_LAST_GIVEN",
                                                  *MUTANTS["HISTORICAL_IS_LAST_GIVEN"])
ZERO_MASS_SAMPLED = reference_with_sampler("ZERO_MASS_SAMPLED", *MUTANTS["ZERO_MASS_SAMPLED"])
UNMUTATED = reference_with_sampler("UNMUTATED", "", "")
