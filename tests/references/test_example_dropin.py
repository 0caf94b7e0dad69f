"""Smoke test of examples/dropin_training.py at a tiny frame budget, on TorchRL's mock env
(no gymnasium): both algorithms run with either implementation, and the same seeds give the
same per-batch rewards and losses with TorchRL's classes and the reference (the mock env's
rewards are constant: the losses carry the comparison)."""

import importlib.util
import math

import pytest

from conformance.paths import ROOT

SCRIPT = ROOT / "examples" / "dropin_training.py"


def _example():
    spec = importlib.util.spec_from_file_location("dropin_training", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("algo", ["sac", "ppo"])
def test_example_runs_and_the_switch_changes_nothing_else(algo, capsys):
    example = _example()
    args = ["--algo", algo, "--env", "mock", "--frames", "150", "--frames-per-batch", "50",
            "--updates", "2", "--batch", "16", "--buffer", "200", "--hidden", "16"]
    runs = {impl: example.main([*args, "--impl", impl]) for impl in ("torchrl", "reference")}
    assert len(runs["torchrl"]) == 3
    assert all(math.isfinite(r) and math.isfinite(loss) for r, loss in runs["torchrl"])
    assert len({loss for _, loss in runs["torchrl"]}) == 3  # training moves the losses
    assert runs["torchrl"] == runs["reference"]
    assert f"{algo} reference seed=0 mean reward per batch" in capsys.readouterr().out
