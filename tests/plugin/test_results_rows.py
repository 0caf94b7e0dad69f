"""How the results plugin turns reports into rows: reruns recorded, addresses removed, a worker
that died explained from its notes."""

from __future__ import annotations

from types import SimpleNamespace

from conformance.implementations import Selected
from conformance.plugin.results import ResultsPlugin, _message
from conformance.plugin.watchdog import crash_explanation

NODE = "conformance/test_ppo_value_clipping.py::test_x[ref-c=0.1]"


def _report(outcome, conformance, when="call"):
    return SimpleNamespace(nodeid=NODE, outcome=outcome, when=when, duration=0.5,
                           failed=outcome == "failed", conformance=conformance)


def _plugin(tmp_path):
    return ResultsPlugin(SimpleNamespace(), [Selected("ref", SimpleNamespace(version="9"))],
                         tmp_path / "r.json", True, False, tmp_path)


def test_a_pass_after_reruns_keeps_their_trace(tmp_path):
    plugin = _plugin(tmp_path)
    fail = {"outcome": "fail", "expected": False, "message": "AssertionError: first try"}
    plugin.pytest_runtest_logreport(_report("rerun", fail))
    plugin.pytest_runtest_logreport(_report("passed", {"outcome": "pass", "expected": True,
                                                       "message": ""}))
    row = plugin.rows[NODE]
    # a spec that needed a rerun is not a pass (issue #44): the trace stays, the verdict is a fail
    assert (row["outcome"], row["expected"], row["reruns"]) == ("fail", False, 1)
    assert row["message"].endswith("it failed first: AssertionError: first try")
    assert row["rerun_messages"] == ["AssertionError: first try"]
    assert (row["implementation"], row["implementation_version"], row["parameters"]) == ("ref", "9", "c=0.1")


def test_report_without_verdict_is_a_dead_worker_explained_by_its_notes(tmp_path):
    (tmp_path / "gw0.running").write_text(NODE)
    (tmp_path / "gw0.crash").write_text("Fatal Python error: Aborted\n\nCurrent thread ...")
    plugin = _plugin(tmp_path)
    plugin.pytest_runtest_logreport(SimpleNamespace(nodeid=NODE, outcome="failed", when="call",
                                                    duration=1.0, failed=True))
    assert plugin.rows[NODE]["outcome"] == "fail"
    assert plugin.rows[NODE]["message"] == "the process crashed: Aborted"
    assert crash_explanation(tmp_path, "other") == "the process crashed (no signal recorded)"


def test_messages_carry_no_object_addresses():
    report = SimpleNamespace(longrepr=SimpleNamespace(reprcrash=SimpleNamespace(
        message="Failing: f(area=<x.Area object at 0x7f54ff555510>)")))
    assert _message(report) == "Failing: f(area=<x.Area object>)"
