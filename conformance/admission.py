"""Who may write a record, and when: nothing that did not run replaces anything.

A results document is a *run* only when something ran: it has rows, it is not partial, and
not every row is NOT TESTED (the rows a runner writes for a pytest that died before writing
results, or for a source that never installed, are complete by count and still nothing that
ran). Only a run may become a column of the upstream matrix, a merged matrix or a history
record (the history asks more: a complete run of the manifest by TorchRL alone, see
``conformance.history``). A leaf module: the rows are plain dicts.
"""

from __future__ import annotations

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
