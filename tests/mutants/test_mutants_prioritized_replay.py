"""Each historical prioritized-replay bug, plugged in with --impl, fails the §5 specs with a
message naming it; the bug-free harness passes them; torchrl without its C++ segment trees is
"cannot be tested here" on every spec (never a pass, never a crash).

One suite run covers every mutant (``--impl`` takes a comma-separated list), as a user would.
"""

import pytest

from conformance import outcomes
from conformance.implementations.torchrl_areas.prioritized_replay import extension_problem
from tests.conftest import run_suite

#: every test here reads a run of the whole suite on a mutant (a module fixture)
pytestmark = pytest.mark.slow

SPEC = "conformance/test_prioritized_replay.py"
MUTANTS = "tests.mutants.prioritized_replay"

# mutant -> (words of its likely-cause line, the specs that must fail naming it)
CASES = {
    "HISTORICAL_MAX": ("historical maximum", [
        "test_lowering_the_max_priority_lowers_the_default",
        "test_item_written_over_the_max_slot_gets_the_max_of_what_remains"]),
    "DOUBLE_TRANSFORM": ("double transform", [
        "test_tree_holds_the_transformed_priority_once",
        "test_new_item_gets_the_largest_stored_priority"]),
    "FALLBACK_AFTER_OVERWRITE": ("fallback to the initial value", [
        "test_default_after_overwriting_the_max_slot_is_the_max_of_what_remains",
        "test_item_written_over_the_max_slot_gets_the_max_of_what_remains"]),
    "LAST_INDEX_NEVER_SAMPLED": ("openai/baselines#171", [
        "test_every_stored_index_is_reachable",
        "test_sampling_frequencies_follow_the_priorities"]),
    "UNNORMALISED_WEIGHTS": ("not normalised by the minimum", [
        "test_importance_weights_are_normalised_by_the_minimum"]),
    # the 256-draw batches of the spec above always hold the least likely item, where a batch
    # normaliser agrees with the buffer's: only the small-batch spec tells them apart
    "BATCH_MAX_WEIGHTS": ("normalised by the largest weight in the batch", [
        "test_small_batch_weights_are_normalised_by_the_buffer_minimum"]),
}


@pytest.fixture(scope="module")
def suite_run(tmp_path_factory):
    impls = [*CASES, "CORRECT", "NO_EXTENSION", "HISTORICAL_MAX_BY_DESIGN"]
    return run_suite(tmp_path_factory.mktemp("prioritized"), SPEC, "--impl",
                     ",".join(f"{MUTANTS}:{name}" for name in impls))


@pytest.mark.parametrize("mutant", list(CASES))
def test_mutant_fails_the_specs_naming_its_bug(suite_run, mutant):
    bug, specs = CASES[mutant]
    assert suite_run.results is not None, suite_run.output[-3000:]
    failing = suite_run.rows(implementation=mutant, outcome="fail")
    naming = {r["spec"] for r in failing if bug in r["message"]}
    missing = [s for s in specs if s not in naming]
    assert not missing, (
        f"{mutant}: specs that do not fail naming {bug!r}: {missing}; failures:\n"
        + "\n".join(f"{r['nodeid']}: {r['message'][:300]}" for r in failing))


def test_a_documented_design_is_quoted_with_its_documentation(suite_run):
    """An implementation that documents the historical maximum as its design (cpprb, Tianshou)
    fails the same specs, and each message says so in its words and links its documentation."""
    failing = suite_run.rows(implementation="HISTORICAL_MAX_BY_DESIGN", outcome="fail")
    quoted = [r for r in failing if "documented design of this implementation: new items get "
              "the largest priority ever set" in r["message"]
              and "see: https://example.org/docs/per" in r["message"]]
    assert {r["spec"] for r in quoted} >= set(CASES["HISTORICAL_MAX"][1]), [
        r["message"][-400:] for r in failing]


def test_the_bug_free_harness_passes(suite_run):
    """The mutants share everything but their bug with this one, so their failures are the
    bug's and not the harness's."""
    # the specs of optional capabilities the harness does not provide are not applicable
    rows = [r for r in suite_run.rows(implementation="CORRECT")
            if r["outcome"] != outcomes.NOT_APPLICABLE]
    assert rows and all(r["outcome"] == "pass" for r in rows), [
        (r["nodeid"], r["outcome"], r["message"][:300]) for r in rows if r["outcome"] != "pass"]


def test_missing_cpp_extension_is_not_tested_on_every_spec(suite_run):
    """Its only area cannot load: nothing of it is tested, every spec says why, none passes."""
    rows = suite_run.rows(implementation="NO_EXTENSION")
    assert rows, suite_run.output[-3000:]
    bad = [(r["nodeid"], r["outcome"]) for r in rows if r["outcome"] != "not tested"]
    assert not bad, bad
    assert all("SumSegmentTreeFp32" in r["message"] for r in rows), rows[0]["message"]
    # the mutants' failures make the run fail; nothing crashed (results written for all)
    assert suite_run.returncode == 1
    assert len(rows) == len(suite_run.rows(implementation="CORRECT"))


class _NameErrorSampler:  # torchrl 0.6 - 0.9: the tree classes are undefined names
    def __init__(self, *args, **kwargs):
        raise NameError("name 'SumSegmentTreeFp32' is not defined")


class _OtherError:
    def __init__(self, *args, **kwargs):
        raise RuntimeError("something unrelated")


def test_extension_detection_across_releases():
    assert "SumSegmentTreeFp32" in extension_problem(_NameErrorSampler)
    with pytest.raises(RuntimeError, match="unrelated"):
        extension_problem(_OtherError)
