"""What the dashboard shows, read from the results files: sources (columns) x specs, and flips.

A *source* is one column: a release, a nightly, a commit or a checkout, as its results document
describes it (``conformance.record``: kind, version, commit, day). The upstream matrix's
per-source results (``reports/upstream/*.json``) give the current columns with their messages;
the history store (``reports/history/``, ``conformance.history``) adds every other complete run
of a label the matrix no longer holds (the backfilled nightlies). Each source's verdict is read
from its rows (every cell expected and none "not tested"), never from a stored status line.

Cells are coded one character per spec so that a year of nightlies stays small in the page.
Nothing here reads a label or a message for what a field says: the kind, the day and the
version are the document's, a known failure's reason, link and defect its row's.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from pathlib import Path

from conformance import manifest, outcomes, record
from conformance.areas import NUMBER
from conformance.manifest import spec_id

#: one character per outcome in the page's data; ABSENT: the spec did not exist in that source
CODE = {
    outcomes.PASS: "p", outcomes.KNOWN_FAILURE: "k", outcomes.FAIL: "F", outcomes.ERROR: "E",
    outcomes.UNEXPECTED_PASS: "U", outcomes.NOT_APPLICABLE: "n", outcomes.UNTESTABLE: "c",
    outcomes.SKIPPED: "s", outcomes.NOT_TESTED: "T",
}
ABSENT = "."
#: the implementation every history record is of (the upstream runner tests TorchRL only)
HISTORY_IMPLEMENTATION = "torchrl"


def spec_key(nodeid: str, implementation: str) -> str:
    """``conformance/test_x.py::test_y[torchrl-a=1]`` (of ``torchrl``) -> ``test_x.py::test_y[a=1]``:
    one key for a spec whatever implementation ran it (the implementation is the column): the
    manifest's spec id (``manifest.spec_id``, the one spec-key function) without its folder."""
    path, _, rest = spec_id(nodeid, implementation).partition("::")
    return f"{path.rsplit('/', 1)[-1]}::{rest}"


def area_of(key: str) -> str:
    """The row a spec is counted in: its area (``manifest.area_of``), its area's family apart,
    the interface specs apart. Rows are areas, not spec files: a new spec file of an area adds
    no row, so the heat map keeps its height as the suite grows."""
    stem = key.split("::", 1)[0].removeprefix("test_").removesuffix(".py")
    if stem == "interface":
        return stem
    area = manifest.area_of(key) or stem
    return area + ("_family" if stem.endswith("_family") else "")


def area_order(area: str) -> tuple:
    base = area.removesuffix("_family")
    return (NUMBER.get(base, 99), area.endswith("_family"), area)


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
    #: what the document says it tested (``conformance.record``): a nightly's build day
    #: (YYYY-MM-DD; a commit's committer day), its version and commit where known
    day: str | None = None
    version: str | None = None
    commit: str | None = None

    @property
    def order(self) -> tuple:
        return record.order_key(self.kind, self.version, self.day, self.label)

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

    doc = read(Path(path))  # checked (any schema, as schema 2): a foreign file is one line
    label = Path(path).stem
    described = doc["source"]
    cells, unexpected, messages, known = {}, set(), {}, {}
    for row in doc["rows"]:
        key = spec_key(row["nodeid"], row["implementation"])
        cells[key] = row["outcome"]
        if row.get("expected") is not True:
            unexpected.add(key)
        if row["outcome"] != outcomes.PASS and row.get("message"):
            messages[key] = _first_line(row["message"])
        if row["outcome"] == outcomes.KNOWN_FAILURE and row.get("link"):
            known[key] = (row["reason"], row["link"], row["nodeid"], row.get("defect"))
    runner_record = record.runner_record(Path(path))
    meta = (json.loads(runner_record.read_text(encoding="utf-8")) if runner_record.is_file()
            else {})
    if doc.get("partial"):
        meta["partial"] = doc["partial"]
    meta["known"] = known
    return Source(label, described["kind"], cells, unexpected, messages, doc.get("started"),
                  "matrix", meta.get("status", ""), meta, described.get("date"),
                  described.get("version"), described.get("commit"))


def from_history(entry: dict) -> Source:
    cells, unexpected, messages = {}, set(), {}
    for nodeid, cell in entry["cells"].items():
        key = spec_key(nodeid, HISTORY_IMPLEMENTATION)
        cells[key] = cell["o"]
        if cell.get("u"):
            unexpected.add(key)
        if cell.get("m"):
            messages[key] = cell["m"]
    source = entry.get("source") or {}
    return Source(entry["label"], source.get("kind") or "installed", cells, unexpected, messages,
                  entry.get("started"), "history", source.get("status") or "",
                  {**source, "suite_commit": entry.get("suite_commit"), "file": entry.get("file")},
                  source.get("date"), source.get("version"), source.get("commit"))


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
    return sorted(sources.values(), key=lambda s: s.order)


def run_time(started: float | None) -> str:
    return "" if started is None else time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime(started))
