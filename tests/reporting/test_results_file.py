"""Results files: any text survives the write, a hostile or absurd file is a one-line error when
read, and a document of schema 1 is read as schema 2 (the versioned reader)."""

from __future__ import annotations

import json
import os
import subprocess

import pytest

from conformance import record
from conformance.plugin.results import encodable
from tests.conftest import ROOT
from tests.rows import PY, SPECS
from tests.rows import spec_row as _row
from tests.rows import write_results as _results


def test_a_lone_surrogate_in_a_message_survives(tmp_path):
    """As tried: a message holding "\\ud800" lost all 273 rows."""
    from conformance.reporting.matrix import render_reports

    rows = [_row(SPECS[0], outcome="fail", message="bad \ud800 text")]
    document = encodable({"schema": 1, "started": 1.0, "finished": 2.0, "partial": None,
                          "rows": rows})
    for text in render_reports([document], tmp_path).values():
        text.encode("utf-8")
    assert "\\ud800" in document["rows"][0]["message"]
    json.dumps(document).encode("utf-8")


@pytest.mark.parametrize("row_change", [{"message": ["x"]}, {"outcome": 3},
                                        {"expected": "yes"}, {"nodeid": None},
                                        {"duration": "long"}])
def test_hostile_rows_are_one_line_errors(tmp_path, row_change):
    path = _results(tmp_path / "r.json", [{**_row(SPECS[0]), **row_change}])
    proc = subprocess.run([PY, "-m", "conformance.reporting", str(path), "-o",
                           str(tmp_path / "out")], cwd=ROOT, capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert proc.returncode == 2 and len(proc.stderr.strip().splitlines()) == 1, proc.stderr
    assert not (tmp_path / "out").exists()


def test_deeply_nested_results_are_one_line(tmp_path):
    path = tmp_path / "deep.json"
    path.write_text("[" * 200_000 + "]" * 200_000)
    proc = subprocess.run([PY, "-m", "conformance.reporting", str(path), "-o",
                           str(tmp_path / "out")], cwd=ROOT, capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.strip().splitlines() == [
        f"python -m conformance.reporting: error: {path}: JSON nested too deeply, not a "
        "results file"]


def _v1_document() -> dict:
    """A results document as schema 1 wrote it: no source, a known failure's expectation at
    the end of its message."""
    rows = [_row(SPECS[0]), _row(SPECS[1], outcome="known failure", message=(
        "AssertionError: x\n  see: https://a/b  [known failure: the reason (with a parenthesis) "
        "(https://github.com/pytorch/rl/issues/1)]")),
        _row(SPECS[2], outcome="known failure", message=(
            "RuntimeError: y  [known failure: other (https://github.com/pytorch/rl/pull/2); "
            "--runxfail]"))]
    return {"schema": 1, "started": 1.0, "finished": 2.0, "partial": None,
            "implementations": {"torchrl": "0.14.0+git.ae9719f"},
            "stack": {"torchrl": "git ae9719f"}, "rows": rows}


def test_a_schema_1_document_is_read_as_schema_2(tmp_path):
    from conformance import record
    from conformance.reporting.results_file import read

    path = tmp_path / "old.json"
    path.write_text(json.dumps(_v1_document()))
    document = read(path)
    assert document["schema"] == record.SCHEMA == 2
    assert document["source"] == record.describe("git", "0.14.0+git.ae9719f", "0.14.0")
    assert document["manifest_digest"] is None
    plain, known, runxfail = document["rows"][:3]
    assert (plain["reason"], plain["link"], plain["defect"]) == (None, None, None)
    assert (known["reason"], known["link"]) == ("the reason (with a parenthesis)",
                                                "https://github.com/pytorch/rl/issues/1")
    assert known["message"] == "AssertionError: x\n  see: https://a/b"
    assert (runxfail["reason"], runxfail["message"]) == ("other", "RuntimeError: y  [--runxfail]")
    # the file itself is not touched
    assert json.loads(path.read_text())["schema"] == 1


@pytest.mark.parametrize("label, kind, version, date", [
    ("0.13.3", "release", "0.13.3", None), ("0.14.0+checkout", "checkout", "0.14.0", None),
    ("nightly-2026.7.8", "nightly", "2026.7.8", "2026-07-08"),
    ("unresolved-typo", "unresolved", None, None)])
def test_a_schema_1_documents_source_is_what_its_column_says(label, kind, version, date):
    from conformance.reporting.results_file import upgrade

    document = {**_v1_document(), "implementations": {"torchrl": label}, "stack": {}}
    source = upgrade(document)["source"]
    assert (source["kind"], source["label"], source["version"], source["date"]) == (
        kind, label, version, date)


def test_the_committed_results_are_schema_2_and_describe_their_source():
    from conformance import record
    from conformance.paths import REPORTS
    from conformance.reporting.results_file import read

    for path in sorted((REPORTS / "upstream").glob("*.json")):
        assert json.loads(path.read_text())["schema"] == 2, path.name
        source = read(path)["source"]
        assert source["label"] == path.stem and source["kind"] in record.KINDS, path.name
        assert source["argument"], path.name


def test_a_recorded_kind_is_compared_in_one_place():
    """Consumers ask record.of_kind / is_nightly / is_release, whatever holds the kind: a
    description dict, an object with ``kind`` or the kind itself; a misspelt kind is an error,
    never a silent False."""
    from types import SimpleNamespace

    nightly = record.describe("nightly", "nightly-2026.10.27", "2026.10.27", date="2026-10-27")
    assert record.is_nightly(nightly) and not record.is_release(nightly)
    assert record.is_release(SimpleNamespace(kind="release"))
    assert record.of_kind("git", "git") and not record.of_kind(None, "git")
    assert not record.is_nightly({"kind": "library"})  # a dashboard column of another library
    with pytest.raises(ValueError, match="'nighty' is not a source kind"):
        record.of_kind(nightly, "nighty")
