"""A partial run (filtered, interrupted, results elsewhere) never passes for the full report."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import pytest

from tests.conftest import ROOT, run_suite

PPO = "conformance/test_ppo_value_clipping.py"


def _ctrl_c_reaches_the_child():
    """A shell's background job starts with SIGINT ignored (no job control), and a child inherits
    that: Python then installs no KeyboardInterrupt handler at all. Give the child the default,
    as a terminal's foreground job has it."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def test_filtered_run_says_partial_in_results_and_report(suite, tmp_path):
    run = suite(PPO, "--impl", "reference", "-k", "counterexample")
    assert run.returncode == 0, run.output[-2000:]
    # the options say why, and the rows say how short of the manifest the run is
    assert run.results["partial"].startswith("filtered with -k 'counterexample'; selected: "
                                             + PPO + "; ")
    assert "specs have no reference row" in run.results["partial"]
    md = (tmp_path / "conformance.md").read_text()
    assert "PARTIAL RUN — not a conformance verdict" in md and "conformant to expectations" in md


@pytest.mark.slow
def test_results_elsewhere_get_their_own_report(tmp_path):
    target = tmp_path / "x.json"
    cmd = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", PPO, "--impl",
           "reference", "-k", "counterexample", "--results", str(target)]
    proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout[-2000:]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["x.csv", "x.html", "x.json", "x.md"]


def test_results_directory_is_a_usage_error_before_any_test(suite, tmp_path):
    run = run_suite(tmp_path, PPO, "--impl", "reference", "--results", str(tmp_path))
    assert run.returncode == 4, run.output[-2000:]
    assert f"--results {tmp_path}: is a directory" in run.output
    assert " passed" not in run.output


@pytest.mark.slow
def test_interrupted_run_keeps_what_ran_and_says_so(tmp_path):
    """Ctrl-C in the middle of a run: the tests that finished are kept, marked partial."""
    results = tmp_path / "results.json"
    cmd = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-v", PPO, "--impl",
           "reference,tests.mutants.hangs:SLEEPS", "--results", str(results)]
    proc = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            text=True, env={**os.environ, "PYTHONUNBUFFERED": "1"},
                            preexec_fn=_ctrl_c_reaches_the_child)
    lines = []
    deadline = time.monotonic() + 300
    for line in proc.stdout:  # the reference passes a test, then a sleeping test is under way
        lines.append(line)
        if "PASSED" in line or time.monotonic() > deadline:
            break
    time.sleep(1)
    proc.send_signal(signal.SIGINT)
    out = proc.communicate(timeout=120)[0]
    assert proc.returncode == 2, "".join(lines) + out
    document = json.loads(results.read_text())
    assert document["partial"].startswith("interrupted"), document["partial"]
    assert document["rows"], "the tests that finished before Ctrl-C were lost"
    assert "PARTIAL RUN" in (tmp_path / "conformance.md").read_text()


@pytest.mark.slow
def test_ctrl_c_that_python_swallows_still_stops_the_run(tmp_path):
    """SIGINT landing in a finalizer: Python drops the KeyboardInterrupt; the run stops anyway,
    at the next test, and keeps what finished."""
    results = tmp_path / "results.json"
    cmd = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", PPO, "--impl",
           "tests.mutants.hangs:CTRL_C_IN_FINALIZER", "-k", "match_baselines",
           "--results", str(results)]
    proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=600,
                          preexec_fn=_ctrl_c_reaches_the_child)
    out = proc.stdout + proc.stderr
    assert "KeyboardInterrupt" in out and "Exception ignored" in out, out[-3000:]
    assert proc.returncode == 2, out[-3000:]
    document = json.loads(results.read_text())
    assert document["partial"].startswith("interrupted"), document["partial"]
    assert len(document["rows"]) == 1, document["rows"]  # of six selected


def test_nox_gives_an_interrupted_run_time_to_write_what_finished():
    """nox kills a command 0.3 s after forwarding Ctrl-C unless told otherwise: a Ctrl-C of
    `nox -s conformance` then lost every result (measured: nothing written; with the grace,
    the 90 tests that had finished went to reports/partial/)."""
    import ast

    tree = ast.parse((ROOT / "noxfile.py").read_text())
    grace = next(node.value.value for node in tree.body if isinstance(node, ast.Assign)
                 and any(getattr(t, "id", "") == "INTERRUPT_GRACE" for t in node.targets))
    assert grace >= 10
    run = next(node for node in tree.body if isinstance(node, ast.FunctionDef)
               and node.name == "_run")
    assert "interrupt_timeout" in ast.unparse(run), "_run no longer passes interrupt_timeout"
