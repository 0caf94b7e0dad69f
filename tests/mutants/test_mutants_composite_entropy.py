"""The one-line mutants of the per-head entropy coefficients in tests/mutants/composite_entropy.py
fail the §2 spec on coefficients that leave a head out, each with that spec's message; the same
construction without an edit passes it."""

import pytest

from tests.conftest import run_suite
from tests.mutants.composite_entropy import MUTANTS

pytestmark = pytest.mark.slow

SPEC = "conformance/test_composite_log_prob_family.py"
MODULE = "tests.mutants.composite_entropy"
FAILS = {
    "MISSING_COEFF_NAMES_NOTHING": "the error for a missing entropy coefficient does not name",
    "MISSING_COEFF_BREAKS": "raised something else than a KeyError naming the head",
}


@pytest.fixture(scope="module")
def suite_run(tmp_path_factory):
    return run_suite(tmp_path_factory.mktemp("composite_entropy"), SPEC, "-k", "missing_a_head",
                     "--impl", ",".join(f"{MODULE}:{name}" for name in [*MUTANTS, "UNMUTATED"]))


def test_every_mutant_has_a_case():
    assert set(FAILS) == set(MUTANTS)


@pytest.mark.parametrize("mutant", list(MUTANTS))
def test_mutant_fails_the_spec(suite_run, mutant):
    assert suite_run.results is not None, suite_run.output[-3000:]
    failing = suite_run.rows(implementation=mutant, outcome="fail")
    assert any(FAILS[mutant] in r["message"] for r in failing), (
        f"{mutant}: no failure saying {FAILS[mutant]!r}; failures:\n"
        + "\n".join(f"{r['nodeid']}: {r['message'][:300]}" for r in failing))


def test_the_unmutated_construction_passes(suite_run):
    rows = suite_run.rows(implementation="UNMUTATED")
    assert len(rows) == 1 and rows[0]["outcome"] == "pass", [
        (r["nodeid"], r["outcome"], r["message"][:300]) for r in rows]
