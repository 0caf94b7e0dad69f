"""Tianshou implements PPO value clipping (``value_clip=True`` clips with ``eps_clip``, the
policy's threshold, and takes Baselines' max), so §4 applies, but no adapter exists yet: one
update has to be driven through ``PPO._update_with_batch`` with returns computed by its GAE
preprocessing. Until then every §4 spec is "cannot be tested here" with this reason."""

from __future__ import annotations

from conformance.interface import Untestable


def make(adapter):
    raise Untestable(
        "Tianshou's PPO is not adapted yet (tianshou/algorithm/modelfree/ppo.py, value_clip)")
