"""The composite-critic mutants (tests/mutants/ppo_value_clipping_composite.py) each fail the
§4 composite spec that names what they get wrong, for every set of heads, and pass the other;
the construction without an edit passes both. One suite run covers them."""

import pytest

from tests.conftest import run_suite
from tests.mutants import assert_fails_with, assert_unmutated_passes
from tests.mutants.ppo_value_clipping_composite import MUTANTS

pytestmark = pytest.mark.slow

SPEC = "conformance/test_ppo_value_clipping_composite.py"
MODULE = "tests.mutants.ppo_value_clipping_composite"
HEADS = ("reward", "reward,cost", "a,b,c")
CLIPPED = "test_each_head_is_clipped_against_its_stored_prediction[{}-heads={}]"
REDUCED = "test_each_heads_loss_is_reduced[{}-heads={}]"
CASES = {  # mutant -> (words, the spec it fails, the spec it passes)
    "STORED_OVERWRITTEN": ("clipped around itself", CLIPPED, REDUCED),
    "COMPOSITE_UNREDUCED": ("of a composite critic is not reduced", REDUCED, CLIPPED),
}


@pytest.fixture(scope="module")
def suite_run(tmp_path_factory):
    return run_suite(tmp_path_factory.mktemp("composite"), SPEC, "--impl",
                     ",".join(f"{MODULE}:{name}" for name in [*CASES, "UNMUTATED"]))


def test_every_mutant_has_a_case():
    assert set(CASES) == set(MUTANTS)


@pytest.mark.parametrize("mutant", list(CASES))
def test_mutant_fails_its_composite_spec(suite_run, mutant):
    words, failing, passing = CASES[mutant]
    assert_fails_with(suite_run, mutant, words, [failing.format(mutant, h) for h in HEADS])
    passed = {r["nodeid"].split("::", 1)[-1] for r in suite_run.rows(implementation=mutant,
                                                                       outcome="pass")}
    assert passed == {passing.format(mutant, h) for h in HEADS}, passed


def test_the_unmutated_construction_passes(suite_run):
    assert_unmutated_passes(suite_run, 2 * len(HEADS))
