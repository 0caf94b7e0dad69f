"""Rows and results documents for the self-tests: one complete run's worth of rows per spec of
the committed manifest, as a run of ``impl`` writes them."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from conformance import manifest

PY = sys.executable
SPECS = sorted(manifest.spec_ids())


def spec_row(spec: str, impl: str = "torchrl", outcome: str = "pass", **extra) -> dict:
    nodeid = spec.replace("[", f"[{impl}-", 1) if "[" in spec else f"{spec}[{impl}]"
    path, _, name = nodeid.partition("::")
    return {"nodeid": nodeid, "area": Path(path).stem.removeprefix("test_"),
            "spec": name.partition("[")[0], "parameters": "", "implementation": impl,
            "implementation_version": "0.14.1", "outcome": outcome, "device": "cpu",
            "expected": outcome in ("pass", "known failure"), "message": "", "duration": 0.0,
            **extra}


def write_results(path: Path, rows: list[dict]) -> Path:
    path.write_text(json.dumps({"schema": 1, "started": 1.0, "finished": 2.0, "partial": None,
                                "implementations": {"torchrl": "0.14.1"}, "rows": rows}))
    return path
