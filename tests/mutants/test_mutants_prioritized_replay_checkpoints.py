"""The checkpoint mutants (tests/mutants/prioritized_replay_checkpoints.py) each fail the §5
checkpoint spec that names their bug, with its words; the same construction without an edit
passes every checkpoint spec. One suite run covers them."""

import pytest

from tests.family_mutants import run_mutants
from tests.mutants import assert_fails_with, assert_unmutated_passes
from tests.mutants.prioritized_replay_checkpoints import CHECKPOINT_MUTANTS, SAMPLER_MUTANTS

pytestmark = pytest.mark.slow

SPEC = "conformance/test_prioritized_replay_checkpoints.py"
MODULE = "tests.mutants.prioritized_replay_checkpoints"
LEGACY = "version-less-transformed-max"
SPECS = 27  # the spec file's tests, per implementation

# mutant -> (words of its failure, the specs (node id tails) that must fail with them)
CASES = {
    "LEGACY_MAX_TAKEN_RAW": ("must be recomputed from the trees", [
        f"test_torchrl_files_are_read[LEGACY_MAX_TAKEN_RAW-{LEGACY}]",
        f"test_torchrl_state_dict_is_read[LEGACY_MAX_TAKEN_RAW-{LEGACY}]"]),
    "RAW_NOT_INVERTED": ("default priority after", [
        "test_torchrl_files_are_read[RAW_NOT_INVERTED-schema-1]",
        f"test_torchrl_files_are_read[RAW_NOT_INVERTED-{LEGACY}]",
        "test_torchrl_state_dict_is_read[RAW_NOT_INVERTED-schema-1]"]),
    "EMPTY_MIN_SLOTS_ZERO": ("mintree.memmap: empty slots", [
        "test_dumped_files_are_torchrl_format[EMPTY_MIN_SLOTS_ZERO]"]),
    "TREES_NOT_WRITTEN": ("state_dict['_sum_tree'][i] != (p + eps)^alpha", [
        "test_torchrl_state_dict_is_read[TREES_NOT_WRITTEN-schema-1]"]),
    "LOAD_KEEPS_OWN_EPS": ("tree value of the new item", [
        "test_file_checkpoint_carries_its_parameters[LOAD_KEEPS_OWN_EPS]"]),
    "CAPACITY_NOT_CHECKED": ("state_dict checkpoint of another capacity", [
        "test_checkpoint_of_another_capacity_is_refused[CAPACITY_NOT_CHECKED-torchrl-entries-into-capacity=8]",
        "test_checkpoint_of_another_capacity_is_refused[CAPACITY_NOT_CHECKED-torchrl-entries-into-capacity=32]"]),
    "RAW_FILE_NOT_READ": ("then alpha 0.0 -> 0.9", [
        "test_file_checkpoint_at_alpha_zero_keeps_the_priorities[RAW_FILE_NOT_READ]"]),
    "HISTORICAL_NOT_RESTORED": ("largest priority ever given", [
        "test_example_buffer_checkpoint_keeps_the_largest_priority_ever_given[HISTORICAL_NOT_RESTORED-own-files]",
        "test_example_buffer_checkpoint_keeps_the_largest_priority_ever_given[HISTORICAL_NOT_RESTORED-torchrl-files]",
        "test_example_buffer_checkpoint_keeps_the_largest_priority_ever_given[HISTORICAL_NOT_RESTORED-state_dict]"]),
    "NO_MAXIMUM_FILL_TWO": ("checkpoint without a maximum != initial value", [
        "test_torchrl_files_at_alpha_zero_without_a_maximum[NO_MAXIMUM_FILL_TWO]"]),
    "RAW_FILE_UNPICKLED": ("ran code from a tampered file", [
        "test_a_tampered_checkpoint_file_runs_no_code[RAW_FILE_UNPICKLED]"]),
}


@pytest.fixture(scope="module")
def suite_run(tmp_path_factory):
    return run_mutants(tmp_path_factory.mktemp("checkpoints"), SPEC, MODULE,
                       [*CASES, "UNMUTATED"])


def test_every_mutant_has_a_case():
    assert set(CASES) == {"LEGACY_MAX_TAKEN_RAW", *CHECKPOINT_MUTANTS, *SAMPLER_MUTANTS}


@pytest.mark.parametrize("mutant", list(CASES))
def test_mutant_fails_the_checkpoint_spec(suite_run, mutant):
    words, specs = CASES[mutant]
    assert_fails_with(suite_run, mutant, words, specs)


def test_the_legacy_mutant_reads_current_checkpoints(suite_run):
    """Only the version-less format tells the pre-#4014 loader apart (its other failures are
    TorchRL 0.14.1's own, in the expectations)."""
    rows = [r for r in suite_run.rows(implementation="LEGACY_MAX_TAKEN_RAW")
            if "_read[" in r["nodeid"] and LEGACY not in r["nodeid"]]
    assert len(rows) == 2 and all(r["outcome"] == "pass" for r in rows), [
        (r["nodeid"], r["outcome"]) for r in rows]


def test_the_unmutated_construction_passes(suite_run):
    assert_unmutated_passes(suite_run, SPECS)
