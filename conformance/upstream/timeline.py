"""When each known upstream bug came and went, computed from the version matrix.

A known bug is an upstream link of the expectations files: every cell of the matrix that is a
known failure carries its entry's reason and link (the row's fields ``reason`` and ``link``). For each link, the timeline gives the releases whose column has such a
cell, and the first later column in which every spec that had it in its last release passes
("fixed in"). Failures without an entry (a run with ``--expectations none``, a regression) are
listed per spec the same way. Columns are ordered as their documents describe their sources
(``conformance.record.source_order``: by version, a checkout or git ref after the release of
its version, then nightlies by day); no label is read for a version.

    python -m conformance.upstream.timeline reports/upstream/*.json   # prints the section
"""

from __future__ import annotations

import argparse
import sys
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

from conformance import record

FAILING = {"fail", "error"}
TITLE = "### Timeline of known upstream bugs (computed from the matrix)"


@dataclass
class Bug:
    key: str  # the upstream link, or "area :: spec" for failures without an entry
    area: str
    reasons: dict[str, int] = field(default_factory=dict)  # reason -> cells, first seen first
    cells: dict[str, set] = field(default_factory=lambda: defaultdict(set))  # column -> tests

    @property
    def title(self) -> str:
        """The reason of the most cells; one that points back ("same ...") only if alone."""
        ranked = sorted(self.reasons, key=lambda r: (r.lower().startswith("same"), -self.reasons[r]))
        reason = ranked[0]
        return reason if len(reason) <= 170 else reason[:167] + "..."

    def merge(self, other: Bug) -> None:
        for reason, n in other.reasons.items():
            self.reasons[reason] = self.reasons.get(reason, 0) + n
        for column, tests in other.cells.items():
            self.cells[column] |= tests


def _test(row: dict) -> str:
    return f"{row['area']} :: {row['spec']}" + (f"[{row['parameters']}]" if row["parameters"] else "")


def load(paths) -> tuple[list[dict], dict[str, tuple]]:
    """The rows of results files, through the versioned reader (every schema's rows have the
    fields ``reason`` and ``link``), and the order of their columns (column -> sort key, from
    the source each document describes)."""
    from conformance.reporting.results_file import read

    rows, order = [], {}
    for path in paths:
        document = read(Path(path))
        rows += document["rows"]
        key = record.source_order(document["source"])
        for row in document["rows"]:
            order.setdefault(row["implementation_version"], key)
    return rows, order


def compute(rows: list[dict], order: dict[str, tuple]
            ) -> tuple[list[str], list[Bug], dict[str, dict[str, str]]]:
    """(columns in ``order`` (column -> sort key, see ``load``), bugs, outcome of every test in
    every column).

    Cells are grouped by (link, reason) first; groups of one link that span the same columns
    and are fixed in the same column are one bug (one row), groups of one link with different
    histories stay apart (e.g. a missing argument in 0.6.x and a wrong mask from 0.7.2 on).
    """
    columns = sorted(dict.fromkeys(r["implementation_version"] for r in rows),
                     key=lambda c: (order[c], c))
    outcome: dict[str, dict[str, str]] = defaultdict(dict)
    groups: dict[tuple[str, str], Bug] = {}
    for row in rows:
        column, test = row["implementation_version"], _test(row)
        outcome[column][test] = row["outcome"]
        if row["outcome"] == "known failure" and row.get("link"):
            key, reason = row["link"], row["reason"]
        elif row["outcome"] in FAILING:
            key = reason = f"failure without an expectations entry: {row['area']} :: {row['spec']}"
        else:
            continue
        bug = groups.setdefault((key, reason), Bug(key, row["area"]))
        bug.reasons[reason] = bug.reasons.get(reason, 0) + 1
        bug.cells[column].add(test)
    merged: dict[tuple, Bug] = {}
    for bug in groups.values():
        history = (bug.key, tuple(c for c in columns if c in bug.cells),
                   fixed_in(bug, columns, outcome))
        if history in merged:
            merged[history].merge(bug)
        else:
            merged[history] = bug
    order = {c: i for i, c in enumerate(columns)}
    ordered = sorted(merged.values(), key=lambda b: (min(order[c] for c in b.cells),
                                                    -max(order[c] for c in b.cells), b.area, b.key))
    return columns, ordered, outcome


def _ranges(columns: list[str], having: list[str]) -> str:
    """'0.5.0–0.9.2, 0.11.1' from the columns that have the bug, in column order."""
    runs: list[list[str]] = []
    previous = None
    for index, column in enumerate(columns):
        if column not in having:
            continue
        if previous is not None and index == previous + 1:
            runs[-1].append(column)
        else:
            runs.append([column])
        previous = index
    return ", ".join(run[0] if len(run) == 1 else f"{run[0]}–{run[-1]}" for run in runs)


def fixed_in(bug: Bug, columns: list[str], outcome: dict[str, dict[str, str]]) -> str:
    """The column after the bug's last one, if the specs that had it were tested there."""
    having = [c for c in columns if c in bug.cells]
    last = having[-1]
    if last == columns[-1]:
        return f"not fixed (still in {last})"
    column = columns[columns.index(last) + 1]
    seen = [outcome[column].get(t) for t in sorted(bug.cells[last])]
    untested = [o for o in seen if o not in ("pass", "known failure", "fail", "error")]
    if untested:
        return f"not tested after {last} ({column}: {', '.join(sorted({str(o) for o in untested}))})"
    other = sum(o != "pass" for o in seen)
    return column if not other else f"{column} ({other} of its {len(seen)} specs fail there for another reason)"


def render(rows: list[dict], order: dict[str, tuple]) -> list[str]:
    """The timeline section of the upstream report, as Markdown lines."""
    if not rows:
        return []
    columns, bugs, outcome = compute(rows, order)
    lines = [TITLE, "",
             f"Columns in version order: {', '.join(columns)}. A bug is an upstream link of the "
             "expectations files (one row per link and history); 'releases' are the columns with "
             "a known failure carrying it, 'fixed in' the next column, where its specs no longer show it.",
             ""]
    if not bugs:
        return [*lines, "No known failure in any column.", ""]
    lines += ["| known bug (expectation reason) | area | specs | releases that have it | fixed in | link |",
              "|---|---|---|---|---|---|"]
    for bug in bugs:
        having = [c for c in columns if c in bug.cells]
        n_specs = len(set().union(*bug.cells.values()))
        link = bug.key if bug.key.startswith("http") else ""
        title = bug.title.replace("|", "\\|")
        lines.append(f"| {title} | {bug.area} | {n_specs} | {_ranges(columns, having)} | "
                     f"{fixed_in(bug, columns, outcome)} | {link} |")
    return [*lines, ""]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m conformance.upstream.timeline",
                                     description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("results", nargs="+", type=Path, help="per-source results files")
    args = parser.parse_args(argv)
    sys.stdout.write("\n".join(render(*load(args.results))) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
