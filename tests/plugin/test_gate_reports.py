"""Reports (issue #22, item 6): a run's report is built from its own rows; the results path is
checked before the first spec; a write failure is one line and replaces nothing."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from conformance.files import replace_all
from conformance.reporting import destination
from tests.conftest import ROOT, run_suite

PPO = "conformance/test_ppo_value_clipping.py"
QUICK = [PPO, "--impl", "reference", "-k", "counterexample"]


@pytest.mark.slow
@pytest.mark.parametrize("target, message", [
    ("README.json", "README.md is a file of the project, not a conformance report"),
    ("pyproject.json", None),  # no sibling of that name: fine
    ("/proc/x.json", "cannot write in /proc"),
    ("/sys/x.json", "cannot write in /sys"),
])
def test_the_results_path_is_checked_before_any_spec(tmp_path, target, message):
    """As tried: --results on a read-only or /proc path ran every spec, then a traceback;
    --results README.json overwrote README.md with the report."""
    if message is None:
        destination.check(ROOT / target, "pyproject")
        return
    readme = (ROOT / "README.md").read_bytes()
    proc = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", *QUICK,
                           "--results", target], cwd=ROOT, capture_output=True, text=True,
                          timeout=600)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 4, out[-2000:]
    assert out.strip().splitlines() == [f"ERROR: --results {target}: " + out.split(": ", 2)[2]
                                         .strip()] and message in out
    assert "passed" not in out and (ROOT / "README.md").read_bytes() == readme


def test_a_directory_or_foreign_sibling_is_refused(tmp_path):
    (tmp_path / "r.md").write_text("# my notes\n")
    with pytest.raises(destination.DestinationError, match="r.md exists and is not"):
        destination.check(tmp_path / "r.json", "r")
    (tmp_path / "r.md").unlink()
    (tmp_path / "r.html").mkdir()
    with pytest.raises(destination.DestinationError, match="r.html is a directory"):
        destination.check(tmp_path / "r.json", "r")


@pytest.mark.slow
def test_a_write_failure_after_the_specs_is_one_line_and_keeps_the_old_set(tmp_path):
    out = tmp_path / "out" / "r.json"
    first = run_suite(tmp_path, *QUICK, "--results", str(out))
    assert first.returncode == 0
    before = {p.name: p.read_bytes() for p in out.parent.iterdir()}
    assert sorted(before) == ["r.csv", "r.html", "r.json", "r.md"]
    proc = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", *QUICK,
                           "--results", str(out), "-p", "tests.leaks.spoil_results"],
                          cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 4, proc.stdout[-2000:]
    errors = [line for line in proc.stdout.splitlines() if line.startswith("ERROR")]
    assert errors == [f"ERROR: results and reports not written ({out.parent}): "
                      "IsADirectoryError: Is a directory"], proc.stdout[-2000:]
    assert "Traceback" not in proc.stdout + proc.stderr
    after = {p.name: p.read_bytes() for p in out.parent.iterdir()
             if p.is_file() and not p.name.startswith(".")}
    assert after == {k: v for k, v in before.items() if k != "r.csv"}  # nothing replaced
    assert not [p for p in out.parent.iterdir() if p.name.startswith(".")]  # no leftovers


def test_replace_all_puts_the_old_set_back_when_one_file_fails(tmp_path):
    for name in ("a", "b"):
        (tmp_path / name).write_text("old")
    (tmp_path / "c").mkdir()
    with pytest.raises(IsADirectoryError):
        replace_all({tmp_path / "a": "new", tmp_path / "b": "new", tmp_path / "c": "new"})
    assert (tmp_path / "a").read_text() == (tmp_path / "b").read_text() == "old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a", "b", "c"]


@pytest.mark.slow
def test_a_run_builds_its_report_from_its_own_rows_not_from_the_shared_file(tmp_path):
    """As tried: two runs into the default path at once; one's report was rebuilt from the file
    the other had just written. The report is rendered from the run's document in memory."""
    out = tmp_path / "r.json"
    run = run_suite(tmp_path, *QUICK, "--results", str(out))
    doc = json.loads(out.read_text())
    other = dict(doc, rows=[dict(r, implementation="someone-else") for r in doc["rows"]])
    from conformance.reporting.matrix import render_reports

    texts = render_reports([doc], tmp_path, stem="r")
    out.write_text(json.dumps(other))  # another run rewrote the file meanwhile
    assert texts == render_reports([doc], tmp_path, stem="r")  # built from memory, not disk
    assert run.returncode == 0 and "someone-else" not in (tmp_path / "r.md").read_text()
