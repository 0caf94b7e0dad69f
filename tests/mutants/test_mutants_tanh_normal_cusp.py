"""The small-batch-start mutants of the reference TanhNormal (tests/mutants/tanh_normal_cusp.py)
fail the §1 cusp spec in both dtypes; the same construction without an edit passes it."""

import pytest

from tests.conftest import run_suite
from tests.mutants import assert_unmutated_passes
from tests.mutants.tanh_normal_cusp import MUTANTS

pytestmark = pytest.mark.slow

SPEC = "conformance/test_tanh_normal_mode.py"
MODULE = "tests.mutants.tanh_normal_cusp"
# the dtypes each mutant must fail in: CUSP_Q_DIV moves the mode by less than float32's
# tolerance (1e-4), so only float64 can tell
DTYPES = {"CUSP_Q_DIV": {"float64"}, "CUSP_CUBE_ROOT": {"float64", "float32"},
          "CUSP_P_SIGN": {"float64", "float32"}, "CUSP_ROOT_SIGN": {"float64", "float32"}}


@pytest.fixture(scope="module")
def suite_run(tmp_path_factory):
    return run_suite(tmp_path_factory.mktemp("cusp"), SPEC, "-k", "near_the_cusp and not seeded", "--impl",
                     ",".join(f"{MODULE}:{name}" for name in [*MUTANTS, "UNMUTATED"]))


def test_every_mutant_has_a_case():
    assert set(DTYPES) == set(MUTANTS)


@pytest.mark.parametrize("mutant", list(MUTANTS))
def test_mutant_fails_the_cusp_spec(suite_run, mutant):
    assert suite_run.results is not None, suite_run.output[-3000:]
    failing = {r["parameters"] for r in suite_run.rows(implementation=mutant, outcome="fail")
               if "mode is not the argmax of the TanhNormal density" in r["message"]}
    assert failing >= DTYPES[mutant], [(r["nodeid"], r["outcome"]) for r in
                                       suite_run.rows(implementation=mutant)]


def test_the_unmutated_construction_passes(suite_run):
    assert_unmutated_passes(suite_run, 2)
