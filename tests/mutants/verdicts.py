"""Implementations that the suite must refuse to call conformant: nothing testable, or an area
that cannot be tested here without being listed as such."""

from __future__ import annotations

from conformance.interface import Untestable
from tests.mutants.ppo_value_clipping import ClippedOnly


class _NothingLoads:
    name, version = "nothing-loads", "1"

    def __getattr__(self, area):
        if area.startswith("_"):
            raise AttributeError(area)
        raise Untestable("import broken_lib failed: SyntaxError: invalid syntax (__init__.py, line 1)")


class _ReplayUntestable:
    """PPO works; prioritized replay's extension does not load here."""

    name, version = "replay-untestable", "1"
    ppo_value_clipping = ClippedOnly()

    @property
    def prioritized_replay(self):
        raise Untestable("the C++ trees do not load next to this torch")


NOTHING_LOADS = _NothingLoads()
REPLAY_UNTESTABLE = _ReplayUntestable()
