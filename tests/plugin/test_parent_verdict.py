"""A parent reads the verdict (conformance/parent.py): the console script and nox -s
conformance run the specs in a child and judge from the results file that child wrote
(issue #44); an implementation that ends the process is red, never 0."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

import pytest

from conformance import parent as verdict
from conformance.plugin.completeness import PARTIAL_EXIT
from tests.conftest import ROOT
from tests.manifest_rows import complete_rows as _complete_rows


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
        0, f"conformant to expectations: no unexpected result ({len(_complete_rows())} rows, {results})")
    _write(results, _complete_rows()[:-1])  # one spec short, not flagged partial by the child
    code, line = verdict.judge(where, since, 0)
    assert code == PARTIAL_EXIT and "have no torchrl row" in line
    _write(where[1], _complete_rows(), partial="filtered with -k 'ppo'")
    code, line = verdict.judge(where, since, 0)
    assert code == PARTIAL_EXIT and line == ("PARTIAL RUN: not a conformance verdict (filtered "
                                             "with -k 'ppo')")
    bad = _complete_rows()[:-1]  # a partial run in which a spec failed: red, not "no verdict"
    bad[0].update(outcome="fail", expected=False)
    _write(where[1], bad, partial="filtered with -k 'ppo'")
    code, line = verdict.judge(where, since, 0)
    assert code == 1 and line.startswith(
        "NOT CONFORMANT: 1 unexpected result(s) in a PARTIAL RUN (filtered with -k 'ppo'")
    rows = _complete_rows()
    rows[3].update(outcome="not tested", expected=False)
    _write(results, rows)
    where[1].unlink()
    code, line = verdict.judge(where, since, 0)
    assert code == 1 and line.startswith("NOT CONFORMANT: 1 unexpected result(s), 1 NOT TESTED")


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
    # the nox session's parent (python -m conformance.parent) alike
    env = {**os.environ, "PYTHONPATH": str(ROOT), "PYTHONHASHSEED": "0"}
    proc = subprocess.run([sys.executable, "-m", "conformance.parent", "--", "conformance",
                           "-p", "no:cacheprovider", "--impl", impl, "--expectations", "none",
                           "--results", str(tmp_path / "n" / "results.json")], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode != 0 and "NO VERDICT" in proc.stderr, proc.stderr[-2000:]


def test_the_parent_drops_pytest_arguments_from_the_environment(tmp_path, monkeypatch):
    """PYTEST_ADDOPTS="--results elsewhere.json" (or "--log-file=README.md") reached the
    console's pytest; a verdict's arguments are its own."""
    seen = {}

    def fake_run(command, env, cwd):
        seen.update(env=env)
        return subprocess.CompletedProcess(command, 0)

    monkeypatch.setattr(verdict.subprocess, "run", fake_run)
    monkeypatch.setenv("PYTEST_ADDOPTS", "--log-file=README.md")
    monkeypatch.setenv("PYTEST_PLUGINS", "evil")
    code = verdict.run_judged(["pytest"], [tmp_path / "results.json"], prog="x")
    assert code == 1  # exit code 0 and no results file: red
    assert "PYTEST_ADDOPTS" not in seen["env"] and "PYTEST_PLUGINS" not in seen["env"]
