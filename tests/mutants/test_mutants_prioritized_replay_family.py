"""The §5 family mutants (``tests/mutants/prioritized_replay_family.py``) fail the family specs
with messages naming their bug, and pass what they do not break."""

import pytest

from tests.family_mutants import all_pass, assert_fails_naming, run_mutants

#: every test here reads a run of the whole suite on a mutant (a module fixture)
pytestmark = pytest.mark.slow

SPEC = "conformance/test_prioritized_replay_family.py"
MODULE = "tests.mutants.prioritized_replay_family"

#: mutant -> (text its failures must name, spec that must fail, minimum failures)
MUTANTS = {
    "SLICE_STATE_NOT_SAVED": ("its state_dict / load_state_dict are SliceSampler's",
                              "test_slice_checkpoint_restores_the_priorities", 4),
    "LOAD_ALIASES_CHECKPOINT": ("load_state_dict kept references to the checkpoint's objects",
                                "test_loaded_checkpoint_is_not_aliased", 1),
}


@pytest.fixture(scope="module")
def mutant_run(tmp_path_factory):
    return run_mutants(tmp_path_factory.mktemp("per_family_mutants"), SPEC, MODULE, MUTANTS)


@pytest.mark.parametrize("mutant", list(MUTANTS))
def test_mutant_fails_the_family_specs(mutant_run, mutant):
    bug, spec, minimum = MUTANTS[mutant]
    assert_fails_naming(mutant_run, mutant, bug=bug, spec=spec, minimum=minimum)


def test_aliasing_mutant_passes_the_round_trips(mutant_run):
    """Nothing writes to a loaded buffer in the round-trip specs: aliasing cannot show there."""
    assert all_pass(mutant_run, "LOAD_ALIASES_CHECKPOINT", "round-trips")
