"""Rows of a complete run of the committed manifest, for self-tests of who may write a record."""

from __future__ import annotations

from conformance import manifest


def complete_rows(impl: str = "torchrl", version: str = "0.14.1") -> list[dict]:
    """Every spec of the committed manifest, passing, for ``impl``."""
    rows = []
    for spec in sorted(manifest.spec_ids()):
        head, bracket, params = spec.partition("[")
        inside = f"{impl}-{params.removesuffix(']')}" if bracket else impl
        path, _, name = head.partition("::")
        rows.append({"nodeid": f"{head}[{inside}]", "implementation": impl,
                     "area": path.split("/")[-1].removeprefix("test_").removesuffix(".py"),
                     "spec": name, "parameters": params.removesuffix("]"), "duration": 0.0,
                     "implementation_version": version, "device": "cpu", "outcome": "pass",
                     "expected": True, "message": ""})
    return rows
