"""The results of a source the runner could not install, import or resolve: every spec NOT TESTED.

No pytest run can stand for such a source (the base environment's own torchrl would be tested in
its place), so the runner writes its column itself: one row per test the run would have had
(collected with the reference implementation and renamed), each ``not tested`` and unexpected,
with the reason. The column is there, and the verdict cannot be green.
"""

from __future__ import annotations

import functools
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from conformance import __version__, outcomes, paths, record
from conformance.files import atomic_write

ROOT = paths.ROOT
STAND_IN = "reference"  # always loads: its collection gives the test ids


@functools.lru_cache  # one collection serves every source of a run that was not tested
def _collect(pytest_args: tuple[str, ...]) -> tuple[str, ...]:
    env = {k: v for k, v in os.environ.items() if k != "TORCHRL_CONFORMANCE_IMPL"}
    env.update(PYTHONPATH=str(ROOT), PYTHONHASHSEED="0")
    with tempfile.TemporaryDirectory() as scratch:  # whatever it writes stays out of reports/
        try:
            proc = subprocess.run(
                [sys.executable, "-m", "pytest", "conformance", "--collect-only", "-q",
                 "--impl", STAND_IN, "--expectations", "none", "--no-report",
                 "--results", str(Path(scratch) / "results.json"), "-p", "no:cacheprovider",
                 *pytest_args],
                cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
        except subprocess.TimeoutExpired:
            return ()
    return tuple(line.strip() for line in proc.stdout.splitlines()
                 if "::" in line and f"[{STAND_IN}" in line)


def collect_ids(pytest_args: list[str]) -> list[str]:
    """The node ids of the run, with the stand-in implementation (none if collection fails)."""
    return list(_collect(tuple(pytest_args)))


def _row(nodeid: str, label: str, message: str) -> dict:
    path, _, name = nodeid.partition("::")
    spec, _, params = name.partition("[")
    params = params.removesuffix("]").removeprefix(STAND_IN).removeprefix("-")
    return {
        "nodeid": f"{path}::{spec}[torchrl{'-' + params if params else ''}]",
        "area": Path(path).stem.removeprefix("test_"),
        "spec": spec,
        "parameters": params,
        "implementation": "torchrl",
        "implementation_version": label,
        "outcome": outcomes.NOT_TESTED,
        "expected": False,
        "message": message,
        "reason": None,
        "link": None,
        "defect": None,
        "duration": 0.0,
    }


def write(results: Path, label: str, reason: str, pytest_args: list[str],
          source: dict | None = None) -> None:
    """Write ``results`` for a source that was not tested, one row per test it would have had;
    ``source``: its description (``conformance.record``), None for one never resolved."""
    started = time.time()
    message = f"NOT TESTED: {reason}"
    ids = collect_ids(pytest_args)
    rows = [_row(nodeid, label, message) for nodeid in ids] or [{
        # collection itself failed: one row still carries the column and the reason
        **_row("conformance::every_spec", label, message), "area": "all"}]
    document = {
        "schema": record.SCHEMA,
        "suite": __version__,
        "manifest_digest": record.manifest_digest(),
        # a source never resolved is described by what was given: its kind is not known
        "source": source or record.describe("unresolved", label, None),
        "started": started,
        "finished": time.time(),
        "exitstatus": None,
        "python": platform.python_version(),
        "stack": {},
        "implementations": {"torchrl": label},
        "not_tested": reason,
        "rows": rows,
    }
    atomic_write(results, json.dumps(document, indent=1))
