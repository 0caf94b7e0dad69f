"""Compare two junit-xml runs of the same tests: which tests the swap breaks, and why.

A test is *broken by the swap* when it passed as shipped and fails (or errors) with the
``impls`` classes. Each one is either matched by an entry of ``differences.DOCUMENTED`` (a
deliberate difference, with its reason and spec) or grouped under its failure message, with
numbers, addresses and quoted values blanked so that one cause gives one group.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections import defaultdict
from dataclasses import dataclass, field

from conformance.dropin.differences import DOCUMENTED, Difference

PASSED, FAILED, SKIPPED = "passed", "failed", "skipped"


@dataclass(frozen=True)
class Result:
    outcome: str
    message: str = ""


def read_junit(path) -> dict[str, Result]:
    """{test id: Result} from a junit xml file written by ``pytest --junitxml``."""
    results: dict[str, Result] = {}
    for case in ET.parse(path).getroot().iter("testcase"):
        test_id = f"{case.get('classname', '')}::{case.get('name', '')}"
        outcome, message = PASSED, ""
        for child in case:
            if child.tag in ("failure", "error"):
                outcome = FAILED
                message = child.get("message") or (child.text or "").strip().splitlines()[-1:]
                message = message if isinstance(message, str) else " ".join(message)
                break
            if child.tag == "skipped":
                outcome = SKIPPED
        results[test_id] = Result(outcome, message)
    return results


def signature(message: str) -> str:
    """The failure message with run-specific details blanked (one line)."""
    line = (message.strip().splitlines() or [""])[0]
    line = re.sub(r"0x[0-9a-fA-F]+", "ADDR", line)
    line = re.sub(r"tensor\(.*", "tensor(…)", line)
    line = re.sub(r"\d+(\.\d+)?(e[-+]?\d+)?", "N", line)
    return line[:200]


def documented(test_id: str, message: str) -> Difference | None:
    for difference in DOCUMENTED:
        if re.search(difference.tests, test_id) and re.search(difference.message, message):
            return difference
    return None


@dataclass
class Comparison:
    total: int
    broken: dict[str, list[str]]  # signature -> test ids (undocumented)
    deliberate: dict[Difference, list[str]]  # documented -> test ids
    fixed: list[str]  # failed as shipped, pass swapped
    missing: list[str]  # ran as shipped, absent from the swapped run
    flaky: dict[str, str] = field(default_factory=dict)  # test id -> what its reruns showed


def compare(shipped: dict[str, Result], swapped: dict[str, Result]) -> Comparison:
    broken: dict[str, list[str]] = defaultdict(list)
    deliberate: dict[Difference, list[str]] = defaultdict(list)
    fixed, missing = [], []
    for test_id, before in sorted(shipped.items()):
        after = swapped.get(test_id)
        if after is None:
            if before.outcome != SKIPPED:
                missing.append(test_id)
            continue
        if before.outcome == PASSED and after.outcome == FAILED:
            difference = documented(test_id, after.message)
            if difference is None:
                broken[signature(after.message)].append(test_id)
            else:
                deliberate[difference].append(test_id)
        elif before.outcome == FAILED and after.outcome == PASSED:
            fixed.append(test_id)
    return Comparison(len(shipped), dict(broken), dict(deliberate), fixed, missing)


def render(comparison: Comparison, shipped: dict[str, Result], swapped: dict[str, Result],
           source: str) -> str:
    """A markdown report."""
    def count(results, outcome):
        return sum(r.outcome == outcome for r in results.values())

    lines = [
        "# TorchRL's own tests with the reference classes swapped in",
        "",
        f"Tests: {source}",
        "",
        "| run | passed | failed | skipped |",
        "|---|---|---|---|",
        f"| as shipped | {count(shipped, PASSED)} | {count(shipped, FAILED)} | "
        f"{count(shipped, SKIPPED)} |",
        f"| impls swapped in | {count(swapped, PASSED)} | {count(swapped, FAILED)} | "
        f"{count(swapped, SKIPPED)} |",
        "",
        f"## Broken by the swap, undocumented: {sum(map(len, comparison.broken.values()))}",
        "",
    ]
    for sig, ids in sorted(comparison.broken.items(), key=lambda kv: -len(kv[1])):
        lines.append(f"- **{len(ids)}** × `{sig}`")
        lines += [f"  - `{i}`" for i in ids[:10]]
        if len(ids) > 10:
            lines.append(f"  - … and {len(ids) - 10} more")
    lines += ["", "## Broken by the swap on purpose (documented differences): "
              f"{sum(map(len, comparison.deliberate.values()))}", ""]
    for difference, ids in comparison.deliberate.items():
        lines.append(f"- **{len(ids)}** × {difference.title}: {difference.reason} "
                     f"(spec: {difference.spec})")
        lines += [f"  - `{i}`" for i in ids[:10]]
        if len(ids) > 10:
            lines.append(f"  - … and {len(ids) - 10} more")
    lines += ["", f"## Flaky upstream, not counted (failed once swapped, then passed on rerun "
              f"or failed as shipped too): {len(comparison.flaky)}", ""]
    lines += [f"- `{i}`: {seen}" for i, seen in sorted(comparison.flaky.items())]
    lines += ["", f"## Failing as shipped, passing swapped: {len(comparison.fixed)}", ""]
    lines += [f"- `{i}`" for i in comparison.fixed]
    if comparison.missing:
        lines += ["", f"## Ran as shipped, missing from the swapped run: "
                      f"{len(comparison.missing)}", ""]
        lines += [f"- `{i}`" for i in comparison.missing[:50]]
    return "\n".join(lines) + "\n"
