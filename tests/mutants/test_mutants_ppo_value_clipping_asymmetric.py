"""The clip-range mutants (tests/mutants/ppo_value_clipping_asymmetric.py) fail §4's clip-range
spec for both asymmetric ranges, naming the symmetric range they used, and pass the symmetric
one; the construction without an edit passes every case. One suite run covers them."""

import pytest

from tests.conftest import run_suite
from tests.mutants import assert_fails_with, assert_unmutated_passes
from tests.mutants.ppo_value_clipping_asymmetric import MUTANTS

pytestmark = pytest.mark.slow

SPEC = "conformance/test_ppo_value_clipping_asymmetric.py"
MODULE = "tests.mutants.ppo_value_clipping_asymmetric"
SPEC_NAME = "test_the_clip_range_sets_the_objective_and_the_clip_fraction"
CASES = {"SYMMETRIC_LOW": "clip_epsilon=0.2 is used on both sides",
         "SYMMETRIC_HIGH": "clip_epsilon=0.28 is used on both sides"}


@pytest.fixture(scope="module")
def suite_run(tmp_path_factory):
    return run_suite(tmp_path_factory.mktemp("clip-range"), SPEC, "--impl",
                     ",".join(f"{MODULE}:{name}" for name in [*CASES, "UNMUTATED"]))


def test_every_mutant_has_a_case():
    assert set(CASES) == set(MUTANTS)


@pytest.mark.parametrize("mutant", list(CASES))
def test_mutant_fails_the_asymmetric_ranges(suite_run, mutant):
    assert_fails_with(suite_run, mutant, CASES[mutant],
                      [f"{SPEC_NAME}[{mutant}-clip_epsilon=(0.2,0.28)]"])
    assert_fails_with(suite_run, mutant, "loss_objective !=",
                      [f"{SPEC_NAME}[{mutant}-clip_epsilon=(0.1,0.3)]"])
    symmetric = [r for r in suite_run.rows(implementation=mutant)
                 if r["parameters"] == "clip_epsilon=0.2"]
    assert [r["outcome"] for r in symmetric] == ["pass"], symmetric


def test_the_unmutated_construction_passes(suite_run):
    assert_unmutated_passes(suite_run, 3)
