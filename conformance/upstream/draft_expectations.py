"""Draft an expectations file from a run's results, for review.

    python -m conformance.upstream.draft_expectations reports/upstream/0.13.3.json \
        [--known conformance/expectations/torchrl-0.14.1.txt ...] [-o FILE]

Every failing (or known-failing) test of the run becomes an entry: a whole spec when all its
parameter sets fail, else one line per test. Reason and link are copied from a ``--known`` file
whose entry covers the same spec; otherwise the line says ``REVIEW`` and has no link, which the
expectations parser rejects: a drafted file cannot be used before a person has reviewed it.
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
        prefixes = [spec] if len(failing) == len(rows) else [r["nodeid"] for r in failing]
        for prefix in prefixes:
            match = next((e for e in known_entries
                          if prefix.startswith(e.prefix) or e.prefix.startswith(prefix)), None)
            if match is not None:
                lines.append(f"{prefix} | {match.reason} | {match.link}")
            else:
                message = failing[0]["message"].splitlines()[0][:160] if failing[0]["message"] else ""
                lines.append(f"{prefix} | REVIEW: {message} | TODO")
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
