"""skrl's ``MultiCategoricalMixin`` sums the log-probs of several categorical heads, a partial
counterpart of §2, but the spec's composite actor (a nested ``action -> {head}`` spec with a
name map, Normal heads, PPO on the stored log-probs) has no skrl adapter yet: every §2 spec is
"cannot be tested here" with this reason, never passed and never "not applicable"."""

from __future__ import annotations

from conformance.interface import Untestable


def make(adapter):
    raise Untestable(
        "skrl's MultiCategoricalMixin is not adapted yet (skrl/models/torch/multicategorical.py)")
