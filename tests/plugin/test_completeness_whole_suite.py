"""A run narrowed behind the options' back (an ini option, PYTEST_ADDOPTS, a plug-in that slices
the items) is partial, judged from what ran (whole-suite runs: slow)."""

from __future__ import annotations

import os

import pytest

from conformance.plugin import completeness
from tests.conftest import ROOT, run_suite

PLUGIN = """
def pytest_collection_modifyitems(config, items):
    items[:] = items[:2]  # slices the items without pytest_deselected
"""


@pytest.mark.slow
@pytest.mark.parametrize("how", ["plugin", "addopts"])
def test_a_run_narrowed_behind_the_options_back_is_partial(tmp_path, how):
    """As tried: -o python_functions=..., in PYTEST_ADDOPTS, or a plug-in that slices items
    without pytest_deselected: a few specs ran, exit 0, the full reports replaced."""
    env = {"PYTHONPATH": f"{tmp_path}{os.pathsep}{ROOT}"}
    args = ["conformance", "--impl", "reference", "--require-complete"]
    if how == "plugin":
        (tmp_path / "slicer.py").write_text(PLUGIN)
        args += ["-p", "slicer"]
    else:
        env["PYTEST_ADDOPTS"] = "-o python_functions=test_baselines_counterexample"
    run = run_suite(tmp_path, *args, env=env)
    assert run.returncode == completeness.PARTIAL_EXIT, run.output[-2000:]
    assert "specs have no reference row" in run.output.strip().splitlines()[-1]
    assert run.results is not None and run.results["partial"]
