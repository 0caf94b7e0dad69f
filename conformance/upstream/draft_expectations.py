"""Draft a release's expectations file from a run's results, for review.

    python -m conformance.upstream.draft_expectations reports/upstream/0.15.0.json \
        [--known conformance/expectations/torchrl-0.14.1.txt ...] [-o FILE]

The draft is a release file in the folded form: header comments, ``include torchrl.txt for
<version>`` (entries shared by releases, written once in ``conformance/expectations/torchrl.txt``)
and one entry per failing (or known-failing) test the included entries do not already cover: a
whole spec when all its parameter sets fail for one known reason, else one line per test; a test
that "cannot be tested here" becomes an ``untestable:`` entry. Reason and link are copied from a
``--known`` entry that covers the very test; otherwise the line says ``REVIEW`` and has no link,
which the expectations parser rejects: a drafted file cannot be used before a person has
reviewed it. After review, ``python -m conformance.upstream.fold_expectations`` moves the lines
the new release shares with others into ``torchrl.txt``.
"""

from __future__ import annotations

import re
import sys
from collections import defaultdict
from pathlib import Path

from conformance.cli import OneLineErrors
from conformance.plugin import expectation_file as ef
from conformance.plugin.expectations import EXPECTATIONS_DIR
from conformance.reporting.results_file import ResultsFileError, read

FAILING = {"fail", "error", "known failure"}
UNTESTABLE = {"untestable"}
SHARED = EXPECTATIONS_DIR / "torchrl.txt"


def _spec_prefix(nodeid: str) -> str:
    return nodeid.split("[", 1)[0]


def _shared_for(version: str, shared: Path) -> list[ef.Entry]:
    """The shared entries an ``include`` of the drafted file will bring in."""
    if not shared.is_file():
        return []
    return ef.entries_for(ef.read(shared), version, f"for {version}")


def _failure(entry: ef.Entry) -> str:
    """The known entry's failure clause, copied with it: without it a copied entry would accept
    any failure of the test, also one with another cause than the reason names."""
    return f" | {entry.failure}" if entry.failure else ""


def _fails_as_known(entry: ef.Entry, message: str) -> bool:
    """Whether a failure (its message, ``"<ExceptionName>: <text>"``) is the one ``entry``
    describes: same exception name and pattern found. A known entry of another release names a
    cause; the same test failing another way on this release has another cause, so its reason
    must not be copied (only the name is compared: a subclass reads as another failure, and the
    line is left for review, the safe side)."""
    if not entry.failure:
        return True
    name = message.split(":", 1)[0].strip()
    if entry.raises and entry.raises.rsplit(".", 1)[-1] != name:
        return False
    return not entry.pattern or re.search(entry.pattern, message) is not None


def _lines(kind: str, spec: str, rows: list[dict], known: list[ef.Entry]) -> list[str]:
    marker = "untestable: " if kind == ef.UNTESTABLE else ""
    covering = [next((e for e in known if e.kind == kind and r["nodeid"].startswith(e.prefix)
                      and _fails_as_known(e, r["message"] or "")), None) for r in rows]
    if covering[0] is not None and all(c is covering[0] for c in covering):
        return [f"{marker}{spec} | {covering[0].reason} | {covering[0].link}"
                f"{_failure(covering[0])}"]
    lines = []
    for row, entry in zip(rows, covering, strict=True):
        if entry is not None:
            lines.append(f"{marker}{row['nodeid']} | {entry.reason} | {entry.link}"
                         f"{_failure(entry)}")
        else:
            message = row["message"].splitlines()[0][:160] if row["message"] else ""
            lines.append(f"{marker}{row['nodeid']} | REVIEW: {message} | TODO")
    return lines


def draft(results: Path, known: list[Path], shared: Path = SHARED) -> list[str]:
    document = read(results)
    version = document["implementations"].get("torchrl", "").split("+", 1)[0]
    known_entries = [e for path in known for e in ef.every_entry(path)]
    included = _shared_for(version, shared) if version else []
    by_spec: dict[str, list[dict]] = defaultdict(list)
    for row in document["rows"]:
        if not any(row["nodeid"].startswith(e.prefix) for e in included):
            by_spec[_spec_prefix(row["nodeid"])].append(row)
    stack = document.get("stack", {})
    lines = [f"# Known failures of torchrl {version} (tensordict {stack.get('tensordict')}, "
             f"torch {stack.get('torch')}).",
             "# [untestable:] <test-id prefix> | <reason> | <upstream link>",
             "# Drafted by conformance.upstream.draft_expectations; reviewed by hand.",
             f"include {shared.name} for {version}", ""]
    for spec, rows in sorted(by_spec.items()):
        for kind, outcomes in ((ef.FAIL, FAILING), (ef.UNTESTABLE, UNTESTABLE)):
            matching = [r for r in rows if r["outcome"] in outcomes]
            if not matching:
                continue
            if len(matching) == len(rows):  # a whole spec: one line when one reason covers it
                lines += _lines(kind, spec, matching, known_entries)
            else:
                lines += [line for row in matching
                          for line in _lines(kind, row["nodeid"], [row], known_entries)]
    return lines


def main(argv=None) -> int:
    parser = OneLineErrors(prog="python -m conformance.upstream.draft_expectations")
    parser.add_argument("results", type=Path)
    parser.add_argument("--known", type=Path, action="append", default=[])
    parser.add_argument("-o", "--output", type=Path)
    args = parser.parse_args(argv)
    try:
        text = "\n".join(draft(args.results, args.known)) + "\n"
    except (ResultsFileError, ef.ExpectationsError) as exc:
        print(f"{parser.prog}: error: {exc}", file=sys.stderr)
        return 2
    if args.output:
        args.output.write_text(text, encoding="utf-8")
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
