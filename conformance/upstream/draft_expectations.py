"""Draft an expectations file from a run's results, for review.

    python -m conformance.upstream.draft_expectations reports/upstream/0.13.3.json \
        [--known conformance/expectations/torchrl-0.14.1.txt ...] [-o FILE]

Every failing (or known-failing) test of the run becomes an entry: a whole spec when all its
parameter sets fail for one known reason, else one line per test. Reason and link are copied
from a ``--known`` entry that covers the very test; otherwise the line says ``REVIEW`` and has no
link, which the expectations parser rejects: a drafted file cannot be used before a person has
reviewed it.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import defaultdict
from pathlib import Path

from conformance.plugin import expectations as exp

FAILING = {"fail", "error", "known failure"}


def _spec_prefix(nodeid: str) -> str:
    return nodeid.split("[", 1)[0]


def draft(results: Path, known: list[Path]) -> list[str]:
    document = json.loads(results.read_text())
    known_entries = [e for path in known for e in exp.parse(path, frozenset())]
    by_spec: dict[str, list[dict]] = defaultdict(list)
    for row in document["rows"]:
        by_spec[_spec_prefix(row["nodeid"])].append(row)
    lines = [f"# Known failures of torchrl {', '.join(document['implementations'].values())} "
             f"(tensordict {document['stack'].get('tensordict')}, torch {document['stack'].get('torch')}).",
             "# <test-id prefix> | <reason> | <upstream link>",
             "# Drafted by conformance.upstream.draft_expectations; reviewed by hand."]
    for spec, rows in sorted(by_spec.items()):
        failing = [r for r in rows if r["outcome"] in FAILING]
        if not failing:
            continue
        # a known reason is reused only where a known entry covers the very test that failed
        covering = [next((e for e in known_entries if r["nodeid"].startswith(e.prefix)), None)
                    for r in failing]
        if len(failing) == len(rows) and covering[0] is not None and \
                all(c is covering[0] for c in covering):
            lines.append(f"{spec} | {covering[0].reason} | {covering[0].link}")
            continue
        for row, entry in zip(failing, covering, strict=True):
            if entry is not None:
                lines.append(f"{row['nodeid']} | {entry.reason} | {entry.link}")
            else:
                message = row["message"].splitlines()[0][:160] if row["message"] else ""
                lines.append(f"{row['nodeid']} | REVIEW: {message} | TODO")
    return lines


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m conformance.upstream.draft_expectations")
    parser.add_argument("results", type=Path)
    parser.add_argument("--known", type=Path, action="append", default=[])
    parser.add_argument("-o", "--output", type=Path)
    args = parser.parse_args(argv)
    text = "\n".join(draft(args.results, args.known)) + "\n"
    if args.output:
        args.output.write_text(text)
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
