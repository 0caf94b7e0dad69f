"""What the dashboard shows, read from the results files: sources (columns) x specs, and flips.

A *source* is one column: a release, a nightly, a commit or a checkout. The upstream matrix's
per-source results (``reports/upstream/*.json``) give the current columns with their messages;
the history store (``reports/history/``, ``conformance.history``) adds every other complete run
of a label the matrix no longer holds (the backfilled nightlies). Each source's verdict is read
from its rows (every cell expected and none "not tested"), never from a stored status line.

Cells are coded one character per spec so that a year of nightlies stays small in the page.
"""

from __future__ import annotations

import json
import re
import time
from dataclasses import dataclass, field
from pathlib import Path

from conformance import outcomes
from conformance.areas import NUMBER

#: one character per outcome in the page's data; ABSENT: the spec did not exist in that source
CODE = {
    outcomes.PASS: "p", outcomes.KNOWN_FAILURE: "k", outcomes.FAIL: "F", outcomes.ERROR: "E",
    outcomes.UNEXPECTED_PASS: "U", outcomes.NOT_APPLICABLE: "n", outcomes.UNTESTABLE: "c",
    outcomes.SKIPPED: "s", outcomes.NOT_TESTED: "T",
}
ABSENT = "."
KNOWN = re.compile(r"\[known failure: (?P<reason>.*) \((?P<link>https?://[^()\s]+)\)\]\s*$", re.S)
NIGHTLY = re.compile(r"^nightly-(\d{4})\.(\d{1,2})\.(\d{1,2})$")
RELEASE = re.compile(r"^\d+\.\d+\.\d+$")


def spec_key(nodeid: str) -> str:
    """``conformance/test_x.py::test_y[torchrl-a=1]`` -> ``test_x.py::test_y[a=1]``: one key for
    a spec whatever implementation ran it (the implementation is the column)."""
    name = nodeid.rsplit("/", 1)[-1]
    match = re.match(r"^(?P<head>[^\[]*)(?:\[(?P<params>.*)\])?$", name, re.S)
    head, params = match["head"], match["params"]
    if params is None:
        return head
    _impl, _sep, rest = params.partition("-")
    return f"{head}[{rest}]" if _sep else head


def area_of(key: str) -> str:
    return key.split("::", 1)[0].removeprefix("test_").removesuffix(".py")


def area_order(area: str) -> tuple:
    base = area.removesuffix("_family")
    return (NUMBER.get(base, 99), area.endswith("_family"), area)


def kind_of(label: str) -> str:
    if NIGHTLY.match(label):
        return "nightly"
    if "+git." in label:
        return "commit"
    if "+checkout" in label:
        return "checkout"
    if RELEASE.match(label):
        return "release"
    return "other"


def nightly_day(label: str) -> str | None:
    match = NIGHTLY.match(label)
    if not match:
        return None
    year, month, day = (int(g) for g in match.groups())
    return f"{year:04d}-{month:02d}-{day:02d}"


def version_key(label: str) -> tuple:
    match = re.match(r"(\d+(?:\.\d+)*)(.*)$", label)
    if not match:
        return (1, (), label)
    return (0, tuple(int(p) for p in match.group(1).split(".")), match.group(2))


def source_order(label: str) -> tuple:
    """Releases (and commits/checkouts of a version) by version, then nightlies by date."""
    day = nightly_day(label)
    return (1, day, "") if day else (0, version_key(label), label)


@dataclass
class Source:
    label: str
    kind: str
    cells: dict[str, str]  # spec key -> outcome
    unexpected: set[str]  # spec keys whose outcome the run's expectations did not expect
    messages: dict[str, str]  # spec key -> first line of the message (not a pass)
    started: float | None
    origin: str  # "matrix" (reports/upstream) or "history" (reports/history)
    status: str = ""  # the runner's own verdict line, shown beside ours
    meta: dict = field(default_factory=dict)

    @property
    def verdict(self) -> str:
        """From the cells: NOT TESTED, N unexpected, or conformant."""
        if any(o == outcomes.NOT_TESTED for o in self.cells.values()):
            return "NOT TESTED"
        if self.unexpected:
            return f"{len(self.unexpected)} unexpected"
        return "conformant"


def _first_line(text: str | None, limit: int = 400) -> str:
    return ((text or "").strip().splitlines() or [""])[0][:limit]


def from_results(path: Path) -> Source:
    """A source from one per-source results file of the upstream matrix (and its record)."""
    from conformance.reporting.results_file import read

    doc = read(Path(path))  # checked against schema 1: a foreign file is one line, not a traceback
    label = Path(path).stem
    cells, unexpected, messages, known = {}, set(), {}, {}
    for row in doc["rows"]:
        key = spec_key(row["nodeid"])
        cells[key] = row["outcome"]
        if row.get("expected") is not True:
            unexpected.add(key)
        if row["outcome"] != outcomes.PASS and row.get("message"):
            messages[key] = _first_line(row["message"])
            found = KNOWN.search(row["message"])
            if found and row["outcome"] == outcomes.KNOWN_FAILURE:
                known[key] = (found["reason"], found["link"], row["nodeid"], row["message"])
    record = Path(path).parent / "sources" / Path(path).name
    meta = json.loads(record.read_text(encoding="utf-8")) if record.is_file() else {}
    if doc.get("partial"):
        meta["partial"] = doc["partial"]
    meta["known"] = known
    return Source(label, kind_of(label), cells, unexpected, messages, doc.get("started"),
                  "matrix", meta.get("status", ""), meta)


def from_history(entry: dict) -> Source:
    cells, unexpected, messages = {}, set(), {}
    for nodeid, cell in entry["cells"].items():
        key = spec_key(nodeid)
        cells[key] = cell["o"]
        if cell.get("u"):
            unexpected.add(key)
        if cell.get("m"):
            messages[key] = cell["m"]
    source = entry.get("source") or {}
    return Source(entry["label"], kind_of(entry["label"]), cells, unexpected, messages,
                  entry.get("started"), "history", source.get("status") or "",
                  {**source, "suite_commit": entry.get("suite_commit"), "file": entry.get("file")})


def load_sources(upstream_dir: Path, history_dir: Path, skipped: list[str] | None = None) -> list[Source]:
    """The matrix's columns, plus the newest history run of every label the matrix lacks
    (history files that cannot be read are named in ``skipped``)."""
    from conformance import history

    sources = {}
    for path in sorted(Path(upstream_dir).glob("*.json")):
        try:
            sources[path.stem] = from_results(path)
        except ValueError as exc:  # ResultsFileError: the file named, the reason in one line
            raise ValueError(str(exc)) from None
    for entry in history.load(history_dir, skipped):  # oldest first: the newest run of a label wins
        if entry["label"] not in sources or sources[entry["label"]].origin == "history":
            sources[entry["label"]] = from_history(entry)
    return sorted(sources.values(), key=lambda s: source_order(s.label))


def run_time(started: float | None) -> str:
    return "" if started is None else time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime(started))
