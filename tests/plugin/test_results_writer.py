"""The plug-in's results writer: a partial run named onto a complete one writes beside it; an
undeclared skip is unexpected."""

from __future__ import annotations

import json

from tests.rows import SPECS
from tests.rows import spec_row as _row
from tests.rows import write_results as _results


def test_a_partial_run_named_onto_a_complete_one_writes_beside_it(tmp_path):
    from types import SimpleNamespace

    from conformance.plugin.results import ResultsPlugin

    target = _results(tmp_path / "results.json", [_row(s) for s in SPECS])
    complete = target.read_text()
    config = SimpleNamespace(stash={}, option=SimpleNamespace(help=False))
    plugin = ResultsPlugin(config, [SimpleNamespace(id="torchrl", version="0.14.1")], target,
                           True, False, None)
    plugin.rows = {"n": {**_row(SPECS[0]), "nodeid": "n"}}
    plugin.partial_reason = "filtered with -k x"
    plugin.write(0)
    assert target.read_text() == complete
    assert json.loads((tmp_path / "partial" / "results.json").read_text())["partial"]


def test_a_skip_the_suite_does_not_declare_is_unexpected():
    """Found as an attacker: a TorchRL whose API raises pytest's Skipped ("not today") made
    every spec it touches 'skipped', an expected outcome: a green gate on nothing tested."""
    from types import SimpleNamespace

    from conformance.plugin.results import classify

    report = SimpleNamespace(when="call", skipped=True, passed=False, failed=False,
                             longrepr=("x.py", 1, "Skipped: not today"))
    verdict = classify(report, None, None, "")
    assert (verdict["outcome"], verdict["expected"]) == ("skipped", False)
    declared = classify(report, None, "not applicable", "")
    assert (declared["outcome"], declared["expected"]) == ("not applicable", True)
