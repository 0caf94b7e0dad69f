"""Every writer goes through one destination rule: never a file of the project, never another kind
of report."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from conformance.reporting import destination
from tests.conftest import ROOT
from tests.rows import PY


@pytest.mark.parametrize("target, stem", [("reports/upstream.json", "upstream"),
                                          ("reports/libraries.json", "libraries"),
                                          ("README.json", "README"),
                                          ("reports/upstream-bugs/x.json", "x")])
def test_a_pytest_run_never_replaces_another_kind_of_report(target, stem):
    """As tried: --results reports/upstream.json replaced the 1.2 MB release matrix."""
    with pytest.raises(destination.DestinationError, match="not a conformance report"):
        destination.check(ROOT / target, stem)


def test_the_reporting_cli_refuses_the_readme_before_building(tmp_path):
    before = (ROOT / "README.md").read_bytes()
    proc = subprocess.run([PY, "-m", "conformance.reporting", "reports/upstream/0.14.1.json",
                           "-o", ".", "--stem", "README"], cwd=ROOT, capture_output=True,
                          text=True, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert proc.returncode == 2 and len(proc.stderr.strip().splitlines()) == 1, proc.stderr
    assert (ROOT / "README.md").read_bytes() == before


def test_dropin_refuses_the_readme_before_running(tmp_path, capsys):
    from conformance.dropin.__main__ import main

    checkout = tmp_path / "rl"
    (checkout / "test").mkdir(parents=True)
    (checkout / "test" / "test_a.py").write_text("def test_a():\n    pass\n")
    before = (ROOT / "README.md").read_bytes()
    assert main([str(checkout), "--target", "test/test_a.py", "--out",
                 str(ROOT / "README.md")]) == 2
    assert "README.md" in capsys.readouterr().err
    assert (ROOT / "README.md").read_bytes() == before


@pytest.mark.parametrize("folder", ["reports", ".", "/", "conformance"])
def test_gate_reports_is_never_a_folder_of_the_project(folder):
    """As tried: GATE_REPORTS=reports deleted the committed reports/."""
    with pytest.raises(destination.DestinationError):
        destination.check_gate_folder(ROOT / folder if folder != "/" else Path("/"))
