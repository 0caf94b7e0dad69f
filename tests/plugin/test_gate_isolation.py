"""One implementation cannot move another's verdicts (issue #22, item 3): the leaking plug-ins
of tests/leaks run beside the reference and TorchRL, as they were tried."""

from __future__ import annotations

from collections import Counter

import pytest

from conformance.plugin import isolation
from tests.conftest import run_suite

LEAKS = {"GRAD_OFF": "grad mode: enabled -> disabled",
         "NUMPY_RAISES": "numpy error state: divide 'warn' -> 'raise'",
         "WARNINGS_ERROR": "warning filter added: error Warning",
         "DETERMINISTIC": "deterministic algorithms (enabled, warn_only): (False, False) -> "
                          "(True, False)"}


def _tally(run, impl):
    return Counter(r["outcome"] for r in run.rows(implementation=impl))


@pytest.mark.slow
def test_leaks_in_a_call_are_blamed_on_their_maker_and_the_reference_is_untouched(tmp_path):
    """As tried: a PPO critic_loss calling torch.set_grad_enabled(False) turned 77 of the
    reference's 185 passes into failures; np.seterr(all='raise') 4 (inside the oracle)."""
    leakers = ",".join(f"tests.leaks.state:{name}" for name in LEAKS)
    run = run_suite(tmp_path, "conformance", "--impl", f"reference,{leakers}")
    assert run.returncode == 1, run.output[-3000:]
    reference = _tally(run, "reference")  # every spec, all passing, as without the leakers
    assert set(reference) == {"pass"} and reference["pass"] >= 185, run.output[-3000:]
    for name, change in LEAKS.items():
        rows = [r for r in run.rows(implementation=name) if r["area"] == "ppo_value_clipping"]
        assert rows and all(r["outcome"] == "error" for r in rows), (name, rows[:2])
        assert all(f"implementation {name!r} left global state changed" in r["message"]
                   and change in r["message"] for r in rows), rows[0]["message"]


@pytest.mark.slow
def test_a_leak_at_import_is_blamed_on_the_importer_and_torchrl_keeps_its_verdicts(tmp_path):
    """As tried: torch.set_default_dtype(torch.float64) at a plug-in's import made 20 TorchRL
    rows fail, which the known-failure entries counted as expected."""
    run = run_suite(tmp_path, "conformance", "--impl",
                    "torchrl,tests.leaks.dtype_at_import:IMPL")
    assert run.returncode == 1, run.output[-3000:]
    torchrl = run.rows(implementation="torchrl")  # its verdicts as without the plug-in
    assert torchrl and all(r["expected"] is True for r in torchrl), run.output[-3000:]
    assert set(_tally(run, "torchrl")) == {"pass", "known failure"}, run.output[-3000:]
    rows = [r for r in run.rows(implementation="IMPL") if r["area"] == "ppo_value_clipping"]
    assert rows and {r["outcome"] for r in rows} == {"error"}
    assert rows[0]["message"].startswith(
        "implementation 'IMPL' left global state changed when imported: default dtype: "
        "torch.float32 -> torch.float64")


def test_restore_names_each_change_and_puts_it_back():
    import numpy as np
    import torch

    expected = isolation.snapshot()
    torch.set_grad_enabled(False)
    np.set_printoptions(precision=3)
    try:
        changes = isolation.restore(expected)
    finally:
        torch.set_grad_enabled(True)
        np.set_printoptions(precision=8)
    assert changes == ["grad mode: enabled -> disabled", "numpy print options: precision 8 -> 3"]
    assert isolation.snapshot() == expected and isolation.restore(expected) == []


@pytest.mark.parametrize("before, after, found", [
    ([], [("ignore", None, DeprecationWarning, None, 0)], []),  # a library's own filter
    ([], [("error", None, Warning, None, 0)], ["warning filter added: error Warning"]),
    ([("ignore", None, Warning, None, 0)], [], ["1 warning filter(s) removed"]),
])
def test_only_filter_changes_that_can_move_a_verdict_are_leaks(before, after, found):
    assert isolation.filter_changes(before, after) == found
