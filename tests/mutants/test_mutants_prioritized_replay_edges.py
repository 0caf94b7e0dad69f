"""The reference sampler's edge-input mutants (tests/mutants/prioritized_replay_edges.py) each
fail the §5 edge-input spec that names their input; the same construction without an edit
passes them all. One suite run covers them."""

import pytest

from tests.conftest import run_suite
from tests.mutants import assert_fails_with, assert_unmutated_passes
from tests.mutants.prioritized_replay_edges import MUTANTS

pytestmark = pytest.mark.slow

SPEC = "conformance/test_prioritized_replay.py"
SELECT = ("edge_inputs or beta_zero or carries_its_alpha or negative_exponent or "
          "zero_priorities or historical_maximum")
MODULE = "tests.mutants.prioritized_replay_edges"

# mutant -> (words of its failure, the specs (node id tails) that must fail with them)
CASES = {
    "FIRST_OF_REPEATS": ("after update_priority (repeated-", [
        "test_update_priority_edge_inputs[FIRST_OF_REPEATS-repeated-index]",
        "test_update_priority_edge_inputs[FIRST_OF_REPEATS-repeated-max]"]),
    "SCALAR_PRIORITY_NOT_BROADCAST": ("Number of indices", [
        "test_update_priority_edge_inputs[SCALAR_PRIORITY_NOT_BROADCAST-one-priority-in-a-list]"]),
    "BETA_ZERO_REFUSED": ("beta must be greater or equal to 0", [
        "test_beta_zero_gives_weights_of_one[BETA_ZERO_REFUSED]"]),
    "LOAD_KEEPS_OWN_ALPHA": ("tree value of the new item", [
        "test_checkpoint_carries_its_alpha[LOAD_KEEPS_OWN_ALPHA]"]),
    "REFUSAL_NAMES_NOTHING": ("does not name the parameter", [
        "test_a_negative_exponent_is_refused_naming_it[REFUSAL_NAMES_NOTHING-beta]"]),
    "HISTORICAL_IS_LAST_GIVEN": ("!= largest ever given", [
        "test_without_in_buffer_tracking_the_default_is_the_historical_maximum"
        "[HISTORICAL_IS_LAST_GIVEN]"]),
    "ZERO_MASS_SAMPLED": ("returned draws", [
        "test_all_zero_priorities_with_eps_zero_refuse_to_sample[ZERO_MASS_SAMPLED]"]),
}


@pytest.fixture(scope="module")
def suite_run(tmp_path_factory):
    return run_suite(tmp_path_factory.mktemp("edges"), SPEC, "-k", SELECT, "--impl",
                     ",".join(f"{MODULE}:{name}" for name in [*CASES, "UNMUTATED"]))


def test_every_mutant_has_a_case():
    assert set(CASES) == set(MUTANTS)


@pytest.mark.parametrize("mutant", list(CASES))
def test_mutant_fails_the_edge_spec(suite_run, mutant):
    words, specs = CASES[mutant]
    assert_fails_with(suite_run, mutant, words, specs)


def test_the_unmutated_construction_passes(suite_run):
    assert_unmutated_passes(suite_run, 10)
