"""The multi-level segment-tree mutants of the reference (tests/mutants/segment_tree.py) fail
the real-capacity spec of §5, each with the failure its edit causes; the same construction
without an edit passes it. One suite run covers them all (``--impl`` takes a list)."""

import pytest

from tests.conftest import run_suite
from tests.mutants import assert_unmutated_passes
from tests.mutants.segment_tree import MUTANTS

pytestmark = pytest.mark.slow

SPEC = "conformance/test_prioritized_replay.py"
SELECT = "multi_level_trees"  # test_multi_level_trees_agree_with_the_model only
MODULE = "tests.mutants.segment_tree"
TIMEOUT = 10  # seconds per spec: HEIGHT_DECREMENT never returns from the tree's constructor

# mutant -> (words of its failure, the capacities that must fail)
CASES = {
    "DESCENT_CUMSUM_DIM0": ("descent of a multi-level segment tree", ["3000", "100000"]),
    # at 3000 the reference's tree has one level below its top: the remaining mass is not
    # used after the last level, so only the 100 000-item tree (two levels) can tell
    "DESCENT_MASS_PLUS": ("descent of a multi-level segment tree", ["100000"]),
    "NO_SCRATCH": ("NameError", ["3000", "100000"]),
    "HEIGHT_DECREMENT": ("timed out", ["3000", "100000"]),
    "REBUILD_SKIPS_LEVELS": ("after load_state_dict", ["3000", "100000"]),
}


@pytest.fixture(scope="module")
def suite_run(tmp_path_factory):
    return run_suite(tmp_path_factory.mktemp("segment_tree"), SPEC, "-k", SELECT,
                     "--spec-timeout", str(TIMEOUT), "--impl",
                     ",".join(f"{MODULE}:{name}" for name in [*CASES, "UNMUTATED"]))


def test_every_mutant_has_a_case():
    assert set(CASES) == set(MUTANTS)


@pytest.mark.parametrize("mutant", list(CASES))
def test_mutant_fails_the_real_capacity_spec(suite_run, mutant):
    words, capacities = CASES[mutant]
    assert suite_run.results is not None, suite_run.output[-3000:]
    failing = {r["nodeid"].rsplit("capacity=", 1)[-1].rstrip("]"): r["message"]
               for r in suite_run.rows(implementation=mutant, outcome="fail")}
    missing = [c for c in capacities if words not in failing.get(c, "")]
    assert not missing, (f"{mutant}: capacities not failing with {words!r}: {missing}; "
                         f"failures: {failing}")


def test_the_unmutated_construction_passes(suite_run):
    assert_unmutated_passes(suite_run, 2)
