"""Nothing that did not run replaces anything (conformance/admission.py, the runner's promotion
of a column; issue #44)."""

from __future__ import annotations

from conformance.upstream import runner
from tests.manifest_rows import complete_rows as _complete_rows


def test_not_tested_rows_of_a_dead_pytest_never_replace_the_stored_column(tmp_path):
    """As tried: --pytest-args="--timeout=0.5 --timeout-method=thread" (an OOM kill, os._exit
    in TorchRL) killed pytest before it wrote results; a NOT TESTED row for every spec counted
    as complete and replaced reports/upstream/0.14.1.json."""
    rows = [dict(r, outcome="not tested", expected=False, message="NOT TESTED: pytest exited")
            for r in _complete_rows()]
    assert runner.complete_reason(rows) is None  # complete by count ...
    assert not runner.admissible(rows, -9)  # ... and still nothing that ran
    assert not runner.admissible([], 0)
    assert runner.admissible(_complete_rows(), 0)
    results = tmp_path / "upstream" / runner.PARTIAL_FOLDER / "0.14.1.json"
    results.parent.mkdir(parents=True)
    results.write_text("{}")
    assert runner._promote(results, runner.admissible(rows, -9)) == results
    assert not (tmp_path / "upstream" / "0.14.1.json").exists()
