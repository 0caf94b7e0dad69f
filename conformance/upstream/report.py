"""The upstream report's own sections: what each column was built from, and the timeline.

The runner writes one record per source next to its results
(``reports/upstream/sources/<label>.json``: status, base torch, where its C++ trees came from,
times) and puts these sections before the matrix of ``reports/upstream.md``. A matrix merged from
several machines (the fan-out workflow) is built by ``python -m conformance.reporting``; then

    python -m conformance.upstream.report reports/upstream/*.json --insert reports/upstream.md

puts the same sections into it, from the records that came along with the results.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

from conformance import record as shape
from conformance.files import atomic_write
from conformance.upstream import timeline

RECORDS = shape.RUNNER_RECORDS  # folder beside the per-source results files
record_path = shape.runner_record


def write_record(results: Path, record: dict) -> Path:
    path = record_path(results)
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(path, json.dumps(record, indent=1) + "\n")
    return path


def read_records(results_files) -> list[dict]:
    records = []
    for results in results_files:
        path = record_path(Path(results))
        if path.is_file():
            records.append(json.loads(path.read_text(encoding="utf-8")))
    return records


def _seconds(value) -> str:
    return "" if value is None else f"{value:.0f} s"


def sources_table(records: list[dict]) -> list[str]:
    """One row per column: status, base torch, where its C++ trees came from, times."""
    if not records:
        return []
    lines = ["| source | status | base torch | paired with (why) | C++ trees (`torchrl._torchrl`) "
             "| outcomes | install | trees | tests | total |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for r in records:
        paired = "; ".join(r.get("pairing") or []) or (r.get("tensordict") or "")
        cells = [f"torchrl {r['label']}", r["status"], r.get("torch") or "", paired,
                 r.get("trees") or "",
                 r.get("outcomes") or "", _seconds(r.get("install_s")), _seconds(r.get("trees_s")),
                 _seconds(r.get("tests_s")), _seconds(r.get("total_s"))]
        lines.append("| " + " | ".join(str(c).replace("|", "\\|") for c in cells) + " |")
    return [*lines, ""]


def _size(path: Path) -> int:
    """Bytes under ``path`` (symbolic links inside it are not followed)."""
    total = 0
    for folder, _dirs, files in os.walk(path.resolve()):
        for name in files:
            try:
                total += os.lstat(os.path.join(folder, name)).st_size
            except OSError:
                pass
    return total


def disk_lines(paths) -> list[str]:
    """What the environments and build folders of the run take on disk."""
    sizes = [(Path(p), _size(Path(p))) for p in dict.fromkeys(paths) if Path(p).exists()]
    if not sizes:
        return []
    total = sum(size for _, size in sizes)
    lines = [f"Disk used by the environments of this run: {total / 1e9:.1f} GB", ""]
    lines += [f"- {path.name}: {size / 1e9:.2f} GB" for path, size in sizes]
    return [*lines, ""]


def preface(results_files, records: list[dict] | None = None, extra: list[str] | None = None) -> list[str]:
    """The sections that go before the matrix: sources, timeline, anything extra (disk)."""
    records = read_records(results_files) if records is None else records
    lines = ["### Sources", "", *sources_table(records), *(extra or [])]
    return [*lines, *timeline.render(*timeline.load(results_files))]


def insert(markdown: Path, lines: list[str], title: str | None = None) -> None:
    """Put ``lines`` right after the verdict of a report built by ``conformance.reporting``."""
    text = markdown.read_text(encoding="utf-8").splitlines()
    at = next((i + 1 for i, line in enumerate(text) if line.startswith("**verdict")), 1)
    if title and text and text[0].startswith("## "):
        text[0] = f"## {title}"
    atomic_write(markdown, "\n".join([*text[:at], "", *lines, *text[at:]]) + "\n")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m conformance.upstream.report",
                                     description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("results", nargs="+", type=Path, help="per-source results files")
    parser.add_argument("--insert", type=Path, metavar="REPORT_MD",
                        help="a report built by python -m conformance.reporting (default: print)")
    parser.add_argument("--title", default="TorchRL conformance by release")
    args = parser.parse_args(argv)
    lines = preface(args.results)
    if args.insert:
        insert(args.insert, lines, args.title)
        print(args.insert)
    else:
        sys.stdout.write("\n".join(lines) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
