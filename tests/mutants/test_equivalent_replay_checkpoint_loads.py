"""Probe of two mutants of ``PrioritizedSampler.loads`` classified "equivalent" in
``tests/mutants/classified/prioritized_replay_checkpoints.json``: ``torch.load(raw_file,
weights_only=True)`` with the argument set to None or left out. Since torch 2.6 (the stack pins
2.14.1) ``weights_only`` defaults to True, so both load a checkpoint's ``raw_priority.pt``
exactly as before and refuse a tampered one without running it. The companion edit
(``weights_only=False``) is not equivalent, and the probe tells it apart."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

import impls.prioritized_replay as original
from tests.mutants.source import mutated_module

LOAD = "torch.load(raw_file, weights_only=True)"
EDITS = {"weights-only-none": (LOAD, "torch.load(raw_file, weights_only=None)"),
         "weights-only-dropped": (LOAD, "torch.load(raw_file, )")}


class _TouchOnLoad:
    def __init__(self, marker: Path):
        self.marker = marker

    def __reduce__(self):
        return Path.touch, (self.marker,)


def _observe(module, tmp_path: Path) -> dict:
    """A seeded checkpoint loaded by ``module``'s sampler, then a tampered copy of it."""
    source = original.PrioritizedSampler(16, 0.6, 0.4, 1e-3, max_priority_within_buffer=True)
    source.extend(torch.arange(12))
    gen = torch.Generator().manual_seed(3)
    source.update_priority(torch.arange(12), torch.rand(12, generator=gen) * 10)
    tmp_path.mkdir()
    path = tmp_path / "sampler"
    source.dumps(path)
    target = module.PrioritizedSampler(16, 0.5, 0.5, 1e-2, max_priority_within_buffer=True)
    target.loads(path)
    state = target.state_dict()
    marker = tmp_path / "code-ran"
    torch.save(_TouchOnLoad(marker), path / "raw_priority.pt")
    try:
        module.PrioritizedSampler(16, 0.5, 0.5).loads(path)
        refused = None
    except Exception as exc:  # noqa: BLE001 -- the refusal's type is observed
        refused = type(exc).__name__
    return {"raw": torch.nan_to_num(state["_raw_priority"], nan=-1.0).tolist(),  # NaN: empty "q": state["_q"].tolist(),
            "max": state["_max_priority"], "params": (state["_alpha"], state["_eps"]),
            "ran": marker.exists(), "refused": refused}


@pytest.mark.parametrize("edit", list(EDITS))
def test_edit_is_not_observable(edit, tmp_path):
    mutant = mutated_module("impls.prioritized_replay", *EDITS[edit], tag=edit.replace("-", "_"))
    want = _observe(original, tmp_path / "original")
    got = _observe(mutant, tmp_path / "mutant")
    assert got == want
    assert not want["ran"] and want["refused"]


def test_the_probe_tells_weights_only_false_apart(tmp_path):
    mutant = mutated_module("impls.prioritized_replay", LOAD,
                            "torch.load(raw_file, weights_only=False)", tag="weights_only_false")
    assert _observe(mutant, tmp_path / "mutant")["ran"]
