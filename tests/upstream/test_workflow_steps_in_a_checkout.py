"""The workflows' steps and ``nox -s bisect`` run as written INSIDE a checkout (issue #44, item
3): the destination rule refused the merge step's ``-o reports --stem upstream`` and the
bisect's own work folder (``.nox/_upstream/bisect-reports``), which the self-tests missed by
running them elsewhere. Here they run in a copy of the checkout (its package, pyproject,
noxfile and an empty ``reports/``), so the copy is the checkout the rule protects."""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tests.conftest import ROOT
from tests.manifest_rows import complete_rows as _complete_rows

WORKFLOWS = ROOT / ".github" / "workflows"


@pytest.fixture
def checkout(tmp_path) -> Path:
    copy = tmp_path / "checkout"
    shutil.copytree(ROOT / "conformance", copy / "conformance",
                    ignore=shutil.ignore_patterns("__pycache__"))
    for name in ("pyproject.toml", "noxfile.py"):
        shutil.copy(ROOT / name, copy / name)
    (copy / "reports").mkdir()
    shim = tmp_path / "bin" / "python"  # the workflow's `python`: this one
    shim.parent.mkdir()
    shim.write_text(f'#!/bin/sh\nexec "{sys.executable}" "$@"\n')
    shim.chmod(0o755)
    return copy


def _env(checkout: Path) -> dict:
    shim = checkout.parent / "bin"
    return {**os.environ, "PATH": f"{shim}{os.pathsep}{os.environ['PATH']}",
            "PYTHONPATH": str(checkout), "PYTHONHASHSEED": "0"}


def _step(workflow: str, job: str, needle: str) -> str:
    steps = yaml.safe_load((WORKFLOWS / workflow).read_text())["jobs"][job]["steps"]
    (run,) = [s["run"] for s in steps if needle in s.get("run", "")]
    return run


def _source(checkout: Path, label: str, rows: list[dict]) -> Path:
    path = checkout / "reports" / "upstream" / f"{label}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"schema": 1, "started": 1_790_000_000.0,
                                "finished": 1_790_000_100.0, "partial": None,
                                "implementations": {"torchrl": label}, "rows": rows}))
    return path


def test_the_merge_step_runs_inside_a_checkout(checkout):
    """As tried: `python -m conformance.reporting ... -o reports --stem upstream` was refused
    inside a checkout: the scheduled workflow would fail."""
    _source(checkout, "0.14.1", _complete_rows(version="0.14.1"))
    proc = subprocess.run(["bash", "-euo", "pipefail", "-c",
                           _step("upstream-matrix.yml", "merge", "conformance.reporting")],
                          cwd=checkout, env=_env(checkout), capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert (checkout / "reports" / "upstream.md").read_text().startswith("## ")


def test_the_merge_step_takes_no_column_from_what_did_not_run(checkout):
    """A file of NOT TESTED rows only (a pytest that died) is never a column of the matrix."""
    _source(checkout, "0.14.1", _complete_rows(version="0.14.1"))
    dead = [dict(r, outcome="not tested", expected=False, message="NOT TESTED: pytest died")
            for r in _complete_rows(version="0.13.3")]
    _source(checkout, "0.13.3", dead)
    proc = subprocess.run(["bash", "-euo", "pipefail", "-c",
                           _step("upstream-matrix.yml", "merge", "conformance.reporting")],
                          cwd=checkout, env=_env(checkout), capture_output=True, text=True)
    assert proc.returncode == 2
    (line,) = proc.stderr.strip().splitlines()
    assert line.endswith("0.13.3.json: not a column of the upstream matrix: every row is NOT "
                         "TESTED: nothing ran"), line
    assert not (checkout / "reports" / "upstream.md").exists()


def test_the_dashboard_step_runs_inside_a_checkout(checkout):
    _source(checkout, "0.14.1", _complete_rows(version="0.14.1"))
    run = _step("upstream-matrix.yml", "merge", "conformance.dashboard")
    command = next(line for line in run.splitlines() if "conformance.dashboard" in line)
    proc = subprocess.run(shlex.split(command), cwd=checkout, env=_env(checkout),
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert (checkout / "site" / "index.html").is_file()


def test_the_watch_records_its_history_where_the_workflow_caches_it(checkout):
    """As tried: the watch's runner wrote its record under --reports-dir (.watch-reports/
    history) while the workflow cached reports/history: it never reached the dashboard."""
    data = yaml.safe_load((WORKFLOWS / "nightly-watch.yml").read_text())
    steps = data["jobs"]["watch"]["steps"]
    cached = {s["with"]["path"] for s in steps if "actions/cache/save" in str(s.get("uses"))}
    run = next(s["run"] for s in steps if s.get("id") == "nightly")
    text = run.replace("\\\n", " ")
    line = next(ln for ln in text.splitlines() if "conformance.upstream.runner" in ln)
    argv = shlex.split(line)[3:]  # after `python -m conformance.upstream.runner`
    code = ("import sys; from conformance.upstream import runner; "
            "a = runner.parse_args(sys.argv[1:]); "
            "print((a.history_dir or a.reports_dir / 'history').as_posix())")
    proc = subprocess.run([sys.executable, "-c", code, *argv], cwd=checkout, env=_env(checkout),
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() in cached, (proc.stdout, cached)


def test_nox_bisect_is_not_refused_its_own_work_folder(checkout, tmp_path):
    """As tried: `nox -s bisect` stopped at once: its work folder .nox/_upstream/bisect-reports
    "is a file of the project, not a upstream report"."""
    repo = tmp_path / "rl"
    repo.mkdir()
    git = ["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run([*git, "init", "-q"], check=True)
    subprocess.run([*git, "commit", "-q", "--allow-empty", "-m", "one"], check=True)
    proc = subprocess.run([sys.executable, "-m", "conformance.upstream.bisect", "--repo",
                           str(repo), "--good", "HEAD", "--bad", "HEAD",
                           "conformance/test_interface.py"], cwd=checkout, env=_env(checkout),
                          capture_output=True, text=True, timeout=300)
    # past the runner's arguments and destination rule: the bisect itself answers
    assert proc.returncode == 1, proc.stderr
    assert proc.stderr.strip() == "bisect: no commits between HEAD and HEAD", proc.stderr
