"""Who may write a record, and when: nothing that did not run replaces anything.

A results document is a *run* only when something ran: it has rows, it is not partial, and
not every row is NOT TESTED (the rows a runner writes for a pytest that died before writing
results, or for a source that never installed, are complete by count and still nothing that
ran). Only a run may become a column of the upstream matrix, a merged matrix or a history
record (the history asks more: a complete run of the manifest by TorchRL alone, see
``conformance.history``). A base module (no plug-in, no pytest): the history and the verdict parents import it.
"""

from __future__ import annotations

from pathlib import Path

from conformance import manifest

NOT_TESTED = "not tested"  # conformance.outcomes.NOT_TESTED, without the import


def not_a_run(document: dict) -> str | None:
    """Why ``document`` (a results file's content) is not a run that may replace a record, in
    a few words; None when it is one."""
    if not isinstance(document, dict):
        return "not a results document"
    if document.get("partial"):
        return f"a partial run ({str(document['partial'])[:200]})"
    rows = document.get("rows")
    if not isinstance(rows, list) or not rows:
        return "no results"
    if any(isinstance(r, dict) and r.get("outcome") == NOT_TESTED for r in rows):
        tested = sum(1 for r in rows if isinstance(r, dict) and r.get("outcome") != NOT_TESTED)
        return (f"{len(rows) - tested} NOT TESTED row(s)" if tested
                else "every row is NOT TESTED: nothing ran")
    return None


def _normalized(spec: str) -> str:
    """A spec id as the manifest writes it, whatever folder the suite was collected from
    (``../site-packages/conformance/test_x.py::t`` -> ``conformance/test_x.py::t``)."""
    path, sep, rest = spec.partition("::")
    parts = Path(path).parts
    if len(parts) >= 2 and parts[-2] == "conformance":
        path = f"conformance/{parts[-1]}"
    return f"{path}{sep}{rest}"


def rows_reason(rows, implementations, run_device: str, expected=None) -> str | None:
    """Why ``rows`` are not a complete run, judged from the rows alone (None: they are).

    Complete: every spec id of the committed manifest has a row with an outcome for every
    implementation in ``implementations``, on ``run_device``, and there is no row of another
    implementation, another device or a spec the manifest does not list (a stale manifest is
    no verdict either: regenerate it). Used by the results plug-in, the upstream runner and
    ``bugs --verify``; ``expected`` (spec ids) replaces the manifest in self-tests."""
    try:
        specs = manifest.spec_ids() if expected is None else frozenset(expected)
    except manifest.ManifestError as exc:
        return str(exc)
    implementations = list(dict.fromkeys(implementations))
    if not implementations:
        return "no implementation was selected"
    have: dict[str, set[str]] = {impl: set() for impl in implementations}
    strangers, elsewhere, unknown = set(), set(), set()
    for row in rows:
        if not isinstance(row, dict) or row.get("outcome") is None:
            continue
        impl, nodeid = row.get("implementation"), str(row.get("nodeid", ""))
        if impl not in have:
            strangers.add(str(impl))
            continue
        if row.get("device", run_device) != run_device:
            elsewhere.add(str(row.get("device")))
            continue
        spec = _normalized(manifest.spec_id(nodeid, impl))
        if spec not in specs:
            unknown.add(spec)
            continue
        have[impl].add(spec)
    reasons = []
    for impl in implementations:
        missing = specs - have[impl]
        if missing:
            reasons.append(f"{len(missing)} of {len(specs)} specs have no {impl} row (e.g. "
                           f"{min(missing)})")
    if strangers:
        reasons.append(f"rows of implementation(s) not selected: {', '.join(sorted(strangers))}")
    if elsewhere:
        reasons.append(f"rows of another device than {run_device}: {', '.join(sorted(elsewhere))}")
    if unknown:
        reasons.append(f"{len(unknown)} row(s) of specs not in conformance/manifest.json (e.g. "
                       f"{min(unknown)}; a stale manifest? `python -m conformance.manifest`)")
    return "; ".join(reasons) or None
