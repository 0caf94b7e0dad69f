"""The gate, round four (issue #44): allow-lists at every boundary, a parent that reads the
verdict, nothing that did not run replaces anything. Each case as it was tried."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from types import SimpleNamespace

import pytest

from conformance import manifest, verdict
from conformance.plugin import results as results_plugin
from conformance.plugin.completeness import PARTIAL_EXIT
from conformance.upstream import passthrough, runner
from tests.conftest import ROOT


def _complete_rows(impl: str = "torchrl", version: str = "0.14.1") -> list[dict]:
    """Every spec of the committed manifest, passing, for ``impl``."""
    rows = []
    for spec in sorted(manifest.spec_ids()):
        head, bracket, params = spec.partition("[")
        inside = f"{impl}-{params.removesuffix(']')}" if bracket else impl
        path, _, name = head.partition("::")
        rows.append({"nodeid": f"{head}[{inside}]", "implementation": impl,
                     "area": path.split("/")[-1].removeprefix("test_").removesuffix(".py"),
                     "spec": name, "parameters": params.removesuffix("]"), "duration": 0.0,
                     "implementation_version": version, "device": "cpu", "outcome": "pass",
                     "expected": True, "message": ""})
    return rows


# ------------------------------------------------------------------ 1. allow-lists
@pytest.mark.parametrize("args, named", [
    (["--reruns=2"], "--reruns=2"), (["--reruns", "3"], "--reruns"),
    (["--log-file=README.md"], "--log-file=README.md"), (["--debug=FILE"], "--debug=FILE"),
    (["--co"], "--co"), (["--timeout=0.5", "--timeout-method=thread"], "--timeout=0.5"),
    (["-n", "99999"], "-n 99999"), (["-n", "-1"], "-n -1"), (["--numprocesses=99999"], "99999"),
    (["--spec-timeout", "nan"], "nan"), (["--spec-timeout=1e999"], "1e999"),
    (["--spec-timeout", "0"], "--spec-timeout 0"), (["-p", "rerunfailures"], "-p"),
    (["-qp", "x"], "-qp"), (["--count=5"], "--count=5"), (["-k"], "-k"),
    (["-k", "--reruns=2"], "-k --reruns=2"), (["--impl", "reference"], "--impl"),
    (["--verb"], "--verb"), (["--exitfirst=1"], "--exitfirst=1"), (["-vs"], "-vs"),
    (["--tb=evil"], "--tb evil"), (["@args.txt"], "@args.txt"), (["-W", "error"], "-W"),
])
def test_only_the_allow_list_passes_through_in_one_line_naming_the_option(args, named):
    with pytest.raises(passthrough.PassThroughError) as info:
        passthrough.check(args, ROOT)
    text = str(info.value)
    assert "\n" not in text and named in text, text


@pytest.mark.parametrize("args", [
    ["-k", "ppo and not tanh"], ["-kppo"], ["-m", "not slow"], ["-x"], ["--exitfirst"],
    ["--maxfail", "2"], ["-v"], ["-vv"], ["-q"], ["--verbose"], ["-rN"], ["-r", "fE"],
    ["--tb=short"], ["--durations=5"], ["-n", "0"], ["-n1"], ["--numprocesses=1"],
    ["--spec-timeout", "600"], ["--spec-timeout=1.5"], ["conformance/test_x.py::t[torchrl-a]"]])
def test_the_allow_list(args):
    passthrough.check(args, ROOT)


def test_the_workers_bound_is_this_machines_cpus():
    bound = passthrough.max_workers()
    passthrough.check(["-n", str(bound)], ROOT)
    with pytest.raises(passthrough.PassThroughError, match=f"from 0 to {bound}"):
        passthrough.check(["-n", str(bound + 1)], ROOT)


@pytest.mark.parametrize("pytest_args", ["--reruns=3", "--log-file=README.md", "--debug=FILE",
                                         "--co", "-x --reruns 2"])
def test_the_runner_refuses_before_anything_is_installed(pytest_args, capsys):
    """As tried: nox -s upstream -- <wheel> --pytest-args="--reruns=3" said "conformant to
    expectations" and recorded it in the history; --log-file=README.md emptied the README."""
    readme = (ROOT / "README.md").read_bytes()
    with pytest.raises(SystemExit) as info:
        runner.parse_args(["0.14.1", f"--pytest-args={pytest_args}"])
    assert info.value.code == 2
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert line.startswith("nox -s upstream --: error: --pytest-args: ")
    assert (ROOT / "README.md").read_bytes() == readme


def test_the_runner_takes_a_leading_dash_value():
    assert runner.parse_args(["0.14.1", "--pytest-args=-x"]).pytest_args == ["-x"]


def test_the_embed_refuses_another_implementation_and_reruns():
    """As tried: specs("torchrl", expectations="none", pytest_args=["--impl", "reference"]):
    495 host tests passed, from the reference, as TorchRL."""
    from conformance import embed

    for args in (["--impl", "reference"], ["--impl=reference"], ["--reruns", "2"],
                 ["--results", "x.json"], "--impl reference"):
        with pytest.raises(ValueError) as info:
            embed.specs("torchrl", expectations="none", pytest_args=args)
        assert "\n" not in str(info.value)
    embed.specs("torchrl", expectations="none", pytest_args=["--spec-timeout", "600", "-v"])


# ------------------------------------------------------------------ reruns: their effect seen
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


# ------------------------------------------------------------------ 2. a parent reads the verdict
def _write(path, rows, partial=None, started=None):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"started": time.time() if started is None else started,
                                "partial": partial, "implementations": {"torchrl": "0.14.1"},
                                "rows": rows}))
    return path


def test_the_parent_judges_from_the_file_this_run_wrote(tmp_path):
    results = tmp_path / "results.json"
    where = verdict.candidates(results)
    since = time.time()
    code, line = verdict.judge(where, since, 0)  # nothing written, exit code 0 (os._exit(0))
    assert code == 1 and line.startswith("NO VERDICT: the run wrote no results file")
    _write(results, _complete_rows(), started=since - 3600)  # an earlier run's file
    assert verdict.judge(where, since, 0)[0] == 1
    _write(results, _complete_rows())
    assert verdict.judge(where, since, 0) == (
        0, f"conformant to expectations: {len(_complete_rows())} rows ({results})")
    _write(results, _complete_rows()[:-1])  # one spec short, not flagged partial by the child
    code, line = verdict.judge(where, since, 0)
    assert code == PARTIAL_EXIT and "have no torchrl row" in line
    _write(where[1], _complete_rows(), partial="filtered with -k 'ppo'")
    code, line = verdict.judge(where, since, 0)
    assert code == PARTIAL_EXIT and line == ("PARTIAL RUN: not a conformance verdict (filtered "
                                             "with -k 'ppo')")
    rows = _complete_rows()
    rows[3].update(outcome="not tested", expected=False)
    _write(results, rows)
    where[1].unlink()
    code, line = verdict.judge(where, since, 0)
    assert code == 1 and line.startswith("NOT CONFORMANT: 1 unexpected result(s), 1 NOT TESTED")


def test_the_console_refuses_bad_inputs_in_one_line_before_running(tmp_path):
    from conformance import console

    for argv, text in ((["--workers", "99999"], "--workers 99999: from 0 to"),
                       (["--workers", "-1"], "--workers -1: from 0 to"),
                       (["--impl", ""], "--impl '': names no implementation"),
                       (["--impl", " , "], "names no implementation"),
                       (["--", "--reruns=2"], "'--reruns=2' changes outcomes"),
                       (["--", "--impl", "reference"], "'--impl' is not a pass-through option")):
        args = console.build_parser().parse_args(
            ["--impl", "reference", "--report-dir", str(tmp_path / "r"), *argv])
        assert text in console.preflight(args)


def _console(tmp_path, *argv):
    env = {**os.environ, "PYTHONPATH": str(ROOT), "PYTHONHASHSEED": "0"}
    return subprocess.run([sys.executable, "-m", "conformance.console", "--report-dir",
                           str(tmp_path / "reports"), "--expectations", "none", *argv],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)


@pytest.mark.slow
@pytest.mark.parametrize("impl", ["tests.leaks.exit_at_import:IMPL", "tests.leaks.exits:MID_RUN"])
def test_an_implementation_that_exits_the_process_is_red(tmp_path, impl):
    """As tried: an implementation calling os._exit(0) (at import or mid-run):
    torchrl-conformance ... -- --require-complete exited 0 with nothing written."""
    proc = _console(tmp_path, "--impl", impl, "--", "--require-complete")
    assert proc.returncode != 0, proc.stdout[-2000:] + proc.stderr
    assert proc.stderr.strip().splitlines()[-1].startswith(
        "torchrl-conformance: NO VERDICT: the run wrote no results file"), proc.stderr
    # the nox session's parent (python -m conformance.verdict) alike
    env = {**os.environ, "PYTHONPATH": str(ROOT), "PYTHONHASHSEED": "0"}
    proc = subprocess.run([sys.executable, "-m", "conformance.verdict", "--", "conformance",
                           "-p", "no:cacheprovider", "--impl", impl, "--expectations", "none",
                           "--results", str(tmp_path / "n" / "results.json")], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode != 0 and "NO VERDICT" in proc.stderr, proc.stderr[-2000:]


# ------------------------------------------------------------------ 3. nothing that did not run
def test_not_tested_rows_of_a_dead_pytest_never_replace_the_stored_column(tmp_path):
    """As tried: --pytest-args="--timeout=0.5 --timeout-method=thread" (an OOM kill, os._exit
    in TorchRL) killed pytest before it wrote results; a NOT TESTED row for every spec counted
    as complete and replaced reports/upstream/0.14.1.json."""
    rows = [dict(r, outcome="not tested", expected=False, message="NOT TESTED: pytest exited")
            for r in _complete_rows()]
    assert runner.complete_reason(rows) is None  # complete by count ...
    assert not runner.admissible(rows, -9)  # ... and still nothing that ran
    assert not runner.admissible([], 0)
    assert runner.admissible(_complete_rows(), 0)
    results = tmp_path / "upstream" / runner.PARTIAL_FOLDER / "0.14.1.json"
    results.parent.mkdir(parents=True)
    results.write_text("{}")
    assert runner._promote(results, runner.admissible(rows, -9)) == results
    assert not (tmp_path / "upstream" / "0.14.1.json").exists()
