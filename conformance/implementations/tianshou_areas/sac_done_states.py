"""Tianshou implements SAC (``tianshou.algorithm.modelfree.sac.SAC``), so §3 applies, but no
adapter exists yet: the spec's networks have to be wrapped as Tianshou actor / critic modules
and one update driven through its ``Algorithm`` training step. Until then every §3 spec is
"cannot be tested here" with this reason, never passed and never "not applicable"."""

from __future__ import annotations

from conformance.interface import Untestable


def make(adapter):
    raise Untestable(
        "Tianshou's SAC is not adapted yet (tianshou/algorithm/modelfree/sac.py; the research "
        "note predicts masking with ~terminated)")
