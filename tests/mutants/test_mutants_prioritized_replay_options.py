"""The one-line mutants of the reference in tests/mutants/prioritized_replay_options.py each fail
the §5 option spec that names their bug; the same construction without an edit passes every
one. One suite run covers them."""

import pytest

from tests.family_mutants import run_mutants
from tests.mutants import assert_fails_with, assert_unmutated_passes
from tests.mutants.prioritized_replay_options import MUTANTS

pytestmark = pytest.mark.slow

SPEC = "conformance/test_prioritized_replay_options.py"
MODULE = "tests.mutants.prioritized_replay_options"
TD, PLAIN = "TensorDictPrioritizedReplayBuffer", "PrioritizedReplayBuffer"
BOUNDARY = "test_a_mass_on_an_item_boundary_finds_a_leaf_of_positive_weight"
FLOAT64 = "test_float64_buffer_keeps_float64_precision"
FLOAT32 = "test_float64_priorities_in_a_float32_buffer"
REDUCTION = "test_reduction_of_a_td_error_with_several_entries"

# mutant -> (words of its failure, the specs (node id tails) that must fail with them)
CASES = {
    "STORAGE_IGNORED": ("of a buffer over LazyTensorStorage(3000) raised", [
        f"test_a_storage_past_1000_items_is_sampled_whole[STORAGE_IGNORED-{PLAIN}]"]),
    "DEFAULT_STORAGE_1001": ("is not sized for it", [
        "test_without_a_storage_the_buffer_holds_1000_items[DEFAULT_STORAGE_1001]"]),
    "DTYPE_NOT_PASSED": ("importance weights of a float64 buffer", [
        f"{FLOAT64}[DTYPE_NOT_PASSED]"]),
    "SYNC_IGNORED": ("default priority after update_priority", [
        f"test_sync_false_follows_the_same_law[SYNC_IGNORED-{TD}-upper=4.0]"]),
    "REDUCTION_NOT_PASSED": ("td_error reduced by", [
        f"{REDUCTION}[REDUCTION_NOT_PASSED-{r}]" for r in ("min", "mean", "median")]),
    "FLOAT32_TREE": ("tree values of a float64 buffer", [f"{FLOAT64}[FLOAT32_TREE]"]),
    "BOUNDARY_LOWER_BOUND_TOP": ("found a leaf of weight 0", [
        f"{BOUNDARY}[BOUNDARY_LOWER_BOUND_TOP-size={s}]" for s in (7, 3000, 100000)]),
    "BOUNDARY_LOWER_BOUND_BELOW": ("found a leaf of weight 0", [
        f"{BOUNDARY}[BOUNDARY_LOWER_BOUND_BELOW-size={s}]" for s in (3000, 100000)]),
    "STATE_TREES_FLOAT32": ("state_dict() of a float64 buffer raised RuntimeError", [
        f"{FLOAT64}[STATE_TREES_FLOAT32]"]),
    "FILES_ROUNDED_FOR_FLOAT64": ("sumtree.memmap of a float64 buffer", [
        f"{FLOAT64}[FILES_ROUNDED_FOR_FLOAT64]"]),
    "FILES_NOT_ROUNDED": ("holds values float32 cannot hold", [
        f"{FLOAT32}[FILES_NOT_ROUNDED-{k}]" for k in (TD, PLAIN)]),
}


@pytest.fixture(scope="module")
def suite_run(tmp_path_factory):
    return run_mutants(tmp_path_factory.mktemp("replay_options"), SPEC, MODULE,
                       [*CASES, "UNMUTATED"])


def test_every_mutant_has_a_case():
    assert set(CASES) == set(MUTANTS)


@pytest.mark.parametrize("mutant", list(CASES))
def test_mutant_fails_the_option_spec(suite_run, mutant):
    words, specs = CASES[mutant]
    assert_fails_with(suite_run, mutant, words, specs)


def test_the_unmutated_construction_passes(suite_run):
    assert_unmutated_passes(suite_run, 17)
