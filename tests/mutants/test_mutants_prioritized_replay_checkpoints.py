"""The checkpoint mutants (tests/mutants/prioritized_replay_checkpoints.py) each fail the §5
checkpoint spec that names their bug, with its words; the same construction without an edit
passes every checkpoint spec. One suite run covers them."""

import pytest

from tests.family_mutants import run_mutants
from tests.mutants.prioritized_replay_checkpoints import CHECKPOINT_MUTANTS, SAMPLER_MUTANTS

pytestmark = pytest.mark.slow

SPEC = "conformance/test_prioritized_replay_checkpoints.py"
MODULE = "tests.mutants.prioritized_replay_checkpoints"
LEGACY = "version-less-transformed-max"

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
    assert suite_run.results is not None, suite_run.output[-3000:]
    failing = {r["nodeid"].split("::", 1)[-1]: r["message"]
               for r in suite_run.rows(implementation=mutant, outcome="fail")}
    missing = [s for s in specs if words not in failing.get(s, "")]
    assert not missing, f"{mutant}: not failing with {words!r}: {missing}; failures: {failing}"


def test_the_legacy_mutant_reads_current_checkpoints(suite_run):
    """Only the version-less format tells the pre-#4014 loader apart."""
    rows = suite_run.rows(implementation="LEGACY_MAX_TAKEN_RAW")
    assert rows and all(r["outcome"] == "pass" for r in rows if LEGACY not in r["nodeid"]), [
        (r["nodeid"], r["outcome"]) for r in rows]


def test_the_unmutated_construction_passes(suite_run):
    rows = suite_run.rows(implementation="UNMUTATED")
    assert len(rows) == 9 and all(r["outcome"] == "pass" for r in rows), [
        (r["nodeid"], r["outcome"], r["message"][:300]) for r in rows]
