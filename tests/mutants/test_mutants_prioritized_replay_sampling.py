"""The reference's sampling mutants (tests/mutants/prioritized_replay_sampling.py) each fail the
§5 sampling spec that names their input, with its words; the same construction without an edit
passes every spec of the file. One suite run covers them."""

import pytest

from tests.conftest import run_suite
from tests.mutants import assert_fails_with, assert_unmutated_passes
from tests.mutants.prioritized_replay_sampling import MUTANTS

pytestmark = pytest.mark.slow

SPEC = "conformance/test_prioritized_replay_sampling.py"
MODULE = "tests.mutants.prioritized_replay_sampling"
SPECS_IN_FILE = 18

# mutant -> (words of its failure, the specs (node id tails) that must fail with them)
CASES = {
    "ALPHA_ZERO_REFUSED": ("alpha must be greater or equal than 0", [
        "test_alpha_zero_samples_uniformly[ALPHA_ZERO_REFUSED]"]),
    "GLOBAL_TORCH_STREAM": ("two draws with the same generator seed differ", [
        "test_draws_depend_only_on_the_generator[GLOBAL_TORCH_STREAM]"]),
    "EMPTY_REFUSAL_SILENT": ("without saying it is empty", [
        "test_sampling_an_empty_buffer_is_refused[EMPTY_REFUSAL_SILENT]"]),
    "UPPER_ZERO_ACCEPTED": ("a buffer was built with upper_priority = 0", [
        "test_a_non_positive_upper_bound_is_refused_naming_it[UPPER_ZERO_ACCEPTED-upper=0]"]),
    "DEFAULT_EPS_ONE": ("tree values of a sampler built with TorchRL's defaults", [
        "test_sampler_defaults_are_torchrls[DEFAULT_EPS_ONE]"]),
    "DEFAULT_WITHIN_BUFFER": ("after lowering the maximum and writing two items", [
        "test_sampler_defaults_are_torchrls[DEFAULT_WITHIN_BUFFER]"]),
    "WEIGHTS_IN_FLOAT64": ("another dtype than the sampler's", [
        "test_sampler_defaults_are_torchrls[WEIGHTS_IN_FLOAT64]",
        "test_weights_come_in_the_samplers_dtype[WEIGHTS_IN_FLOAT64-dtype=float32]"]),
    "NUMPY_MASS_FROM_ONE": ("draws do not follow numpy's global stream", [
        "test_sampler_defaults_are_torchrls[NUMPY_MASS_FROM_ONE]"]),
    "NEGATIVE_EPS_ACCEPTED": ("a buffer was built with eps = -0.5", [
        "test_a_negative_keyword_is_refused_naming_it[NEGATIVE_EPS_ACCEPTED-eps=-0.5]"]),
    "INITIAL_ZERO_REFUSED": ("initial_priority must be >= 0", [
        "test_initial_priority_is_the_first_default[INITIAL_ZERO_REFUSED-initial_priority=0]"]),
    "ZERO_MASS_WORDS": ("is not TorchRL's", [
        "test_zero_mass_is_refused_with_torchrls_error[ZERO_MASS_WORDS]"]),
    "INDEX_AS_TUPLE": ("not one vector of indices", [
        "test_sampler_defaults_are_torchrls[INDEX_AS_TUPLE]"]),
    "REDUCTION_DEFAULT_UNKNOWN": ("Unknown reduction method MAX", [
        "test_td_error_rows_reduce_by_the_samplers_reduction"
        "[REDUCTION_DEFAULT_UNKNOWN-reduction=default]"]),
    "SWAP_DROPS_GENERATOR": ("draws do not follow the buffer's own generator", [
        "test_a_buffers_own_generator_sets_its_draws"
        "[SWAP_DROPS_GENERATOR-TensorDictPrioritizedReplayBuffer]"]),
}


@pytest.fixture(scope="module")
def suite_run(tmp_path_factory):
    return run_suite(tmp_path_factory.mktemp("sampling"), SPEC, "--impl",
                     ",".join(f"{MODULE}:{name}" for name in [*CASES, "UNMUTATED"]))


def test_every_mutant_has_a_case():
    assert set(CASES) == set(MUTANTS)


@pytest.mark.parametrize("mutant", list(CASES))
def test_mutant_fails_the_sampling_spec(suite_run, mutant):
    words, specs = CASES[mutant]
    assert_fails_with(suite_run, mutant, words, specs)


def test_the_unmutated_construction_passes(suite_run):
    assert_unmutated_passes(suite_run, SPECS_IN_FILE)
