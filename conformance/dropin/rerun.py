"""Tell a flaky upstream test from one the swap breaks: rerun it, as shipped and swapped.

A test that passed as shipped and failed with impls swapped in is rerun ``RERUNS`` times in
both configurations, one after the other. If the swapped configuration passes at least once,
or the shipped one fails at least once, the first failure says nothing about the swap: the
test is listed as flaky (with its reruns) and not counted as broken. Only a test that fails on
every swapped rerun while passing on every shipped one stays broken.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

from conformance.dropin.compare import FAILED, PASSED, read_junit

RERUNS = 3


def node_id(test_id: str, root: Path) -> str | None:
    """pytest's node id of a junit test id (``pkg.module.Class::name``): the longest dotted
    prefix that is a file under ``root`` is the module, the rest are classes."""
    dotted, _, name = test_id.partition("::")
    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        path = Path(*parts[:cut]).with_suffix(".py")
        if (root / path).is_file():
            return "::".join([path.as_posix(), *parts[cut:], name])
    return None


def flaky(test_ids: list[str], root: Path, command, env: dict, scratch: Path,
          reruns: int = RERUNS) -> dict[str, str]:
    """{test id: what the reruns showed} for the tests among ``test_ids`` that are flaky.
    ``command(targets, junit, swapped)`` is the pytest command line of one run."""
    nodes = {t: node_id(t, root) for t in test_ids}
    targets = sorted({n for n in nodes.values() if n})
    if not targets:
        return {}
    outcomes: dict[str, dict[str, list[str]]] = {t: {"shipped": [], "swapped": []} for t in nodes}
    for attempt in range(reruns):
        for name in ("shipped", "swapped"):
            junit = scratch / f"rerun-{name}-{attempt}.xml"
            junit.unlink(missing_ok=True)
            subprocess.run(command(targets, junit, name == "swapped"), cwd=root, env=env,
                           stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT)
            results = read_junit(junit) if junit.is_file() else {}
            for test_id in nodes:
                result = results.get(test_id)
                outcomes[test_id][name].append(result.outcome if result else "not run")
    found = {}
    for test_id, seen in outcomes.items():
        if PASSED in seen["swapped"] or FAILED in seen["shipped"]:
            found[test_id] = (f"reruns as shipped: {', '.join(seen['shipped'])}; "
                              f"swapped: {', '.join(seen['swapped'])}")
    return found
