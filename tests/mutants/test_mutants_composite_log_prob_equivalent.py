"""Probes of the mutants of impls/composite_log_prob.py classified *equivalent* in
tests/mutants/classified/composite_log_prob.json: each applies that very edit (the mutation
tool's, one line) and shows, on seeded inputs, no observable difference from the reference.

``TRAILING_SINGLETON_NDIM_GE``: the stored-trailing-singleton test ``value.ndim > n`` as
``value.ndim >= n``. At ``value.ndim == n`` the other conditions cannot all hold: the slice
``value.shape[-1:-1]`` is empty, so it equals the head's shape only when ``n == 0``, which the
leading ``n and`` already excludes. Probed on every layout the specs use and on values of
exactly the head's shape that end in 1 (a batch of 1, a Normal over d = 1).
"""

from __future__ import annotations

import pytest
import torch
from tensordict import TensorDict
from tensordict.nn import set_composite_lp_aggregate
from torch.distributions import Categorical, Normal

from tests.mutants.source import mutated_module

EDITS = {
    "TRAILING_SINGLETON_NDIM_GE": (
        "if (n and value.ndim > n and value.shape[-1] == 1",
        "if (n and value.ndim >= n and value.shape[-1] == 1"),
}


def _cases():
    """(name, params, distribution_map, sample) for each probed layout, seeded."""
    g = torch.Generator().manual_seed(0)
    for batch in [(4,), (1,), (4, 1), (4, 3), (1, 1)]:
        for d in (1, 2):
            params = TensorDict({"c": {"logits": torch.randn(*batch, 5, generator=g)},
                                 "x": {"loc": torch.randn(*batch, d, generator=g),
                                       "scale": 0.5 + torch.rand(*batch, d, generator=g)}}, batch)
            dmap = {"c": Categorical, "x": Normal}
            for stored in ("as-is", "trailing-singleton", "leading-samples"):
                c = torch.randint(5, batch, generator=g)
                x = torch.randn(*batch, d, generator=g)
                sample_batch = batch
                if stored == "trailing-singleton":
                    c = c.unsqueeze(-1)
                elif stored == "leading-samples":
                    c = torch.randint(5, (3, *batch), generator=g)
                    x = torch.randn(3, *batch, d, generator=g)
                    sample_batch = (3, *batch)
                sample = TensorDict({"c": c, "x": x}, sample_batch)
                yield f"batch={list(batch)}-d={d}-{stored}", params, dmap, sample


def _outcome(module, params, dmap, sample, aggregate):
    """The log-prob, or the error raised as ``"Type: message"``."""
    try:
        with set_composite_lp_aggregate(aggregate):
            return module.CompositeDistribution(params, dmap).log_prob(sample.clone())
    except Exception as exc:  # noqa: BLE001 - compared between reference and mutant
        return f"{type(exc).__name__}: {exc}"


@pytest.mark.parametrize("edit", list(EDITS))
def test_equivalent_edit_changes_no_log_prob(edit):
    reference = mutated_module("impls.composite_log_prob", tag=f"{edit}_reference")
    mutant = mutated_module("impls.composite_log_prob", *EDITS[edit], tag=edit)
    checked = 0
    for name, params, dmap, sample in _cases():
        for aggregate in (True, False):
            outs = [_outcome(module, params, dmap, sample, aggregate)
                    for module in (reference, mutant)]
            if isinstance(outs[0], str) or isinstance(outs[1], str):
                # an input the reference refuses (a head whose shape ends in 1 stored with one
                # more singleton is ambiguous): the mutant must refuse it the same way
                assert outs[0] == outs[1], (edit, name, outs)
            elif aggregate:
                assert torch.equal(outs[0], outs[1]), (edit, name, outs)
            else:
                keys = sorted(outs[0].keys(True, True), key=str)
                assert keys == sorted(outs[1].keys(True, True), key=str), (edit, name)
                for key in keys:
                    assert torch.equal(outs[0][key], outs[1][key]), (edit, name, key)
            checked += 1
    assert checked == 60
