"""The results history: one small JSON per complete source run, append-only, under ``reports/history/``.

The upstream matrix keeps one column per label and every run replaces it; the history keeps every
complete run, so the dashboard can draw passes per area over time and mark where a spec flipped.

    reports/history/<label>@<UTC start, YYYYMMDDTHHMMSSZ>.json

A record holds what the run tested (its results document's source: kind, version, commit, day),
the runner's metadata (argument, pairing, base torch, C++ trees, times, verdict), the suite
commit that ran it, and every cell as ``nodeid -> outcome`` with the first line of its message
when it is not a pass and, for a known failure, the catalogued defect it shows. Schema 2; a
record of schema 1 (no version, commit, day or defect) is read through ``upgrade``.

Only a **complete** run is recorded: a partial run (narrowed or stopped early), a source that
was never resolved, installed or imported (any cell "not tested"), or a run whose results cannot be read is refused with a one-line reason, so that the
timeline never shows a flip that is only a missing column. A record is never overwritten: the
same run recorded twice is the same file (same label, same start), and a different file with
that name is an error.

``python -m conformance.history add RESULTS.json [...]`` records existing results files (with
their ``sources/`` records when present); ``list`` prints what the store holds.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

from conformance import outcomes, paths
from conformance import record as shape
from conformance.files import atomic_write

SCHEMA = 2
#: the record schemas ``load`` reads (older ones upgraded)
READS = (1, 2)
KIND = "conformance-history-run"
FOLDER = paths.REPORTS / "history"
#: the longest message kept per cell: the history is for timelines and diffs, not for debugging
MESSAGE_CHARS = 160


class HistoryError(ValueError):
    """Why a run is not recorded, in one line."""


def _suite_commit() -> str | None:
    try:
        proc = subprocess.run(["git", "-C", str(paths.ROOT), "rev-parse", "HEAD"],
                              capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.SubprocessError):
        return None
    return proc.stdout.strip() or None if proc.returncode == 0 else None


def _stamp(started: float) -> str:
    return time.strftime("%Y%m%dT%H%M%SZ", time.gmtime(started))


def incomplete(document: dict, label: str) -> str | None:
    """Why this results document is not a complete run of one source, or None."""
    if (document.get("source") or {}).get("kind") == "unresolved":
        return "the source was never resolved"
    if document.get("partial"):
        return f"a partial run ({document['partial']})"
    rows = document.get("rows") or []
    if not rows:
        return "no results"
    missing = next((r for r in rows if r.get("outcome") == outcomes.NOT_TESTED), None)
    if missing is not None:
        return "not tested: " + ((missing.get("message") or "").splitlines() or [""])[0][:200]
    versions = {r.get("implementation_version") for r in rows}
    if versions != {label}:
        return f"its rows are of {sorted(map(str, versions))}, not of {label}"
    return _not_one_complete_run(document)


#: the implementation whose runs the history holds (one column per TorchRL source)
IMPLEMENTATION = "torchrl"


def _not_one_complete_run(document: dict) -> str | None:
    """Why the rows are not one complete run of the manifest by TorchRL alone (None: they are):
    a one-row file, a reference-only file, ids outside the manifest, a start that is no time."""
    import math

    from conformance.admission import rows_reason

    for key in ("started", "finished"):
        value = document.get(key)
        if isinstance(value, bool) or not isinstance(value, (int, float)) \
                or not math.isfinite(value) or value < 0:
            return f"{key}: {value!r} is not a time (seconds since 1970)"
    rows = document["rows"]
    if not all(isinstance(r, dict) for r in rows):
        return "a row that is not an object"
    impls = sorted({str(r.get("implementation")) for r in rows})
    if impls != [IMPLEMENTATION]:
        return f"its rows are of {', '.join(impls)}: the history holds {IMPLEMENTATION} runs only"
    devices = sorted({str(r.get("device", "cpu")) for r in rows})
    if len(devices) != 1:
        return f"rows of several devices ({', '.join(devices)})"
    short = rows_reason(rows, [IMPLEMENTATION], devices[0])
    return f"not a complete run of the manifest ({short})" if short else None


def make_record(document: dict, label: str, source: dict | None, commit: str | None,
                recorded_by: str = "runner") -> dict:
    """The history record of one complete run (pure: tested without a run)."""
    cells = {}
    for row in sorted(document["rows"], key=lambda r: r["nodeid"]):
        cell = {"o": row["outcome"]}
        if row["outcome"] != outcomes.PASS and row.get("message"):
            cell["m"] = row["message"].splitlines()[0][:MESSAGE_CHARS]
        if row.get("expected") is not True:
            cell["u"] = 1  # unexpected against the expectations the run used
        if row.get("defect"):
            cell["d"] = row["defect"]  # the catalogued defect a known failure shows
        cells[row["nodeid"]] = cell
    source = dict(source or {})
    described = document.get("source") or {}
    return {
        "schema": SCHEMA, "kind": KIND, "label": label,
        "started": document["started"], "finished": document["finished"],
        "suite_commit": commit or None, "recorded_by": recorded_by, "python": document.get("python"),
        "stack": document.get("stack"), "exitstatus": document.get("exitstatus"),
        "suite": document.get("suite"), "manifest_digest": document.get("manifest_digest"),
        # what was tested, as the results document describes it; then the runner's metadata
        "source": {**{key: described.get(key) for key in shape.SOURCE_FIELDS},
                   **{key: source.get(key) for key in (
                       "torch", "tensordict", "pairing", "trees", "trees_problem", "install_s",
                       "trees_s", "tests_s", "total_s", "status", "verdict", "outcomes")},
                   "argument": described.get("argument") or source.get("argument")},
        "cells": cells,
    }


def record(results: Path, source: dict | None = None, folder: Path | None = None,
           commit: str | None = None, recorded_by: str = "runner") -> Path:
    """Add the run in ``results`` (a results file of one source) to the store; its path.

    Raises HistoryError (one line) when the run is not complete or cannot be read, or when a
    different record already holds its name."""
    from conformance.reporting.results_file import ResultsFileError, read

    results = Path(results)
    try:
        document = read(results)
    except ResultsFileError as exc:
        raise HistoryError(str(exc)) from None
    label = results.stem
    why = incomplete(document, label)
    if why:
        raise HistoryError(f"{label}: not recorded in the history: {why}")
    folder = Path(folder or FOLDER)
    path = folder / f"{label}@{_stamp(document['started'])}.json"
    entry = make_record(document, label, source, commit if commit is not None else _suite_commit(),
                        recorded_by)
    if path.is_file():
        try:
            old = json.loads(path.read_text(encoding="utf-8"))
        except ValueError:
            old = None
        if not old or _outcomes(old) != _outcomes(entry) or old.get("started") != entry["started"]:
            raise HistoryError(f"{path} exists with another run: the history is append-only")
        return path  # the same run recorded again: nothing to add
    atomic_write(path, json.dumps(entry, indent=0, sort_keys=True) + "\n")
    return path


def _outcomes(entry: dict) -> dict:
    """A record's cells without what a later schema added (a schema-1 record has no defect)."""
    return {k: {f: v for f, v in c.items() if f != "d"} for k, c in (entry.get("cells") or {}).items()}


def record_quietly(results: Path, source: dict | None, folder: Path | None, log=print) -> None:
    """The runner's hook: record a run, or say in one line why it is not recorded."""
    try:
        path = record(results, source, folder)
    except (HistoryError, OSError) as exc:
        log(f"history: {exc}")
        return
    log(f"history: recorded {paths.shown(path)}")


def upgrade(entry: dict) -> dict:
    """A record of schema 1 as schema 2: the source's version and a nightly's day, which schema 1
    did not record, from its label (only here); no commit, no defect (not recorded)."""
    if entry.get("schema") != 1:
        return entry
    from conformance.reporting.results_file import upgrade as upgrade_document

    source = dict(entry.get("source") or {})
    described = upgrade_document({"schema": 1, "rows": [], "stack": entry.get("stack") or {},
                                  "implementations": {"torchrl": entry["label"]}})["source"]
    for key in shape.SOURCE_FIELDS:
        if source.get(key) is None:
            source[key] = described[key]
    return {**entry, "schema": SCHEMA, "source": source, "suite": None, "manifest_digest": None}


def load(folder: Path | None = None, skipped: list[str] | None = None) -> list[dict]:
    """Every record of the store, oldest run first; a file that is not a readable record is
    left out, and named with its reason in ``skipped`` (a reader says so, never silently)."""
    found = []
    for path in sorted(Path(folder or FOLDER).glob("*.json")):
        try:
            entry = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            if skipped is not None:
                skipped.append(f"{path.name}: unreadable ({exc})")
            continue
        if (isinstance(entry, dict) and entry.get("kind") == KIND and entry.get("schema") in READS
                and isinstance(entry.get("cells"), dict) and isinstance(entry.get("started"), (int, float))):
            entry = upgrade(entry)
            entry["file"] = path.name
            found.append(entry)
        elif skipped is not None:
            skipped.append(f"{path.name}: not a history record of schema "
                           f"{' or '.join(map(str, READS))}")
    return sorted(found, key=lambda e: (e["started"], e["label"]))


def main(argv=None) -> int:
    import argparse

    from conformance.cli import OneLineErrors

    parser = OneLineErrors(prog="python -m conformance.history", description=__doc__,
                           formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("command", choices=["add", "list"])
    parser.add_argument("results", nargs="*", type=Path)
    parser.add_argument("--history-dir", type=Path, default=FOLDER)
    args = parser.parse_args(argv)
    if args.command == "list":
        for entry in load(args.history_dir):
            when = time.strftime("%Y-%m-%d %H:%M", time.gmtime(entry["started"]))
            print(f"{entry['label']}\t{when}\t{(entry.get('source') or {}).get('status') or ''}")
        return 0
    if not args.results:
        parser.error("add: name at least one results file")
    status = 0
    for results in args.results:
        source_file = shape.runner_record(results)
        source = json.loads(source_file.read_text(encoding="utf-8")) if source_file.is_file() else None
        try:
            # recorded after the fact: the suite commit that ran it is not known here
            print(paths.shown(record(results, source, args.history_dir, commit="",
                                     recorded_by="python -m conformance.history add")))
        except (HistoryError, OSError) as exc:
            print(f"python -m conformance.history: error: {exc}", file=sys.stderr)
            status = 1
    return status


if __name__ == "__main__":
    sys.exit(main())
