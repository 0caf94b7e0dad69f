"""The §3 family mutants (``tests/mutants/sac_done_states.py``, bottom) fail the family specs
with messages naming their bug, and pass what they do not break."""

import pytest

from tests.family_mutants import all_pass, assert_fails_naming, run_mutants

#: every test here reads a run of the whole suite on a mutant (a module fixture)
pytestmark = pytest.mark.slow

SPEC = "conformance/test_sac_done_states_family.py"
MODULE = "tests.mutants.sac_done_states"

#: mutant -> (text its failures must name, spec that must fail, minimum failures)
MUTANTS = {
    "MASKED_ACTION_ACTOR_NAN": ("the actor loss scores the policy by p * logits",
                                "test_discrete_masked_actions_give_finite_losses", 4),
    "MASKED_ACTION_SKIP_NAN": ("the skip path scores the next policy by its logits",
                               "test_discrete_masked_actions_give_finite_losses", 2),
    "FIRST_TWO_QVALUE_NETS": ("more than two Q-networks", "test_more_than_two_qvalue_networks",
                              16),
}


@pytest.fixture(scope="module")
def mutant_run(tmp_path_factory):
    return run_mutants(tmp_path_factory.mktemp("sac_family_mutants"), SPEC, MODULE, MUTANTS)


@pytest.mark.parametrize("mutant", list(MUTANTS))
def test_mutant_fails_the_family_specs(mutant_run, mutant):
    bug, spec, minimum = MUTANTS[mutant]
    assert_fails_naming(mutant_run, mutant, bug=bug, spec=spec, minimum=minimum)


def test_mutants_pass_what_they_do_not_break(mutant_run):
    """The skip-path mutant passes with the flag off; the masked-action mutants pass the
    ensemble specs; the ensemble mutant passes the masked-action specs."""
    assert all_pass(mutant_run, "MASKED_ACTION_SKIP_NAN", "skip=False")
    for mutant in ("MASKED_ACTION_ACTOR_NAN", "MASKED_ACTION_SKIP_NAN"):
        assert all_pass(mutant_run, mutant, "more_than_two"), mutant
    assert all_pass(mutant_run, "FIRST_TWO_QVALUE_NETS", "masked")
