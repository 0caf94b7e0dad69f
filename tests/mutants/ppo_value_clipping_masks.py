"""The reference ClipPPOLoss broken where §4's mask specs
(``conformance/test_ppo_value_clipping_masks.py``) look:

- ``CLIP_FRACTION_COUNTS_PADDING`` (one line of ``impls/ppo_value_clipping.py``): the value clip
  fraction is the mean over every position, padding included, as TorchRL 0.14.1 counts it;
- ``CLIP_FRACTION_OVER_THE_BATCH``: the valid clipped positions divided by the batch size;
- ``COUNT_CLAMPED_AT_TWO``: the valid count floored at 2, not 1 (one valid step: half its fraction);
- ``MASKS_ORED``: two masks (``("collector", "mask")`` and ``"shifted_valid"``) combined with
  ``|``; ``LAST_MASK_ONLY``: the last mask found replaces the others;
- ``MASK_DTYPE_KEPT``: the fraction reads a mask of another dtype as given (a float32 mask
  fails in ``&``, naming nothing); ``REDUCTION_TAKES_THE_MASK_AS_GIVEN``: the loss's reductions
  get a mask of another dtype as given (TorchRL 0.14.1: ``torch.where`` refuses int64 and
  float32 masks, naming nothing);
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
    "COUNT_CLAMPED_AT_TWO": (FRACTION, FRACTION.replace("clamp_min(1)", "clamp_min(2)")),
    "MASKS_ORED": ("mask = found if mask is None else mask & found",
                   "mask = found if mask is None else mask | found"),
    "LAST_MASK_ONLY": ("mask = found if mask is None else mask & found", "mask = found"),
    "MASK_DTYPE_KEPT": ("found.to(torch.bool)", "found"),
    "REDUCTION_TAKES_THE_MASK_AS_GIVEN": ("numeric[key] = found != 0", "numeric[key] = found"),
}


class _MaskDropped(PPOLossFamilyCritic):
    def critic_loss_masked(self, *, valid, shifted_valid=None, **kwargs):
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
COUNT_CLAMPED_AT_TWO = _reference("COUNT_CLAMPED_AT_TWO", *EDITS["COUNT_CLAMPED_AT_TWO"])
MASKS_ORED = _reference("MASKS_ORED", *EDITS["MASKS_ORED"])
LAST_MASK_ONLY = _reference("LAST_MASK_ONLY", *EDITS["LAST_MASK_ONLY"])
MASK_DTYPE_KEPT = _reference("MASK_DTYPE_KEPT", *EDITS["MASK_DTYPE_KEPT"])
REDUCTION_TAKES_THE_MASK_AS_GIVEN = _reference("REDUCTION_TAKES_THE_MASK_AS_GIVEN",
                                               *EDITS["REDUCTION_TAKES_THE_MASK_AS_GIVEN"])
MASK_DROPPED = _reference("MASK_DROPPED", area_cls=_MaskDropped)
UNMUTATED = _reference("UNMUTATED")
