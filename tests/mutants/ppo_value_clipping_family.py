"""The §4 family done wrong, on TorchRL 0.14.1's own loss classes patched one way each, seen
through the TorchRL adapter (``conformance/test_ppo_value_clipping_family.py``)."""

from __future__ import annotations

import torchrl.objectives as upstream

from conformance.implementations.torchrl_areas.ppo_value_clipping import PPOLossFamilyCritic
from conformance.interface import PPO_LOSS_CLASSES
from tests.mutants import implementation


def _unschedulable(cls):
    """Before pytorch/rl#3612: no loss buffer is assignable from a Python float, so
    ``loss.clip_value = 0.1`` falls through to ``nn.Module`` and raises TypeError."""
    patched = type(f"Unschedulable{cls.__name__}", (cls,), {})
    patched._all_schedulable_buffers = frozenset()  # what the metaclass merged, emptied
    return patched


def _clip_value_dropped(cls):
    """Not historical: a loss class that accepts ``clip_value`` and never passes it to the
    shared critic helper (the seed specs, ``ClipPPOLoss`` only, cannot see it)."""

    def __init__(self, *args, clip_value=None, **kwargs):
        cls.__init__(self, *args, **kwargs)

    return type(f"ClipValueDropped{cls.__name__}", (cls,), {"__init__": __init__})


class _PicksHigh(upstream.ClipPPOLoss):
    """Not historical: ``clip_value=True`` with a tuple ``clip_epsilon`` silently takes the
    upper end instead of being refused (0.14.1 raises ValueError)."""

    def __init__(self, *args, clip_epsilon=0.2, clip_value=None, **kwargs):
        if clip_value is True and isinstance(clip_epsilon, tuple):
            clip_value = float(clip_epsilon[1])
        super().__init__(*args, clip_epsilon=clip_epsilon, clip_value=clip_value, **kwargs)


def _impl(name, patch=lambda cls: cls, clip=None):
    family = {n: patch(getattr(upstream, n)) for n in PPO_LOSS_CLASSES}
    if clip is not None:
        family["ClipPPOLoss"] = clip
    elif patch is _clip_value_dropped:
        family["ClipPPOLoss"] = upstream.ClipPPOLoss
    return implementation(name, ppo_value_clipping=PPOLossFamilyCritic(family["ClipPPOLoss"],
                                                                       family))


CLIP_VALUE_NOT_SCHEDULABLE = _impl("clip-value-not-schedulable", _unschedulable)
CLIP_VALUE_DROPPED = _impl("clip-value-dropped", _clip_value_dropped)
TUPLE_EPSILON_PICKS_HIGH = _impl("tuple-epsilon-picks-high", clip=_PicksHigh)
