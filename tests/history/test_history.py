"""The history store (conformance/history.py): a complete run recorded once and never rewritten,
what is not a complete run refused in one line, what a record keeps of its document (source,
suite, manifest digest, each known failure's defect), and records of schema 1 read as schema 2."""

from __future__ import annotations

import json

import pytest

from conformance import history, record
from tests.manifest_rows import complete_rows


def _complete(label: str, changes: dict | None = None) -> tuple[list[dict], list[str]]:
    """A complete torchrl run of the committed manifest (the only run the store admits), with
    the rows at the given positions updated; and the node ids in order."""
    rows = complete_rows(version=label)
    for index, change in (changes or {}).items():
        rows[index].update(change)
    return rows, [r["nodeid"] for r in rows]


def _results(folder, label, rows, partial=None, started=1_790_000_000.0):
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{label}.json"
    path.write_text(json.dumps({"schema": 1, "started": started,
                                "finished": started + 5 if isinstance(started, float) else started,
                                "partial": partial, "rows": rows}), encoding="utf-8")
    return path


def test_history_records_a_complete_run_once_and_never_rewrites_it(tmp_path):
    label = "nightly-2026.7.8"
    rows, ids = _complete(label, {1: {"outcome": "fail", "expected": False, "message": "boom\nmore"}})
    results = _results(tmp_path / "up", label, rows)
    store = tmp_path / "history"
    path = history.record(results, {"argument": "nightly:2026.7.8", "status": "1 unexpected"}, store,
                          commit="abc")
    entry = json.loads(path.read_text())
    assert path.name == f"{label}@20260921T141320Z.json"
    assert entry["cells"][ids[1]] == {"o": "fail", "m": "boom", "u": 1}
    assert entry["source"]["argument"] == "nightly:2026.7.8" and entry["suite_commit"] == "abc"
    assert history.record(results, None, store, commit="abc") == path  # the same run: no change
    # another run under the same name is refused: append-only
    _results(tmp_path / "up", label, _complete(label, {0: {"outcome": "fail", "expected": False}})[0])
    with pytest.raises(history.HistoryError, match="append-only"):
        history.record(results, None, store, commit="abc")
    assert json.loads(path.read_text()) == entry


@pytest.mark.parametrize("case, why", [
    ("partial", "partial run"), ("not tested", "not tested: NOT TESTED: no wheel"),
    ("unresolved", "never resolved"), ("other label", "not of"),
    # issue #44: only a complete run of the manifest by torchrl alone
    ("one row", "not a complete run of the manifest .*have no torchrl row"),
    ("reference only", "rows are of reference: the history holds torchrl runs only"),
    ("ids outside the manifest", "not a complete run of the manifest .*not in conformance/manifest"),
    ("started NaN", "started: nan is not a time"),
    ("started text", "started' is missing or not a time"),
])
def test_history_refuses_what_is_not_a_complete_run(tmp_path, case, why):
    """As tried (#44): a one-row file, a reference-only file and 49 500 rows of ids outside the
    manifest were recorded; ``started: NaN`` was a traceback."""
    label = "unresolved-typo" if case == "unresolved" else "nightly-2026.7.8"
    rows, _ = _complete(label)
    started = 1_790_000_000.0
    if case == "not tested":
        rows[1].update(outcome="not tested", expected=False, message="NOT TESTED: no wheel")
    if case == "other label":
        rows = [dict(r, implementation_version="0.14.1") for r in rows]
    if case == "one row":
        rows = rows[:1]
    if case == "reference only":
        rows = [dict(r, implementation="reference", nodeid=r["nodeid"].replace("[torchrl", "[reference"))
                for r in rows]
    if case == "ids outside the manifest":
        rows += [dict(rows[0], nodeid=f"conformance/test_x.py::test_{i}[torchrl]") for i in range(100)]
    if case == "started NaN":
        started = float("nan")
    if case == "started text":
        started = "yesterday"
    results = _results(tmp_path / "up", label, rows, partial="-k narrowed" if case == "partial" else None,
                       started=started)
    with pytest.raises(history.HistoryError, match=why) as info:
        history.record(results, None, tmp_path / "history", commit="abc")
    assert "\n" not in str(info.value)
    assert not (tmp_path / "history").exists()


def test_a_record_keeps_what_its_document_says_it_tested(tmp_path):
    label = "nightly-2026.7.8"
    rows, ids = _complete(label, {1: {"outcome": "known failure", "message": "AssertionError: x",
                                      "reason": "why", "link": "https://x/1",
                                      "defect": "some-defect"}})
    results = tmp_path / "up" / f"{label}.json"
    results.parent.mkdir(parents=True)
    described = record.describe("nightly", label, "2026.7.8", date="2026-07-08",
                                argument="nightly:2026.7.8")
    results.write_text(json.dumps({"schema": 2, "started": 1_790_000_000.0,
                                   "finished": 1_790_000_005.0, "partial": None, "suite": "9.9",
                                   "manifest_digest": "d" * 64, "source": described,
                                   "rows": rows}), encoding="utf-8")
    path = history.record(results, {"status": "conformant", "verdict": "conformant"},
                          tmp_path / "history", commit="abc")
    entry = json.loads(path.read_text())
    assert entry["schema"] == history.SCHEMA == 2
    assert {k: entry["source"][k] for k in record.SOURCE_FIELDS} == described
    assert (entry["suite"], entry["manifest_digest"]) == ("9.9", "d" * 64)
    assert entry["source"]["verdict"] == "conformant"
    cell = entry["cells"][ids[1]]
    assert cell == {"o": "known failure", "m": "AssertionError: x", "d": "some-defect"}
    (loaded,) = history.load(tmp_path / "history")
    assert loaded["source"]["date"] == "2026-07-08"


def test_a_record_of_schema_1_is_read_as_schema_2(tmp_path):
    """The 102 records written before schema 2 are read, not migrated: their kind was recorded,
    their version and a nightly's day are supplied by the reader (from the label, only there)."""
    folder = tmp_path / "history"
    folder.mkdir()
    old = {"schema": 1, "kind": history.KIND, "label": "nightly-2026.10.27", "started": 1.0,
           "finished": 2.0, "stack": {"torchrl": "2026.10.27"},
           "source": {"argument": "nightly:2026.10.27", "kind": "nightly", "status": "ok"},
           "cells": {"conformance/test_x.py::t[torchrl]": {"o": "pass"}}}
    (folder / "nightly-2026.10.27@19700101T000001Z.json").write_text(json.dumps(old))
    (folder / "foreign.json").write_text(json.dumps({"schema": 9, "kind": history.KIND}))
    skipped = []
    (entry,) = history.load(folder, skipped)
    assert entry["schema"] == 2
    assert (entry["source"]["kind"], entry["source"]["version"], entry["source"]["date"]) == (
        "nightly", "2026.10.27", "2026-10-27")
    assert entry["source"]["status"] == "ok" and entry["manifest_digest"] is None
    assert skipped == ["foreign.json: not a history record of schema 1 or 2"]


def test_the_committed_history_is_read_whole():
    skipped = []
    entries = history.load(None, skipped)
    assert entries and not skipped, skipped[:3]
    assert all(e["source"]["kind"] in record.KINDS for e in entries)
