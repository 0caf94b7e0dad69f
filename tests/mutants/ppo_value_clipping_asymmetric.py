"""Clip ranges handled wrong, where §4's clip-range spec
(``conformance/test_ppo_value_clipping_asymmetric.py``) looks: the reference's ``ClipPPOLoss``
behind an adapter that turns the asymmetric range ``(low, high)`` into a symmetric one,

- ``SYMMETRIC_LOW``: ``low`` on both sides of the ratio (the upper bound is lost);
- ``SYMMETRIC_HIGH``: ``high`` on both sides (the lower bound is lost).
"""

from __future__ import annotations

import impls
from conformance.implementations.torchrl_areas.ppo_value_clipping import PPOLossFamilyCritic
from conformance.interface import PPO_LOSS_CLASSES
from tests.mutants import implementation


class _OneBound(PPOLossFamilyCritic):
    side = 0

    def objective_with(self, *, clip_epsilon, **kwargs):
        if isinstance(clip_epsilon, tuple):
            clip_epsilon = clip_epsilon[self.side]
        return super().objective_with(clip_epsilon=clip_epsilon, **kwargs)


class _HighBound(_OneBound):
    side = 1


def _reference(name: str, area_cls):
    family = {cls: getattr(impls, cls) for cls in PPO_LOSS_CLASSES}
    return implementation(name.lower().replace("_", "-"),
                          ppo_value_clipping=area_cls(impls.ClipPPOLoss, family))


MUTANTS = ["SYMMETRIC_LOW", "SYMMETRIC_HIGH"]
SYMMETRIC_LOW = _reference("SYMMETRIC_LOW", _OneBound)
SYMMETRIC_HIGH = _reference("SYMMETRIC_HIGH", _HighBound)
UNMUTATED = _reference("UNMUTATED", PPOLossFamilyCritic)
