"""Reading a results file (``conformance.plugin.results``), or one line saying why not.

The report builder and the upstream runner read results that a person names on a command line:
a missing, truncated, empty or foreign file must be a clear one-line error, never a traceback
deep in pandas, and a schema this version does not know must not be read as if it did.

The versioned reader: a document of schema 2 (``conformance.record``) is read as it is; one of
schema 1 is upgraded in memory to schema 2 (``upgrade``), so that every reader sees one shape.
Only here is an old document's label or message read for what schema 2 records as fields.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from conformance import record

SCHEMA = record.SCHEMA
#: the schemas this reader reads (older ones upgraded)
READS = (1, 2)
#: schema 1 wrote a known failure's expectation at the end of its message
_KNOWN_V1 = re.compile(r"\s*\[known failure: (?P<reason>.*) \((?P<link>https?://[^()\s]+)\)"
                       r"(?P<runxfail>; --runxfail)?\]\s*$", re.S)
_NIGHTLY_V1 = re.compile(r"^nightly-(\d{4})\.(\d{1,2})\.(\d{1,2})$")
_RELEASE_V1 = re.compile(r"^\d+\.\d+\.\d+$")
_VERSION_V1 = re.compile(r"^\d+\.\d+(?:\.\d+)?")
ROW_FIELDS = ("nodeid", "area", "spec", "parameters", "implementation",
              "implementation_version", "outcome", "expected", "message")


#: the type of each field a report reads (a row with a list for a message, or a number for an
#: outcome, gave tracebacks deep in pandas)
ROW_TYPES = {
    "nodeid": (str,), "area": (str,), "spec": (str,), "parameters": (str,),
    "implementation": (str,), "implementation_version": (str,), "outcome": (str,),
    "expected": (bool, type(None)), "message": (str,), "duration": (int, float),
    "reruns": (int,), "device": (str,), "partial": (str, type(None)),
    "reason": (str, type(None)), "link": (str, type(None)), "defect": (str, type(None)),
}


class ResultsFileError(ValueError):
    """Why a file is not a usable results file, in one line that names it."""


def _load(path: Path):
    if path.is_dir():
        raise ResultsFileError(f"{path}: a directory, not a results file")
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ResultsFileError(f"{path}: no such results file") from None
    except OSError as exc:
        raise ResultsFileError(f"{path}: cannot read it: {exc.strerror}") from None
    except UnicodeDecodeError:
        raise ResultsFileError(f"{path}: not UTF-8 text, not a results file") from None
    if not text.strip():
        raise ResultsFileError(f"{path}: empty file, not a results file (an interrupted run?)")
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise ResultsFileError(f"{path}: not valid JSON ({exc.msg}: line {exc.lineno}, column "
                               f"{exc.colno}); truncated?") from None
    except RecursionError:  # e.g. 200k nested arrays: no results file is nested so deep
        raise ResultsFileError(f"{path}: JSON nested too deeply, not a results file") from None


def _source_v1(document: dict) -> dict:
    """What a schema-1 document tested, as far as it can be known, from the label the runner gave
    its TorchRL (its column): the kind, the version (a checkout's stack says ``git <sha>``), a
    nightly's day."""
    label = (document.get("implementations") or {}).get("torchrl")
    if label is None:  # a document without the map: its TorchRL rows' version, when they agree
        found = {r.get("implementation_version") for r in document.get("rows") or []
                 if isinstance(r, dict) and r.get("implementation") == "torchrl"}
        label = found.pop() if len(found) == 1 else None
    text = str(label or "")
    leading = _VERSION_V1.match(text)
    version = leading[0] if leading else (document.get("stack") or {}).get("torchrl")
    nightly = _NIGHTLY_V1.match(text)
    date = commit = None
    if nightly:
        kind = "nightly"
        version = ".".join(str(int(g)) for g in nightly.groups())
        date = "-".join(f"{int(g):0{w}d}" for g, w in zip(nightly.groups(), (4, 2, 2), strict=True))
    elif "+git." in text:
        kind = "git"  # the label holds 7 digits of the commit, not the commit: left unknown
    elif text.endswith("+checkout"):
        kind = "checkout"
    elif text.startswith("unresolved-"):
        kind = "unresolved"
    elif _RELEASE_V1.match(text):
        kind = "release"
    else:
        kind = "installed"
    return record.describe(kind, label, version, commit, date)


def upgrade(document: dict) -> dict:
    """A schema-1 document as schema 2 (a new dict; rows copied): its source described (see
    ``_source_v1``), no manifest digest (not
    recorded), and a known failure's reason and link moved from its message into fields. The
    defect is left None: the catalogue is the plug-in's to apply (``conformance.plugin.catalogue``,
    applied to the committed results by ``tools/migrate_results.py``)."""
    if document.get("schema") != 1:
        return document
    rows = []
    for row in document["rows"]:
        row = {**row, **{name: row.get(name) for name in record.ROW_EXTRA}}
        found = _KNOWN_V1.search(row.get("message") or "") if isinstance(row.get("message"), str) else None
        if found and row.get("outcome") == "known failure":
            row["reason"], row["link"] = found["reason"], found["link"]
            row["message"] = row["message"][:found.start()] + (
                "  [--runxfail]" if found["runxfail"] else "")
        rows.append(row)
    return {**document, "schema": record.SCHEMA, "manifest_digest": None,
            "source": _source_v1(document), "rows": rows}


def read(path: Path) -> dict:
    """The results document of ``path``, checked, in the shape of schema 2 (an older one
    upgraded)."""
    path = Path(path)
    document = _load(path)
    if not isinstance(document, dict):
        raise ResultsFileError(f"{path}: a JSON {type(document).__name__}, not a results object")
    if "schema" not in document:
        raise ResultsFileError(f"{path}: no 'schema' field: not a results file of this suite")
    if document["schema"] not in READS or isinstance(document["schema"], bool):
        raise ResultsFileError(f"{path}: schema {document['schema']!r} is not supported "
                               f"(this version reads schemas {', '.join(map(str, READS))})")
    for name in ("started", "finished"):
        value = document.get(name)
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise ResultsFileError(f"{path}: {name!r} is missing or not a time")
    rows = document.get("rows")
    if not isinstance(rows, list):
        raise ResultsFileError(f"{path}: 'rows' is missing or not a list")
    if not rows:
        raise ResultsFileError(f"{path}: no test results in it ('rows' is empty)")
    for number, row in enumerate(rows, 1):
        if not isinstance(row, dict):
            raise ResultsFileError(f"{path}: row {number} is not an object")
        missing = [name for name in ROW_FIELDS if name not in row]
        if missing:
            raise ResultsFileError(f"{path}: row {number} has no {', '.join(missing)}")
        wrong = [name for name, types in ROW_TYPES.items()
                 if name in row and (not isinstance(row[name], types)
                                     or (isinstance(row[name], bool) and bool not in types))]
        if wrong:
            raise ResultsFileError(f"{path}: row {number}: {', '.join(wrong)} of the wrong type "
                                   f"({', '.join(type(row[n]).__name__ for n in wrong)})")
    if document["schema"] == 1:
        document = upgrade(document)
    source = document.get("source")
    if not isinstance(source, dict) or source.get("kind") not in record.KINDS:
        raise ResultsFileError(f"{path}: 'source' is missing or not a source description")
    return document
