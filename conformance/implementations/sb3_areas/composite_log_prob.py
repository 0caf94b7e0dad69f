"""SB3's ``MultiCategoricalDistribution`` sums the log-probs of several categorical heads, a
partial counterpart of §2, but the spec's composite actor (a nested ``action -> {head}`` spec
with a name map, Normal heads, PPO on the stored log-probs) has no SB3 adapter yet: every §2
spec is "cannot be tested here" with this reason, never passed and never "not applicable"."""

from __future__ import annotations

from conformance.interface import Untestable


def make(adapter):
    raise Untestable(
        "SB3's MultiCategoricalDistribution is not adapted yet "
        "(stable_baselines3/common/distributions.py)")
