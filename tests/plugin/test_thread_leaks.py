"""A thread started by one implementation that changes torch's default dtype later is never
blamed on the next implementation's spec (issue #44): the change names the implementation
whose thread was running, and the run is no verdict."""

from __future__ import annotations

from collections import Counter

import pytest

from conformance.plugin import isolation
from tests.conftest import run_suite


def test_a_thread_is_owned_by_the_implementation_that_started_it():
    import threading

    owners = isolation.ThreadOwners()
    stop = threading.Event()
    before = isolation.thread_idents()
    thread = threading.Thread(target=stop.wait, name="theirs", daemon=True)
    thread.start()
    try:
        owners.claim(before, "A")
        owners.claim(before, "B")  # already owned: A's, whoever asks later
        assert owners.others("B", set()) == ["'A' (thread 'theirs')"]
        assert owners.others("A", set()) == []
    finally:
        stop.set()
        thread.join()
    assert owners.others("B", set()) == []  # ended, and not seen during the test
    assert owners.others("B", {thread.ident}) == ["'A' (thread 'theirs')"]


@pytest.mark.slow
@pytest.mark.parametrize("workers", [[], ["-n", "2"]])
def test_a_late_thread_leak_is_never_blamed_on_the_next_implementation(tmp_path, workers):
    """As tried: the change of a thread started by one implementation was blamed on the next
    implementation's spec."""
    run = run_suite(tmp_path, "conformance", "--impl", "tests.leaks.thread:LATE,reference",
                    "--expectations", "none", "-k", "ppo", *workers)
    reference = Counter(r["outcome"] for r in run.rows(implementation="reference"))
    assert set(reference) == {"pass"}, run.output[-3000:]
    partial = run.results["partial"]
    # it landed in a test of LATE (then blamed on LATE) or of the reference (then no one's test
    # and the run is no verdict); never an error row of the reference
    late_errors = [r for r in run.rows(implementation="LATE") if "global state" in r["message"]]
    assert late_errors or "by a thread an implementation started" in partial, run.output[-3000:]
    if not late_errors:
        assert "thread started by implementation 'LATE' (thread 'late-dtype')" in partial
        assert "default dtype: torch.float32 -> torch.float64" in partial
