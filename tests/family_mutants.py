"""What the family mutant self-tests (``tests/mutants/test_mutants_<area>_family.py``) share: one suite
run for all of a module's mutants, and the check that a mutant fails the right spec, naming
its bug."""

from __future__ import annotations

from tests.conftest import SuiteRun, run_suite


def run_mutants(tmp_path, spec: str, module: str, names) -> SuiteRun:
    """``spec`` on every mutant of ``module`` side by side, without expectations."""
    impls = ",".join(f"{module}:{name}" for name in names)
    return run_suite(tmp_path, spec, "--impl", impls, "--no-report", "--expectations", "none")


def assert_fails_naming(run: SuiteRun, mutant: str, *, bug: str, spec: str, minimum: int) -> None:
    """The run failed, with at least ``minimum`` failures of ``spec`` for ``mutant`` whose
    message contains ``bug``."""
    __tracebackhide__ = True
    assert run.returncode == 1, run.output[-3000:]
    failing = [r for r in run.rows(implementation=mutant) if r["outcome"] == "fail"]
    naming = [r for r in failing if bug in r["message"] and spec in r["nodeid"]]
    assert len(naming) >= minimum, (
        f"{mutant}: expected >= {minimum} failures of {spec} naming {bug!r}, got "
        f"{len(naming)} of {len(failing)}:\n"
        + "\n".join(f"{r['nodeid']}: {r['message'][:300]}" for r in failing))


def all_pass(run: SuiteRun, mutant: str, node_part: str) -> bool:
    """Some tests of ``mutant`` have ``node_part`` in their id, and every one passed."""
    rows = [r for r in run.rows(implementation=mutant) if node_part in r["nodeid"]]
    return bool(rows) and all(r["outcome"] == "pass" for r in rows)
