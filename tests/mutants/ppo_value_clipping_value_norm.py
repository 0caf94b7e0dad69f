"""Value normalisation done wrong, where §4's value-norm spec
(``conformance/test_ppo_value_clipping_value_norm.py``) looks: the reference's ``MAPPOLoss`` /
``IPPOLoss`` (TorchRL's normalisation hook on the reference's ``ClipPPOLoss``) with the hook
``_critic_loss_inputs`` replaced:

- ``RAW_SPACE``: no normalisation (the clip radius in the returns' units);
- ``OLD_VALUE_RAW``: the stored prediction left unnormalised (the clip compares two spaces);
- ``STATS_BEFORE_UPDATE``: normalised with the statistics from before this batch's targets are
  folded in (the update comes after);
- ``NORM_COUNTS_PADDING``: under a validity mask every target is folded in, the padding's
  included (TorchRL 0.14.1: the mask-aware hook ``_masked_critic_loss_inputs`` left to
  ``ClipPPOLoss``'s, which calls TorchRL's ``_critic_loss_inputs``).
"""

from __future__ import annotations

import impls
from conformance.implementations.torchrl_areas.ppo_value_clipping import (
    PPOLossFamilyCriticValueNorm,
    value_normalisers,
)
from conformance.interface import PPO_LOSS_CLASSES
from conformance.interface.ppo_value_clipping import VALUE_NORM_LOSS_CLASSES
from tests.mutants import implementation


def _raw(self, target, value, old):
    return target, value, old


def _old_raw(self, target, value, old):
    norm = self.value_norm
    norm.update(target)
    return norm.normalize(target.detach()), norm.normalize(value), old


def _stats_before_update(self, target, value, old):
    norm = self.value_norm
    out = (norm.normalize(target.detach()), norm.normalize(value), norm.normalize(old))
    norm.update(target)
    return out


def _unmasked(self, target, value, old, valid):
    return self._critic_loss_inputs(target, value, old)


def _reference(name: str, hook=None, method="_critic_loss_inputs"):
    family = {cls: getattr(impls, cls) for cls in PPO_LOSS_CLASSES}
    multiagent = {cls: getattr(impls, cls) for cls in VALUE_NORM_LOSS_CLASSES}
    if hook is not None:
        multiagent = {cls: type(cls, (base,), {method: hook})
                      for cls, base in multiagent.items()}
    return implementation(name.lower().replace("_", "-"), ppo_value_clipping=(
        PPOLossFamilyCriticValueNorm(impls.ClipPPOLoss, family, multiagent,
                                     value_normalisers())))


MUTANTS = ["RAW_SPACE", "OLD_VALUE_RAW", "STATS_BEFORE_UPDATE", "NORM_COUNTS_PADDING"]
RAW_SPACE = _reference("RAW_SPACE", _raw)
OLD_VALUE_RAW = _reference("OLD_VALUE_RAW", _old_raw)
STATS_BEFORE_UPDATE = _reference("STATS_BEFORE_UPDATE", _stats_before_update)
NORM_COUNTS_PADDING = _reference("NORM_COUNTS_PADDING", _unmasked, "_masked_critic_loss_inputs")
UNMUTATED = _reference("UNMUTATED")
