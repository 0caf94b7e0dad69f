"""A spec that needed a rerun is not a pass, whatever reran it (issue #44): the results
plug-in's row says it failed first."""

from __future__ import annotations

from types import SimpleNamespace

from conformance.plugin import results as results_plugin


def _report(nodeid, outcome, when="call", message=""):
    verdict_ = {"outcome": "fail" if outcome == "rerun" else "pass",
                "expected": outcome != "rerun", "message": message}
    return SimpleNamespace(nodeid=nodeid, outcome=outcome, when=when, failed=outcome == "failed",
                           duration=0.1, conformance=verdict_)


def test_a_spec_that_needed_a_rerun_is_not_a_pass():
    """As tried: pytest conformance --require-complete --reruns=2 on a TorchRL whose specs
    fail on the first call and pass on a rerun exited 0. Whatever reruns it (the plug-in,
    a flaky marker), the row says so and is not a pass."""
    plugin = results_plugin.ResultsPlugin.__new__(results_plugin.ResultsPlugin)
    plugin.rows, plugin.selected = {}, []
    nodeid = "conformance/test_x.py::test_y[torchrl]"
    plugin.pytest_runtest_logreport(_report(nodeid, "rerun", message="AssertionError: first"))
    plugin.pytest_runtest_logreport(_report(nodeid, "passed"))
    row = plugin.rows[nodeid]
    assert (row["outcome"], row["expected"], row["reruns"]) == ("fail", False, 1)
    assert row["message"].startswith("passed only after 1 rerun(s): a spec that needs a rerun "
                                     "is not a pass; it failed first: AssertionError: first")
    other = "conformance/test_x.py::test_z[torchrl]"
    plugin.pytest_runtest_logreport(_report(other, "passed"))
    assert plugin.rows[other]["outcome"] == "pass"
