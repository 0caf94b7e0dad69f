"""The reference PPO loss with one line of ``impls/composite_entropy.py`` (per-head entropy
coefficients) edited, the way a mutation tool edits it: what survived while no spec gave
per-head coefficients that leave a head out.

- ``MISSING_COEFF_NAMES_NOTHING``: the refusal is a ``KeyError(None)``;
- ``MISSING_COEFF_BREAKS``: building the refusal's text fails (``sorted(None)``: a TypeError).
"""

from __future__ import annotations

from tests.mutants import implementation
from tests.mutants.source import mutated_module

MUTANTS = {
    "MISSING_COEFF_NAMES_NOTHING": (
        'raise KeyError(f"no entropy coefficient for head {key!r}; coefficients are keyed "\n'
        '                           f"by the full key of the head\'s entropy: {sorted(coeff_map)}")',
        "raise KeyError(None)"),
    "MISSING_COEFF_BREAKS": ("{sorted(coeff_map)}", "{sorted(None)}"),
}


def reference_with_edit(name: str, old: str, new: str):
    from conformance.implementations.torchrl_areas.composite_log_prob import TensorDictComposite
    from impls import ClipPPOLoss, CompositeDistribution, ProbabilisticActor

    module = mutated_module("impls.composite_entropy", old, new, tag=name)
    # the edited mixin first: its _weighted_loss_entropy (and the edited helper) wins
    loss = type(f"ClipPPOLoss_{name}", (module.PerHeadEntropy, ClipPPOLoss), {})
    return implementation(name.lower().replace("_", "-"), composite_log_prob=TensorDictComposite(
        CompositeDistribution, ProbabilisticActor, loss))


MISSING_COEFF_NAMES_NOTHING = reference_with_edit("MISSING_COEFF_NAMES_NOTHING",
                                                  *MUTANTS["MISSING_COEFF_NAMES_NOTHING"])
MISSING_COEFF_BREAKS = reference_with_edit("MISSING_COEFF_BREAKS", *MUTANTS["MISSING_COEFF_BREAKS"])
UNMUTATED = reference_with_edit("UNMUTATED", "", "")
