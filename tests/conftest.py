"""Helpers for the self-tests: run the conformance suite the way a user does, in a subprocess."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from conformance.paths import ROOT


@dataclass
class SuiteRun:
    returncode: int
    output: str
    results: dict | None

    def rows(self, **where) -> list[dict]:
        rows = (self.results or {}).get("rows", [])
        return [r for r in rows if all(r.get(k) == v for k, v in where.items())]

    def outcomes(self) -> dict[str, str]:
        return {r["nodeid"]: r["outcome"] for r in self.rows()}


#: whether the running self-test is marked ``slow`` (set before each test's setup)
_RUNNING = {"slow": True}


def pytest_collection_modifyitems(config, items):
    """A test that takes the ``suite`` fixture runs the suite in a subprocess: it is slow."""
    for item in items:
        if "suite" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.slow)


def pytest_runtest_setup(item):
    # before any fixture of the test is set up: a module-scoped fixture that runs the suite is
    # run for (and checked against) the first test that needs it
    _RUNNING["slow"] = item.get_closest_marker("slow") is not None


def pytest_runtest_teardown(item):
    _RUNNING["slow"] = True


def run_suite(tmp_path: Path, *args: str, env: dict | None = None) -> SuiteRun:
    """``python -m pytest conformance/... ARGS`` from the project root; results in tmp_path.

    Only a test marked ``slow`` may do this: ``nox -s tests_fast`` relies on the mark."""
    if not _RUNNING["slow"]:
        raise AssertionError("this self-test runs the whole suite in a subprocess: mark it "
                             "@pytest.mark.slow (nox -s tests_fast leaves slow tests out)")
    results = tmp_path / "results.json"
    cmd = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", "--tb=short",
           "--results", str(results), *args]
    # what the suite runs on is what the self-test says, not what the shell exported
    full_env = {k: v for k, v in os.environ.items()
                if k not in ("TORCHRL_CONFORMANCE_IMPL", "TORCHRL_CONFORMANCE_DEVICE")}
    full_env.update(env or {})
    proc = subprocess.run(cmd, cwd=ROOT, env=full_env, capture_output=True, text=True,
                          timeout=900)
    data = json.loads(results.read_text()) if results.exists() else None
    return SuiteRun(proc.returncode, proc.stdout + proc.stderr, data)


@pytest.fixture
def suite(tmp_path):
    def run(*args, env=None):
        return run_suite(tmp_path, *args, env=env)

    return run


def assert_mutant_caught(run: SuiteRun, spec_file: str, *, bug: str, min_failures: int = 1,
                         implementation: str | None = None):
    """The mutant's run must fail, with at least ``min_failures`` failing specs of
    ``spec_file`` (of ``implementation`` when several share the run) whose message names ``bug``."""
    __tracebackhide__ = True
    assert run.returncode == 1, f"the suite did not fail on the mutant:\n{run.output[-3000:]}"
    where = {"outcome": "fail"} if implementation is None else {
        "outcome": "fail", "implementation": implementation}
    failing = [r for r in run.rows(**where) if r["nodeid"].startswith(spec_file)]
    naming = [r for r in failing if bug in r["message"]]
    assert len(naming) >= min_failures, (
        f"expected >= {min_failures} failures of {spec_file} naming {bug!r}; got "
        f"{len(failing)} failures:\n" + "\n".join(f"{r['nodeid']}: {r['message'][:200]}" for r in failing)
    )
    return failing
