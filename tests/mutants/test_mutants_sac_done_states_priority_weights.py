"""The importance-weight mutants (tests/mutants/sac_done_states_priority_weights.py) each fail
the §3 specs of ``conformance/test_sac_done_states_priority_weights.py`` that name what they get
wrong, with their words; the construction without an edit passes every spec of the file. One
suite run covers them."""

import pytest

from tests.conftest import run_suite
from tests.mutants import assert_fails_with, assert_unmutated_passes
from tests.mutants.sac_done_states_priority_weights import MUTANTS

pytestmark = pytest.mark.slow

SPEC = "conformance/test_sac_done_states_priority_weights.py"
MODULE = "tests.mutants.sac_done_states_priority_weights"
KINDS = ("continuous", "discrete")
LAYOUTS = ("single", "per_agent", "nested")
SPECS_IN_FILE = 12
UNREDUCED = "test_unreduced_losses_carry_their_rows_weight[{}-%s-%s]"
MEAN = "test_the_reduced_loss_is_the_weighted_mean[{}-%s-%s]"


def _each(spec, layouts=LAYOUTS):
    return [spec % (k, lay) for k in KINDS for lay in layouts]


# mutant -> (words of its failure, the specs (node id tails) that must fail with them)
CASES = {
    "WEIGHTS_IGNORED": ("the weights are ignored", _each(UNREDUCED) + _each(MEAN)),
    "COUNT_NORMALISED": ("normalised by the count", _each(MEAN)),
    "WEIGHTS_AS_GIVEN": ("not broadcast over each row's agents",
                         _each(UNREDUCED, LAYOUTS[1:]) + _each(MEAN, LAYOUTS[1:])),
}


@pytest.fixture(scope="module")
def suite_run(tmp_path_factory):
    return run_suite(tmp_path_factory.mktemp("priority_weights"), SPEC, "--impl",
                     ",".join(f"{MODULE}:{name}" for name in [*CASES, "UNMUTATED"]))


def test_every_mutant_has_a_case():
    assert set(CASES) == set(MUTANTS)


@pytest.mark.parametrize("mutant", list(CASES))
def test_mutant_fails_the_weights_spec(suite_run, mutant):
    words, specs = CASES[mutant]
    assert_fails_with(suite_run, mutant, words, [s.format(mutant) for s in specs])


def test_the_unmutated_construction_passes(suite_run):
    assert_unmutated_passes(suite_run, SPECS_IN_FILE)
