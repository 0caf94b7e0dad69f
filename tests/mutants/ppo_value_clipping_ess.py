"""The ESS of TorchRL's releases before 0.13.3, where §4's ESS spec
(``conformance/test_ppo_value_clipping_ess.py``) looks: the reference's ``ClipPPOLoss`` (which
inherits TorchRL 0.14.1's ``forward``) with one line of that ``forward`` edited, the rest as it is:

- ``ESS_SQUEEZE_ALL``: ``log_weight.squeeze()`` instead of ``squeeze(-1)`` (pytorch/rl#3936's
  bug): a singleton minibatch loses its batch dimension, and the sum runs over the features;
- ``ESS_POOLED``: the per-element ESS averaged into one number (``_reduce(ess, "mean")``, as
  releases up to 0.13.2 report it).
"""

from __future__ import annotations

import impls
from conformance.implementations.torchrl_areas.ppo_value_clipping import PPOLossFamilyCritic
from conformance.interface import PPO_LOSS_CLASSES
from tests.mutants import implementation
from tests.mutants.source import mutated_module

EDITS = {
    "ESS_SQUEEZE_ALL": ("lw = log_behav_weight.squeeze(-1)", "lw = log_behav_weight.squeeze()"),
    "ESS_POOLED": ('td_out.set("ESS", ess / batch)', 'td_out.set("ESS", ess.mean() / batch)'),
}


def _reference(name: str, old: str = "", new: str = ""):
    ppo = mutated_module("torchrl.objectives.ppo", old, new, tag=name)
    # TorchRL's forward, edited, on the reference's loss (its critic, masks and entropy)
    loss_cls = type("ClipPPOLoss", (impls.ClipPPOLoss,), {"forward": ppo.ClipPPOLoss.forward})
    family = {cls: getattr(impls, cls) for cls in PPO_LOSS_CLASSES}
    return implementation(name.lower().replace("_", "-"),
                          ppo_value_clipping=PPOLossFamilyCritic(loss_cls, family))


MUTANTS = list(EDITS)
ESS_SQUEEZE_ALL = _reference("ESS_SQUEEZE_ALL", *EDITS["ESS_SQUEEZE_ALL"])
ESS_POOLED = _reference("ESS_POOLED", *EDITS["ESS_POOLED"])
UNMUTATED = _reference("UNMUTATED")
