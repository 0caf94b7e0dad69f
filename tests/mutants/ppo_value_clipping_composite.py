"""The reference ClipPPOLoss broken where §4's composite-critic specs
(``conformance/test_ppo_value_clipping_composite.py``) look, one line of
``impls/ppo_value_clipping.py`` edited each:

- ``STORED_OVERWRITTEN``: the composite stored predictions read without a copy (TorchRL 0.14.1):
  the critic overwrites them, each prediction is clipped around itself;
- ``COMPOSITE_UNREDUCED``: the forward's reduction of a composite ``loss_critic`` skipped
  (TorchRL 0.14.1: one loss per sample per head).
"""

from __future__ import annotations

from conformance.implementations.torchrl_areas.ppo_value_clipping import PPOLossFamilyCritic
from conformance.interface import PPO_LOSS_CLASSES
from tests.mutants import implementation
from tests.mutants.source import mutated_module

EDITS = {
    "STORED_OVERWRITTEN": ("            old_value = old_value.copy()\n", "            pass\n"),
    "COMPOSITE_UNREDUCED": ("        if is_tensor_collection(critic):\n",
                            "        if is_tensor_collection(critic) and False:\n"),
}


def _reference(name: str, old: str = "", new: str = ""):
    module = mutated_module("impls.ppo_value_clipping", old, new, tag=name)
    family = {cls: getattr(module, cls) for cls in PPO_LOSS_CLASSES}
    return implementation(name.lower().replace("_", "-"),
                          ppo_value_clipping=PPOLossFamilyCritic(module.ClipPPOLoss, family))


MUTANTS = list(EDITS)
STORED_OVERWRITTEN = _reference("STORED_OVERWRITTEN", *EDITS["STORED_OVERWRITTEN"])
COMPOSITE_UNREDUCED = _reference("COMPOSITE_UNREDUCED", *EDITS["COMPOSITE_UNREDUCED"])
UNMUTATED = _reference("UNMUTATED")
