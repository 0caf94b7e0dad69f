"""The reference ClipPPOLoss with one line of ``impls/ppo_value_clipping.py`` edited, the way a
mutation tool edits it: what survived while no spec reached a tensor ``clip_value``, the
explained variance or ``separate_losses`` (``conformance/test_ppo_value_clipping_options.py``).

- ``TENSOR_THRESHOLD_REFUSED``: a scalar tensor threshold is refused (``!= 1`` becomes ``== 1``);
- ``TENSOR_SIZE_UNCHECKED``: a tensor of two values reaches ``float()``, whose ValueError
  names nothing;
- ``NAN_ACCEPTED``: the finiteness check is gone, NaN clips to a NaN loss;
- ``ZERO_REFUSED``: ``clip_value=0.0`` (TorchRL's "off") is refused as invalid;
- ``EV_POOLED``: the residual's variance over every element instead of per column;
- ``EV_SAMPLE_VARIANCE``: the residual's variance with Bessel's correction, the total without;
- ``EV_EPS_SUBTRACTED``: the denominator's epsilon subtracted (constant returns: huge and
  positive);
- ``EV_ALWAYS``: the explained variance reported although logging is off;
- ``SHARED_TRAINED_WITHOUT_FUNCTIONAL``: ``separate_losses`` kept only with functional
  parameters, as TorchRL 0.14.1 does;
- ``TARGET_UNNAMED``: a missing value target raises a KeyError that names nothing.
"""

from __future__ import annotations

from conformance.implementations.torchrl_areas.ppo_value_clipping import PPOLossFamilyCritic
from conformance.interface import PPO_LOSS_CLASSES
from tests.mutants import implementation
from tests.mutants.source import mutated_module

MUTANTS = {
    "TENSOR_THRESHOLD_REFUSED": ("if clip_value.numel() != 1:", "if clip_value.numel() == 1:"),
    "TENSOR_SIZE_UNCHECKED": ("if clip_value.numel() != 1:", "if clip_value.numel() != 2:"),
    "NAN_ACCEPTED": ("if not math.isfinite(number) or number < 0:", "if number < 0:"),
    "ZERO_REFUSED": ("if not math.isfinite(number) or number < 0:",
                     "if not math.isfinite(number) or number <= 0:"),
    "EV_POOLED": ("residual = torch.var(target - value, correction=0, dim=0)",
                  "residual = torch.var(target - value, correction=0)"),
    "EV_SAMPLE_VARIANCE": ("residual = torch.var(target - value, correction=0, dim=0)",
                           "residual = torch.var(target - value, correction=1, dim=0)"),
    "EV_EPS_SUBTRACTED": ("(total + torch.finfo(total.dtype).eps)",
                          "(total - torch.finfo(total.dtype).eps)"),
    "EV_ALWAYS": ("if self.log_explained_variance else None", "if True else None"),
    "SHARED_TRAINED_WITHOUT_FUNCTIONAL": ("        if not self.separate_losses:\n",
                                          "        if True:\n"),
    "TARGET_UNNAMED": ('raise KeyError(f"the key {keys.value_target} was not found',
                       'raise KeyError(f"missing" or f"the key {keys.value_target} was not'),
}


def reference_with_edit(name: str, old: str, new: str):
    module = mutated_module("impls.ppo_value_clipping", old, new, tag=name)
    family = {cls: getattr(module, cls) for cls in PPO_LOSS_CLASSES}
    return implementation(name.lower().replace("_", "-"),
                          ppo_value_clipping=PPOLossFamilyCritic(module.ClipPPOLoss, family))


TENSOR_THRESHOLD_REFUSED = reference_with_edit("TENSOR_THRESHOLD_REFUSED",
                                               *MUTANTS["TENSOR_THRESHOLD_REFUSED"])
TENSOR_SIZE_UNCHECKED = reference_with_edit("TENSOR_SIZE_UNCHECKED",
                                            *MUTANTS["TENSOR_SIZE_UNCHECKED"])
NAN_ACCEPTED = reference_with_edit("NAN_ACCEPTED", *MUTANTS["NAN_ACCEPTED"])
ZERO_REFUSED = reference_with_edit("ZERO_REFUSED", *MUTANTS["ZERO_REFUSED"])
EV_POOLED = reference_with_edit("EV_POOLED", *MUTANTS["EV_POOLED"])
EV_SAMPLE_VARIANCE = reference_with_edit("EV_SAMPLE_VARIANCE", *MUTANTS["EV_SAMPLE_VARIANCE"])
EV_EPS_SUBTRACTED = reference_with_edit("EV_EPS_SUBTRACTED", *MUTANTS["EV_EPS_SUBTRACTED"])
EV_ALWAYS = reference_with_edit("EV_ALWAYS", *MUTANTS["EV_ALWAYS"])
SHARED_TRAINED_WITHOUT_FUNCTIONAL = reference_with_edit(
    "SHARED_TRAINED_WITHOUT_FUNCTIONAL", *MUTANTS["SHARED_TRAINED_WITHOUT_FUNCTIONAL"])
TARGET_UNNAMED = reference_with_edit("TARGET_UNNAMED", *MUTANTS["TARGET_UNNAMED"])
UNMUTATED = reference_with_edit("UNMUTATED", "", "")


class _AlwaysRefuses:
    """Not an edit of the reference: an area whose every call raises the error the refusal
    specs ask for (ValueError naming clip_value, KeyError naming the entries): it must not
    pass them, since the same call with a valid threshold and a complete batch fails."""

    critic_scale = 2.0

    def critic_loss(self, **kwargs):
        raise ValueError("clip_value")

    def critic_loss_with(self, *, old_value, returns, **kwargs):
        if returns is None or old_value is None:
            raise KeyError("value_target or state_value")
        raise ValueError("bad clip_value")


ALWAYS_REFUSES = implementation("always-refuses", ppo_value_clipping=_AlwaysRefuses())
