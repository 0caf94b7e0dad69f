"""The reference sampler's index-and-priority mutants (tests/mutants/prioritized_replay_indices.py)
each fail the §5 spec of the input form they break
(conformance/test_prioritized_replay_indices.py); the same construction without an edit passes
them all. One suite run covers them."""

import pytest

from tests.conftest import run_suite
from tests.mutants import assert_fails_with, assert_unmutated_passes
from tests.mutants.prioritized_replay_indices import MUTANTS

pytestmark = pytest.mark.slow

SPEC = "conformance/test_prioritized_replay_indices.py"
MODULE = "tests.mutants.prioritized_replay_indices"
UPDATE = "test_update_priority_takes_every_index_form[{}-{}]"
COORDS = "test_coordinates_of_a_two_dimensional_storage[{}-{}]"
MARK = "test_mark_update_gives_the_default_once_per_slot[{}-{}]"
HISTORICAL = "test_historical_maximum_through_every_form[{}]"

# mutant -> (words of its failure, the specs (node id tails, {} = the mutant) that must fail)
CASES = {
    "MINUS_ONE_KEPT": ("index -1 is out of bounds", [
        UPDATE.format("{}", "minus-one-entries"), UPDATE.format("{}", "only-minus-one"),
        UPDATE.format("{}", "minus-one-and-repeats"), MARK.format("{}", "minus-one-entries"),
        MARK.format("{}", "only-minus-one")]),
    "SLOT_ZERO_DROPPED": ("tree values after update_priority (minus-one-entries)", [
        UPDATE.format("{}", "minus-one-entries")]),
    "STALE_SCRATCH": ("tree values after update_priority (minus-one-and-repeats)", [
        UPDATE.format("{}", "minus-one-and-repeats")]),
    "LONG_BATCH_CUT": ("Expected index [20]", [
        UPDATE.format("{}", "longer-than-the-buffer"), HISTORICAL]),
    "INDEX_DTYPE_KEPT": ("Expected a long tensor for index", [
        UPDATE.format("{}", "int32-index"), COORDS.format("{}", "int32-pairs-to-the-sampler")]),
    "COORDINATES_COLUMN_MAJOR": ("out of bounds", [
        COORDS.format("{}", "pairs-to-the-buffer"), COORDS.format("{}", "tuple-to-the-buffer"),
        COORDS.format("{}", "pairs-to-the-sampler")]),
    "PRIORITY_LENGTH_UNCHECKED": ("does not say what is wrong", [
        "test_more_priorities_than_indices_are_refused[{}]"]),
    "COORDINATES_WITHOUT_STORAGE": ("refused with another error than TorchRL's", [
        "test_coordinates_without_the_storage_are_refused[{}]"]),
    "DEFAULT_NOT_SEEN": ("below the initial 1.0 != 1.0", [HISTORICAL]),
    "GIVEN_NOT_SEEN": ("a new maximum given as a list", [HISTORICAL]),
    "REPLACED_NOT_GIVEN": ("12.5, then replaced", [HISTORICAL]),
    "REPEATS_OF_MARK_UPDATE": ("'NoneType' object has no attribute 'ndim'", [
        MARK.format("{}", "repeated-slots"), HISTORICAL]),
    "INDEX_CLAMPED": ("in a buffer of 7 slots was accepted", [
        f"test_an_index_past_the_capacity_is_refused[{{}}-index={i}]" for i in ("7", "9", "2,9")]),
}


@pytest.fixture(scope="module")
def suite_run(tmp_path_factory):
    return run_suite(tmp_path_factory.mktemp("indices"), SPEC, "--impl",
                     ",".join(f"{MODULE}:{name}" for name in [*CASES, "UNMUTATED"]))


def test_every_mutant_has_a_case():
    assert set(CASES) == set(MUTANTS)


@pytest.mark.parametrize("mutant", list(CASES))
def test_mutant_fails_the_index_spec(suite_run, mutant):
    words, specs = CASES[mutant]
    assert_fails_with(suite_run, mutant, words, [s.format(mutant) for s in specs])


def test_the_unmutated_construction_passes(suite_run):
    assert_unmutated_passes(suite_run, 33)
