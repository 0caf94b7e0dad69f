"""The eviction and gather-buffer mutants of the reference's multi-level tree
(tests/mutants/segment_tree_evictions.py) fail the §5 specs written for them, each with the
failure its edit causes, and only those: an eviction mutant passes the batch-size spec and the
gather-buffer mutant the eviction spec. The same construction without an edit passes both. One
suite run covers them all (``--impl`` takes a list)."""

import pytest

from tests.conftest import run_suite
from tests.mutants import assert_unmutated_passes
from tests.mutants.segment_tree_evictions import MUTANTS

pytestmark = pytest.mark.slow

SPECS = ("conformance/test_prioritized_replay.py", "conformance/test_prioritized_replay_trees.py")
SELECT = "evicting_a_maximum_deep or sampler_sum_tree_after_batches_of_every_size"
MODULE = "tests.mutants.segment_tree_evictions"
EVICTION = "test_evicting_a_maximum_deep_in_a_multi_level_tree"
BATCHES = "test_sampler_sum_tree_after_batches_of_every_size"
NEW_ITEMS = "= the largest priority among the items that stay"
SUMS = "sampler._sum_tree.query(0, end) != the sum of (p + eps)^alpha"

# mutant -> (words of its failure, the spec that must fail, its capacities)
CASES = {
    "EVICTION_ANCESTORS_OF_NODE_0": (NEW_ITEMS, EVICTION, ["3000", "100000"]),
    "EVICTION_ROOT_IN_LEVEL_1": (NEW_ITEMS, EVICTION, ["3000", "100000"]),
    "GATHER_BUFFER_BY_BRANCHING": (SUMS, BATCHES, ["4000", "100000"]),
}


@pytest.fixture(scope="module")
def suite_run(tmp_path_factory):
    return run_suite(tmp_path_factory.mktemp("segment_tree_evictions"), *SPECS, "-k", SELECT,
                     "--impl", ",".join(f"{MODULE}:{name}" for name in [*CASES, "UNMUTATED"]))


def test_every_mutant_has_a_case():
    assert set(CASES) == set(MUTANTS)


@pytest.mark.parametrize("mutant", list(CASES))
def test_mutant_fails_its_spec_and_only_it(suite_run, mutant):
    words, spec, capacities = CASES[mutant]
    assert suite_run.results is not None, suite_run.output[-3000:]
    rows = suite_run.rows(implementation=mutant)
    failing = {r["nodeid"].split("::", 1)[-1]: r["message"] for r in rows
               if r["outcome"] == "fail"}
    want = {f"{spec}[{mutant}-capacity={c}]" for c in capacities}
    missing = [s for s in sorted(want) if words not in failing.get(s, "")]
    assert not missing, (f"{mutant}: not failing with {words!r}: {missing}; failures: "
                         f"{ {k: v[:200] for k, v in failing.items()} }")
    # the other spec passes: each edit is told apart by the spec written for it
    others = [(r["nodeid"], r["outcome"]) for r in rows
              if spec not in r["nodeid"] and r["outcome"] != "pass"]
    assert len(rows) == 4 and not others, (len(rows), others)


def test_the_unmutated_construction_passes(suite_run):
    assert_unmutated_passes(suite_run, 4)
