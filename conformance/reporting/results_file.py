"""Reading a results file (``conformance.plugin.results``, schema 1), or one line saying why not.

The report builder and the upstream runner read results that a person names on a command line:
a missing, truncated, empty or foreign file must be a clear one-line error, never a traceback
deep in pandas, and a schema this version does not know must not be read as if it did.
"""

from __future__ import annotations

import json
from pathlib import Path

SCHEMA = 1
ROW_FIELDS = ("nodeid", "area", "spec", "parameters", "implementation",
              "implementation_version", "outcome", "expected", "message")


#: the type of each field a report reads (a row with a list for a message, or a number for an
#: outcome, gave tracebacks deep in pandas)
ROW_TYPES = {
    "nodeid": (str,), "area": (str,), "spec": (str,), "parameters": (str,),
    "implementation": (str,), "implementation_version": (str,), "outcome": (str,),
    "expected": (bool, type(None)), "message": (str,), "duration": (int, float),
    "reruns": (int,), "device": (str,), "partial": (str, type(None)),
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


def read(path: Path) -> dict:
    """The results document of ``path``, checked against schema 1."""
    path = Path(path)
    document = _load(path)
    if not isinstance(document, dict):
        raise ResultsFileError(f"{path}: a JSON {type(document).__name__}, not a results object")
    if "schema" not in document:
        raise ResultsFileError(f"{path}: no 'schema' field: not a results file of this suite")
    if document["schema"] != SCHEMA or isinstance(document["schema"], bool):
        raise ResultsFileError(f"{path}: schema {document['schema']!r} is not supported "
                               f"(this version reads schema {SCHEMA})")
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
    return document
