"""The survivors of the mutation run that the TanhNormal specs written from them catch
(tests/mutants/tanh_normal_edges.py): each fails the spec it names, in at least the parameter
sets it names; the same construction without an edit passes every one of those specs."""

import pytest

from tests.conftest import run_suite
from tests.mutants import assert_unmutated_passes
from tests.mutants.tanh_normal_edges import MUTANTS

pytestmark = pytest.mark.slow

SPEC = "conformance/test_tanh_normal_mode.py"
MODULE = "tests.mutants.tanh_normal_edges"
SPECS = sorted({spec for *_, spec, _ in MUTANTS.values()})


@pytest.fixture(scope="module")
def suite_run(tmp_path_factory):
    return run_suite(tmp_path_factory.mktemp("edges"), SPEC, "-k", " or ".join(SPECS), "--impl",
                     ",".join(f"{MODULE}:{name}" for name in [*MUTANTS, "UNMUTATED"]))


@pytest.mark.parametrize("mutant", list(MUTANTS))
def test_mutant_fails_its_spec(suite_run, mutant):
    assert suite_run.results is not None, suite_run.output[-3000:]
    *_, spec, must_fail = MUTANTS[mutant]
    failing = {r["parameters"] for r in suite_run.rows(implementation=mutant, outcome="fail")
               if r["nodeid"].split("::")[-1].startswith(spec + "[")}
    assert failing >= must_fail, [(r["nodeid"], r["outcome"]) for r in
                                  suite_run.rows(implementation=mutant)]


def test_the_unmutated_construction_passes(suite_run):
    assert_unmutated_passes(suite_run, 22)
