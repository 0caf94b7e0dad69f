"""The segment-tree API mutants of the reference (tests/mutants/prioritized_replay_trees.py)
fail the §5 tree specs (conformance/test_prioritized_replay_trees.py) with the failure their
edit causes; the same construction without an edit passes them. One suite run covers them."""

import pytest

from tests.conftest import run_suite
from tests.mutants import assert_unmutated_passes
from tests.mutants.prioritized_replay_trees import MUTANTS

pytestmark = pytest.mark.slow

SPEC = "conformance/test_prioritized_replay_trees.py"
MODULE = "tests.mutants.prioritized_replay_trees"
TREE = "test_segment_tree_agrees_with_the_model"
SAMPLER = "test_sampler_sum_tree_agrees_with_the_model"
PAST = "test_an_index_past_the_last_leaf_is_refused"

# mutant -> (words of its failure, node id tails (after the mutant's name) that must fail)
CASES = {
    "QUERY_DROPS_RIGHT_EDGE": ("query(start, end) != the", [
        f"{TREE}[{{m}}-size=3000-reduce=sum]", f"{TREE}[{{m}}-size=1000000-reduce=min]",
        f"{SAMPLER}[{{m}}-capacity=100000]"]),
    "QUERY_TOP_SHORT": ("query(start, end) != the", [
        f"{TREE}[{{m}}-size=7-reduce=sum]", f"{TREE}[{{m}}-size=1000000-reduce=sum]"]),
    "SETITEM_NO_BROADCAST": ("Number of indices", [f"{TREE}[{{m}}-size=1000-reduce=sum]"]),
    "SCAN_PAST_TOP": ("scan_lower_bound(mass", [
        f"{TREE}[{{m}}-size=3000-reduce=sum]", f"{TREE}[{{m}}-size=1000000-reduce=sum]",
        f"{SAMPLER}[{{m}}-capacity=3000]"]),
    "CHANNEL_QUERY_MIN": ("sampler._sum_tree.query", [f"{SAMPLER}[{{m}}-capacity=3000]"]),
    "CHANNEL_SCAN_VALUES": ("scan_lower_bound(mass inside item i's share) != i",
                            [f"{SAMPLER}[{{m}}-capacity=100000]"]),
    "SETITEM_UNCHECKED": ("a refused tree[[2, 7]] = [v, v] changed the tree",
                          [f"{PAST}[{{m}}-reduce=sum]", f"{PAST}[{{m}}-reduce=min]"]),
}


@pytest.fixture(scope="module")
def suite_run(tmp_path_factory):
    return run_suite(tmp_path_factory.mktemp("trees"), SPEC, "--impl",
                     ",".join(f"{MODULE}:{name}" for name in [*CASES, "UNMUTATED"]))


def test_every_mutant_has_a_case():
    assert set(CASES) == set(MUTANTS)


@pytest.mark.parametrize("mutant", list(CASES))
def test_mutant_fails_the_tree_spec(suite_run, mutant):
    words, specs = CASES[mutant]
    assert suite_run.results is not None, suite_run.output[-3000:]
    failing = {r["nodeid"].split("::", 1)[-1]: r["message"]
               for r in suite_run.rows(implementation=mutant, outcome="fail")}
    specs = [s.format(m=mutant) for s in specs]
    missing = [s for s in specs if words not in failing.get(s, "")]
    assert not missing, (f"{mutant}: not failing with {words!r}: {missing}; failures: "
                         f"{ {k: v[:200] for k, v in failing.items()} }")


def test_the_unmutated_construction_passes(suite_run):
    assert_unmutated_passes(suite_run, 23)
