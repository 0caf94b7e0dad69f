"""The §2 family mutants (``tests/mutants/composite_log_prob_family.py``) fail the family specs
with messages naming their bug, and pass what they do not break."""

import pytest

from tests.family_mutants import all_pass, assert_fails_naming, run_mutants

#: every test here reads a run of the whole suite on a mutant (a module fixture)
pytestmark = pytest.mark.slow

SPEC = "conformance/test_composite_log_prob_family.py"
MODULE = "tests.mutants.composite_log_prob_family"

#: mutant -> (text its failures must name, spec that must fail, minimum failures)
MUTANTS = {
    "LOG_WEIGHTS_AVERAGED": ("the log-weights were not summed over the heads",
                             "test_ppo_ratio_of_a_changed_policy", 6),
    "ENTROPY_ELEMENTWISE": ("each head's entropy is weighted as it comes",
                            "test_entropy_bonus_of_a_composite_policy", 2),
    "ENTROPY_TOP_LEVEL_KEYS": ("not by the nested key of each head",
                               "test_entropy_bonus_of_a_composite_policy", 4),
}


@pytest.fixture(scope="module")
def mutant_run(tmp_path_factory):
    return run_mutants(tmp_path_factory.mktemp("composite_family_mutants"), SPEC, MODULE, MUTANTS)


@pytest.mark.parametrize("mutant", list(MUTANTS))
def test_mutant_fails_the_family_specs(mutant_run, mutant):
    bug, spec, minimum = MUTANTS[mutant]
    assert_fails_naming(mutant_run, mutant, bug=bug, spec=spec, minimum=minimum)


def test_mutants_pass_what_they_do_not_break(mutant_run):
    for mutant in ("ENTROPY_ELEMENTWISE", "ENTROPY_TOP_LEVEL_KEYS"):
        assert all_pass(mutant_run, mutant, "ratio"), mutant
        assert all_pass(mutant_run, mutant, "coeff=one"), mutant
    assert all_pass(mutant_run, "LOG_WEIGHTS_AVERAGED", "entropy")
