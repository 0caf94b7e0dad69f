"""The §4 family mutants (``tests/mutants/ppo_value_clipping_family.py``) fail the family specs
with messages naming their bug, and pass what they do not break."""

import pytest

from tests.family_mutants import all_pass, assert_fails_naming, run_mutants

#: every test here reads a run of the whole suite on a mutant (a module fixture)
pytestmark = pytest.mark.slow

SPEC = "conformance/test_ppo_value_clipping_family.py"
MODULE = "tests.mutants.ppo_value_clipping_family"

#: mutant -> (text its failures must name, spec that must fail, minimum failures)
MUTANTS = {
    "CLIP_VALUE_NOT_SCHEDULABLE": ("made schedulable by pytorch/rl#3612",
                                   "test_rescheduled_clip_value_takes_effect", 8),
    "CLIP_VALUE_DROPPED": ("the value clipping shared by PPOLoss",
                           "test_every_loss_class_clips_like_baselines", 6),
    "TUPLE_EPSILON_PICKS_HIGH": ("clip_value=True with a tuple clip_epsilon was accepted",
                                 "test_tuple_clip_epsilon_with_clip_value_true_is_refused", 1),
}


@pytest.fixture(scope="module")
def mutant_run(tmp_path_factory):
    return run_mutants(tmp_path_factory.mktemp("ppo_family_mutants"), SPEC, MODULE, MUTANTS)


@pytest.mark.parametrize("mutant", list(MUTANTS))
def test_mutant_fails_the_family_specs(mutant_run, mutant):
    bug, spec, minimum = MUTANTS[mutant]
    assert_fails_naming(mutant_run, mutant, bug=bug, spec=spec, minimum=minimum)


def test_mutants_pass_what_they_do_not_break(mutant_run):
    for mutant, untouched in (("CLIP_VALUE_NOT_SCHEDULABLE", "test_every_loss_class"),
                              ("CLIP_VALUE_DROPPED", "test_tuple_clip_epsilon"),
                              ("TUPLE_EPSILON_PICKS_HIGH", "test_rescheduled")):
        assert all_pass(mutant_run, mutant, untouched), mutant
    assert all_pass(mutant_run, "CLIP_VALUE_DROPPED", "-ClipPPOLoss-c="), "ClipPPOLoss is intact"
