"""The shape of a results document: what it tested (its source) and what each row holds.

A leaf module (it imports nothing of the project): the plug-in writes documents of this shape,
the versioned reader (``conformance.reporting.results_file``) upgrades older ones to it, and the
reports, history, dashboard and bug reports read its fields; none of them guesses a source's
kind, version or date from its label, or a known failure's reason from its message.

Schema 2 (schema 1 had no ``source``, no ``manifest_digest`` and no row fields ``reason``,
``link``, ``defect``: a known failure's reason and link were written at the end of its message)::

    {"schema": 2, "suite": "0.1.0", "manifest_digest": "<sha256 of conformance/manifest.json>",
     "source": {"kind": ..., "label": ..., "version": ..., "commit": ..., "date": ...,
                "argument": ...},
     "started", "finished", "exitstatus", "partial", "python", "stack", "implementations",
     "device", "rows": [{..., "outcome", "expected", "message", "reason", "link", "defect"}]}

``source.kind`` is one of ``KINDS``: how the TorchRL under test was obtained (``installed``:
whatever the environment held, a plain ``pytest`` run; ``unresolved``: an argument of the
upstream runner that named no source it could find, every row "not tested"). ``date`` is ``YYYY-MM-DD`` (a nightly's
build day, a git commit's committer day), ``commit`` a full sha, both None where unknown.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

from packaging.version import InvalidVersion, Version

SCHEMA = 2
#: every kind of TorchRL source a document can describe (``conformance.upstream.sources``
#: defines the classes of the upstream runner's kinds; ``installed`` is a plain run's)
KINDS = ("release", "wheel", "checkout", "git", "nightly", "installed", "unresolved")
SOURCE_FIELDS = ("kind", "label", "version", "commit", "date", "argument")
#: the runner hands the child pytest its source's description (JSON) in this variable
SOURCE_ENV = "TORCHRL_CONFORMANCE_SOURCE"
#: the fields a row of schema 2 has beyond schema 1's: an expectation's reason and link, and the
#: catalogued defect (``conformance.defects``) a known failure of TorchRL shows; None otherwise
ROW_EXTRA = ("reason", "link", "defect")
MANIFEST = Path(__file__).resolve().parent / "manifest.json"


#: the upstream runner's record of each source (pairing, C++ trees, times) sits beside its
#: results in this folder, under the same name
RUNNER_RECORDS = "sources"


def of_kind(source, kind: str) -> bool:
    """Whether ``source`` (a description dict, an object with ``kind``, or a kind) is of
    ``kind``: the one place a recorded kind is compared, so a new kind is added here."""
    if kind not in KINDS:
        raise ValueError(f"{kind!r} is not a source kind ({', '.join(KINDS)})")
    if isinstance(source, dict):
        source = source.get("kind")
    elif source is not None and not isinstance(source, str):
        source = getattr(source, "kind", None)
    return source == kind


def is_nightly(source) -> bool:
    """A nightly build: shown and ordered by its build day (``date``)."""
    return of_kind(source, "nightly")


def is_release(source) -> bool:
    """A release from the package index: the columns of the release matrix."""
    return of_kind(source, "release")


def runner_record(results: Path) -> Path:
    """Where the upstream runner's record of the source of ``results`` is."""
    return Path(results).parent / RUNNER_RECORDS / Path(results).name


def manifest_digest(path: Path = MANIFEST) -> str | None:
    """The sha256 of the manifest of spec ids the run was judged against (None: no manifest)."""
    try:
        return hashlib.sha256(Path(path).read_bytes()).hexdigest()
    except OSError:
        return None


def describe(kind: str, label: str | None, version: str | None, commit: str | None = None,
             date: str | None = None, argument: str | None = None) -> dict:
    """A source description, every field present (None where unknown)."""
    if kind not in KINDS:
        raise ValueError(f"{kind!r} is not a source kind ({', '.join(KINDS)})")
    return {"kind": kind, "label": label, "version": version, "commit": commit, "date": date,
            "argument": argument}


def source_from_env(label: str | None, version: str | None) -> dict:
    """The source a run tested: the runner's description when it started this run (in
    ``SOURCE_ENV``), else the TorchRL installed here (``label`` and ``version`` of the run)."""
    given = os.environ.get(SOURCE_ENV)
    if given:
        try:
            value = json.loads(given)
        except ValueError:
            value = None
        if isinstance(value, dict) and value.get("kind") in KINDS:
            return {name: value.get(name) for name in SOURCE_FIELDS}
    return describe("installed", label, version)


def version_order(version: str | None) -> tuple:
    """The one order of versions (PEP 440, the ``packaging`` library's): 0.5.0 < 0.12.0 <
    0.14.0 < 0.14.0+git.ae9719f; what is not a version comes after every version, by its text."""
    try:
        return (0, Version(str(version)), "")
    except InvalidVersion:
        return (1, None, str(version))


def order_key(kind: str, version: str | None, day: str | None, label: str) -> tuple:
    """One order of sources: released and development builds by version (a checkout or a git
    ref after the release of its version, by label), then nightlies by their build day."""
    if kind == "nightly":
        return (1, day or "", (0, None, ""), label)
    tier, parsed, text = version_order(version)
    return (0 if tier == 0 else 2, "", (0, parsed, text) if tier == 0 else (1, None, text), label)


def source_order(source: dict) -> tuple:
    """``order_key`` of a source description (a results document's ``source``)."""
    return order_key(source.get("kind") or "installed", source.get("version"), source.get("date"),
                     str(source.get("label") or ""))
