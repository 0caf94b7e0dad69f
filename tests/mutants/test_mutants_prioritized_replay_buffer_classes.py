"""The drop-in buffer-class mutants (tests/mutants/prioritized_replay_buffer_classes.py) each
fail the §5 buffer-class spec that names their bug; the same construction without an edit
passes every one. One suite run covers them."""

import pytest

from tests.family_mutants import run_mutants
from tests.mutants import assert_fails_with, assert_unmutated_passes
from tests.mutants.prioritized_replay_buffer_classes import MUTANTS

pytestmark = pytest.mark.slow

SPEC = "conformance/test_prioritized_replay_buffer_classes.py"
MODULE = "tests.mutants.prioritized_replay_buffer_classes"
TD, PLAIN = "TensorDictPrioritizedReplayBuffer", "PrioritizedReplayBuffer"

# mutant -> (words of its failure, the specs (node id tails) that must fail with them)
CASES = {
    "SAMPLER_NOT_SWAPPED": ("does not hand its options to the sampler", [
        f"test_example_buffer_caps_the_default[SAMPLER_NOT_SWAPPED-{TD}]"]),
    "UPPER_NOT_PASSED": ("default priority after a priority of 10", [
        f"test_example_buffer_caps_the_default[UPPER_NOT_PASSED-{PLAIN}]"]),
    "ALPHA_BETA_SWAPPED": ("tree values after", [
        f"test_example_buffer_follows_the_largest_priority_ever_given[ALPHA_BETA_SWAPPED-{TD}-eps=0.001]",
        f"test_example_buffer_caps_the_default[ALPHA_BETA_SWAPPED-{TD}]"]),
    "WITHIN_BUFFER_BY_DEFAULT": ("default priority after lowering the maximum", [
        f"test_example_buffer_follows_the_largest_priority_ever_given[WITHIN_BUFFER_BY_DEFAULT-{PLAIN}-eps=0.001]"]),
    "EPS_DEFAULT_WRONG": ("tree values after extend(10)", [
        f"test_example_buffer_follows_the_largest_priority_ever_given[EPS_DEFAULT_WRONG-{TD}-eps=default]"]),
}


@pytest.fixture(scope="module")
def suite_run(tmp_path_factory):
    return run_mutants(tmp_path_factory.mktemp("buffer_classes"), SPEC, MODULE,
                       [*CASES, "UNMUTATED"])


def test_every_mutant_has_a_case():
    assert set(CASES) == set(MUTANTS)


@pytest.mark.parametrize("mutant", list(CASES))
def test_mutant_fails_the_buffer_class_spec(suite_run, mutant):
    words, specs = CASES[mutant]
    assert_fails_with(suite_run, mutant, words, specs)


def test_the_unmutated_construction_passes(suite_run):
    assert_unmutated_passes(suite_run, 6)
