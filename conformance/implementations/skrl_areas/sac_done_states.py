"""skrl implements SAC (``skrl.agents.torch.sac.SAC``), so §3 applies, but no adapter exists yet:
the spec's networks (an actor returning loc/scale/noise, float64 Q-networks) have to be wrapped
as skrl ``Model``s first. Until then every §3 spec is "cannot be tested here" with this reason."""

from __future__ import annotations

from conformance.interface import Untestable


def make(adapter):
    raise Untestable(
        "skrl's SAC agent is not adapted yet: the spec's networks must be wrapped as skrl "
        "GaussianMixin / DeterministicMixin models (skrl/agents/torch/sac/sac.py, update())")
