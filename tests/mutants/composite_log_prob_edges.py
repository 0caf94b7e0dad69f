"""The reference composite distribution with one line of ``impls/composite_log_prob.py`` edited,
the way a mutation tool edits it: what survived while no spec asked for the edge inputs of
issue #31 (out-of-range categorical actions, leading sample dims, MEAN with Normal heads, a
sample missing a head, a [B, 2, 1] stored action).

- ``OUT_OF_RANGE_UNCHECKED``: the category check lets ``n`` through (``high <= n``), so gather
  raises torch's "index 8 is out of bounds";
- ``NEGATIVE_UNCHECKED``: the check's ``and`` becomes ``or``, letting ``-1`` through;
- ``REFUSAL_NAMES_NOTHING``: the refusal is raised with the head's key replaced by None;
- ``FAST_PATH_FOR_SAMPLES``: actions with leading sample dims take the one-index-per-row path;
- ``SINGLETON_OF_ANY_HEAD``: any value ending in 1 with more dims than its head is squeezed,
  so a Normal over d = 1 with leading sample dims loses its event dim;
- ``SINGLETON_AFTER_DIM_1``: the stored trailing singleton is looked for at dim 1, not -1;
- ``MEAN_OF_NORMAL_REFUSED``: ``mean`` refuses the heads that have one;
- ``MISSING_HEAD_LISTS_NOTHING``: the error for a missing head lists no entry of the sample;
- ``SUM_WHEN_NOT_ASKED``: ``log_prob_composite`` reads ``include_sum`` backwards (no sum when
  asked for it, nor by default under ``set_composite_lp_aggregate(True)``);
- ``OUT_KEYS_LEFT_TO_TORCHRL``: the actor leaves out_keys to TorchRL's inference, which
  declares ``"action"`` for a subclass of the composite class;
- ``IN_PLACE_WRITES_NOTHING``: under ``set_composite_lp_aggregate(True)`` the entries never
  reach the sample.
"""

from __future__ import annotations

from tests.mutants import implementation
from tests.mutants.source import mutated_module

MUTANTS = {
    "OUT_OF_RANGE_UNCHECKED": ("low >= 0 and high < n", "low >= 0 and high <= n"),
    "NEGATIVE_UNCHECKED": ("low >= 0 and high < n", "low >= 0 or high < n"),
    "REFUSAL_NAMES_NOTHING": ("{key: self._head_log_prob(key, dist,",
                              "{key: self._head_log_prob(None, dist,"),
    "FAST_PATH_FOR_SAMPLES": ("or value.shape != dist.batch_shape:",
                              "or value.shape == dist.batch_shape:"),
    "SINGLETON_OF_ANY_HEAD": ("value.shape[-1] == 1 and expected[-1] != 1",
                              "value.shape[-1] == 1 or expected[-1] != 1"),
    "SINGLETON_AFTER_DIM_1": ("value.shape[-1] == 1 and", "value.shape[+1] == 1 and"),
    "MEAN_OF_NORMAL_REFUSED": ("m.numel() and bool(torch.isnan(m).all())",
                               "m.numel() and not bool(torch.isnan(m).all())"),
    "MISSING_HEAD_LISTS_NOTHING": ("td.keys(include_nested=True)", "td.keys(include_nested=False)"),
    "SUM_WHEN_NOT_ASKED": ("aggregate if include_sum is None else include_sum",
                           "aggregate if include_sum is not None else include_sum"),
    "IN_PLACE_WRITES_NOTHING": ("return sample.update(entries)", "return sample.update({})"),
    "OUT_KEYS_LEFT_TO_TORCHRL": ("                out_keys = written\n",
                                 "                out_keys = None\n"),
}


def reference_with_edit(name: str, old: str, new: str):
    from conformance.implementations.torchrl_areas.composite_log_prob import TensorDictComposite
    from impls import ClipPPOLoss

    module = mutated_module("impls.composite_log_prob", old, new, tag=name)
    return implementation(name.lower().replace("_", "-"), composite_log_prob=TensorDictComposite(
        module.CompositeDistribution, module.ProbabilisticActor, ClipPPOLoss))


OUT_OF_RANGE_UNCHECKED = reference_with_edit("OUT_OF_RANGE_UNCHECKED", *MUTANTS["OUT_OF_RANGE_UNCHECKED"])
NEGATIVE_UNCHECKED = reference_with_edit("NEGATIVE_UNCHECKED", *MUTANTS["NEGATIVE_UNCHECKED"])
REFUSAL_NAMES_NOTHING = reference_with_edit("REFUSAL_NAMES_NOTHING", *MUTANTS["REFUSAL_NAMES_NOTHING"])
FAST_PATH_FOR_SAMPLES = reference_with_edit("FAST_PATH_FOR_SAMPLES", *MUTANTS["FAST_PATH_FOR_SAMPLES"])
SINGLETON_OF_ANY_HEAD = reference_with_edit("SINGLETON_OF_ANY_HEAD", *MUTANTS["SINGLETON_OF_ANY_HEAD"])
SINGLETON_AFTER_DIM_1 = reference_with_edit("SINGLETON_AFTER_DIM_1", *MUTANTS["SINGLETON_AFTER_DIM_1"])
MEAN_OF_NORMAL_REFUSED = reference_with_edit("MEAN_OF_NORMAL_REFUSED", *MUTANTS["MEAN_OF_NORMAL_REFUSED"])
MISSING_HEAD_LISTS_NOTHING = reference_with_edit("MISSING_HEAD_LISTS_NOTHING",
                                                 *MUTANTS["MISSING_HEAD_LISTS_NOTHING"])
SUM_WHEN_NOT_ASKED = reference_with_edit("SUM_WHEN_NOT_ASKED", *MUTANTS["SUM_WHEN_NOT_ASKED"])
IN_PLACE_WRITES_NOTHING = reference_with_edit("IN_PLACE_WRITES_NOTHING",
                                              *MUTANTS["IN_PLACE_WRITES_NOTHING"])
OUT_KEYS_LEFT_TO_TORCHRL = reference_with_edit("OUT_KEYS_LEFT_TO_TORCHRL",
                                               *MUTANTS["OUT_KEYS_LEFT_TO_TORCHRL"])
UNMUTATED = reference_with_edit("UNMUTATED", "", "")
