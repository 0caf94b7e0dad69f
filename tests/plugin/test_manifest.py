"""The committed manifest of spec ids, and a run's completeness judged from its rows against it."""

from __future__ import annotations

import json
import os
import subprocess

from conformance import manifest
from conformance.plugin import completeness
from tests.conftest import ROOT
from tests.rows import PY, SPECS
from tests.rows import spec_row as _row


def test_committed_manifest_is_that_of_the_suite():
    """Fails when a spec is added, removed or renamed without `python -m conformance.manifest`
    (collection only, in a subprocess: about 10 s)."""
    proc = subprocess.run([PY, "-m", "conformance.manifest", "--check"], cwd=ROOT,
                          capture_output=True, text=True, timeout=300,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert proc.returncode == 0, proc.stderr
    document = json.loads(manifest.PATH.read_text())
    assert document["count"] == len(SPECS) == sum(map(len, document["areas"].values()))
    assert list(document["areas"]) == list(manifest.AREAS)


def test_a_stale_manifest_is_one_line_naming_a_spec():
    committed = manifest.load()
    fresh = {a: list(ids) for a, ids in committed.items()}
    fresh["ppo_value_clipping"] = [*fresh["ppo_value_clipping"], "conformance/test_ppo_value_"
                                   "clipping.py::test_new[a=1]"]
    line = manifest.difference(committed, fresh)
    assert line == ("1 spec(s) not in it (e.g. conformance/test_ppo_value_clipping.py::"
                    "test_new[a=1])")
    assert manifest.difference(committed, committed) == ""


def test_spec_ids_drop_the_implementation_only():
    assert manifest.spec_id("conformance/test_x.py::t[torchrl-a=1-b=[torchrl]]", "torchrl") == \
        "conformance/test_x.py::t[a=1-b=[torchrl]]"
    assert manifest.spec_id("conformance/test_x.py::t[torchrl]", "torchrl") == \
        "conformance/test_x.py::t"
    assert manifest.spec_id("conformance/test_x.py::t[reference]", "torchrl") == \
        "conformance/test_x.py::t[reference]"  # another implementation's row never matches


def test_complete_rows_need_every_spec_for_every_implementation_on_the_device():
    rows = [_row(s, impl) for impl in ("reference", "torchrl") for s in SPECS]
    assert completeness.rows_reason(rows, ["reference", "torchrl"], "cpu") is None
    reason = completeness.rows_reason(rows[:15], ["reference", "torchrl"], "cpu")
    assert f"{len(SPECS) - 15} of {len(SPECS)} specs have no reference row" in reason
    assert f"{len(SPECS)} of {len(SPECS)} specs have no torchrl row" in reason
    assert "another device" in completeness.rows_reason(rows, ["reference", "torchrl"], "cuda")
    stray = [*rows, _row("conformance/test_x.py::t_new", "torchrl")]
    assert "not in conformance/manifest.json" in completeness.rows_reason(
        stray, ["reference", "torchrl"], "cpu")
    # rows whose outcome is missing (a test that never finished) are no rows
    unfinished = [{**r, "outcome": None} if i == 3 else r for i, r in enumerate(rows)]
    assert "1 of" in completeness.rows_reason(unfinished, ["reference", "torchrl"], "cpu")
