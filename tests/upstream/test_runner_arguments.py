"""The upstream runner's arguments: what it owns is refused in one line, narrowing and display pass
through."""

from __future__ import annotations

import subprocess

import pytest

from conformance.upstream import passthrough, runner, sources
from tests.conftest import ROOT
from tests.rows import PY, SPECS
from tests.rows import spec_row as _row


@pytest.mark.parametrize("args", [
    "--impl reference", "--impl=reference", "--imp reference", "--results reports/upstream.json",
    "--expectations none", "--device cpu", "--spec-timeout 0", "--no-report", "-p no:x",
    "-pno:conformance-results", "-qp no:x", "-vvp no:x", "-c other.ini", "-cother.ini",
    "--config-file=other.ini", "-o python_files=x.py", "-oxx=y", "--override-ini=a=b",
    "--rootdir .", "--rootdir=/", "--confcutdir /", "--noconftest", "--pyargs conformance",
    "--import-mode=append", "--basetemp /tmp/x", "--junitxml x.xml", "tests", "/tmp",
    "conformance/../tests", "-- conformance", "@args.txt", "@conformance/args.txt",
    "'--impl reference'", "-xpno:conformance-watchdog", "-o=python_files=x", "--overr=a=b",
    "--root .", "--pdb", "-kppo -p no:x"])
def test_arguments_the_runner_owns_are_a_one_line_usage_error(args, capsys):
    """As tried: `nox -s upstream -- 0.14.1 --pytest-args "--impl reference"` labelled 257
    reference rows torchrl 0.14.1, conformant, exit 0."""
    with pytest.raises(SystemExit) as info:
        runner.parse_args(["0.14.1", f"--pytest-args={args}"])
    assert info.value.code == 2
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert line.startswith("nox -s upstream --: error: --pytest-args: "), line


@pytest.mark.parametrize("args", [["-k", "ppo and not tanh"], ["-kprioritized"], ["-x"],
                                  ["-q", "-rN"], ["conformance/test_ppo_value_clipping.py"],
                                  ["conformance/test_x.py::t[torchrl-a]"], ["--tb=short"]])
def test_narrowing_and_display_arguments_still_pass_through(args):
    passthrough.check(args, ROOT)  # they make a run partial (or change only its output)


def test_the_runner_keeps_pytest_arguments_out_of_the_environment(monkeypatch, tmp_path):
    seen = {}

    def fake_run(args, cwd, env):
        seen.update(args=args, env=env)
        return subprocess.CompletedProcess(args, 0)

    monkeypatch.setattr(runner.subprocess, "run", fake_run)
    monkeypatch.setenv("PYTEST_ADDOPTS", "--impl reference -o python_files=x.py")
    monkeypatch.setenv("PYTEST_PLUGINS", "evil")
    source = sources.parse("0.14.1")
    runner.run_source(source, "0.14.1", PY, "", [], [], tmp_path / "r.json")
    assert "PYTEST_ADDOPTS" not in seen["env"] and "PYTEST_PLUGINS" not in seen["env"]
    assert seen["args"][seen["args"].index("--impl") + 1] == "torchrl"
    assert seen["args"][seen["args"].index("-c") + 1] == str(ROOT / "pyproject.toml")


def test_rows_of_another_implementation_are_no_torchrl_verdict():
    rows = [_row(s, "reference") for s in SPECS]
    passed, text = runner.verdict(rows, 0)
    assert not passed and text.startswith("NOT TESTED: the rows are of reference"), text
