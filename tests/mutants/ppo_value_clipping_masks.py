"""The reference ClipPPOLoss broken where §4's mask specs
(``conformance/test_ppo_value_clipping_masks.py``) look:

- ``CLIP_FRACTION_COUNTS_PADDING`` (one line of ``impls/ppo_value_clipping.py``): the value clip
  fraction is the mean over every position, padding included, as TorchRL 0.14.1 counts it;
- ``CLIP_FRACTION_OVER_THE_BATCH``: the valid clipped positions divided by the batch size;
- ``MASK_DROPPED``: an adapter that does not hand the mask over (every position valid), as a
  release before pytorch/rl#4057 reads none: the loss and the fraction average the padding in.
"""

from __future__ import annotations

import torch

from conformance.implementations.torchrl_areas.ppo_value_clipping import PPOLossFamilyCritic
from conformance.interface import PPO_LOSS_CLASSES
from tests.mutants import implementation
from tests.mutants.source import mutated_module

FRACTION = "(outside & valid).sum().to(value.dtype) / valid.sum().clamp_min(1)"
EDITS = {
    "CLIP_FRACTION_COUNTS_PADDING": (FRACTION, "outside.to(value.dtype).mean()"),
    "CLIP_FRACTION_OVER_THE_BATCH": (FRACTION,
                                     "(outside & valid).sum().to(value.dtype) / valid.numel()"),
}


class _MaskDropped(PPOLossFamilyCritic):
    def critic_loss_masked(self, *, valid, **kwargs):
        return super().critic_loss_masked(valid=torch.ones_like(valid), **kwargs)


def _reference(name: str, old: str = "", new: str = "", area_cls=PPOLossFamilyCritic):
    module = mutated_module("impls.ppo_value_clipping", old, new, tag=name)
    family = {cls: getattr(module, cls) for cls in PPO_LOSS_CLASSES}
    return implementation(name.lower().replace("_", "-"),
                          ppo_value_clipping=area_cls(module.ClipPPOLoss, family))


MUTANTS = [*EDITS, "MASK_DROPPED"]
CLIP_FRACTION_COUNTS_PADDING = _reference("CLIP_FRACTION_COUNTS_PADDING",
                                          *EDITS["CLIP_FRACTION_COUNTS_PADDING"])
CLIP_FRACTION_OVER_THE_BATCH = _reference("CLIP_FRACTION_OVER_THE_BATCH",
                                          *EDITS["CLIP_FRACTION_OVER_THE_BATCH"])
MASK_DROPPED = _reference("MASK_DROPPED", area_cls=_MaskDropped)
UNMUTATED = _reference("UNMUTATED")
