"""The one-line mutants of the reference composite distribution in
tests/mutants/composite_log_prob_edges.py fail the §2 edge-input specs of issue #31, each with the
message of the spec it breaks; the same construction without an edit passes them."""

import pytest

from tests.conftest import run_suite
from tests.mutants import assert_unmutated_passes
from tests.mutants.composite_log_prob_edges import MUTANTS

pytestmark = pytest.mark.slow

SPEC = "conformance/test_composite_log_prob.py"
MODULE = "tests.mutants.composite_log_prob_edges"
SELECTED = ("out_of_range or leading_sample_dims or mean_exploration_with_normal_heads "
            "or without_a_head or trailing-singleton-batch or includes_the_sum "
            "or declares_the_keys")
WITH_SUM = "test_log_prob_composite_includes_the_sum"
OUT_OF_RANGE = "test_out_of_range_categorical_action_is_refused_naming_the_head"
NOT_REFUSED = "is not refused with a ValueError naming its head"
# mutant -> [(spec id fragment, text its failure message must contain)]
FAILS = {
    "OUT_OF_RANGE_UNCHECKED": [(f"{OUT_OF_RANGE}[OUT_OF_RANGE_UNCHECKED-action=n]", NOT_REFUSED)],
    "NEGATIVE_UNCHECKED": [(f"{OUT_OF_RANGE}[NEGATIVE_UNCHECKED-action=-1]", NOT_REFUSED)],
    "REFUSAL_NAMES_NOTHING": [(f"{OUT_OF_RANGE}[REFUSAL_NAMES_NOTHING-action=n]", NOT_REFUSED),
                              (f"{OUT_OF_RANGE}[REFUSAL_NAMES_NOTHING-action=-1]", NOT_REFUSED)],
    "FAST_PATH_FOR_SAMPLES": [("test_actions_with_leading_sample_dims",
                               "scoring [S, B] samples raised")],
    "SINGLETON_OF_ANY_HEAD": [("test_actions_with_leading_sample_dims",
                               "scoring [S, B] samples raised")],
    "SINGLETON_AFTER_DIM_1": [("heads=seed-trailing-singleton-batch=[B,2]", "scoring the sample raised"),
                              ("heads=mixed-trailing-singleton-batch=[B,2]", "scoring the sample raised")],
    "MEAN_OF_NORMAL_REFUSED": [("test_mean_exploration_with_normal_heads[MEAN_OF_NORMAL_REFUSED-heads=normal]",
                                "the actor raised under exploration=mean"),
                               ("test_mean_exploration_with_normal_heads[MEAN_OF_NORMAL_REFUSED-heads=normal-first]",
                                "the actor raised under exploration=mean")],
    "MISSING_HEAD_LISTS_NOTHING": [("test_sample_without_a_head_is_refused_naming_it",
                                    "is not refused with a KeyError naming the head")],
    "SUM_WHEN_NOT_ASKED": [(f"{WITH_SUM}[SUM_WHEN_NOT_ASKED-heads=seed-mode=in-place]",
                            "no aggregate log-prob"),
                           (f"{WITH_SUM}[SUM_WHEN_NOT_ASKED-heads=mixed-mode=include_sum]",
                            "no aggregate log-prob")],
    "OUT_KEYS_LEFT_TO_TORCHRL": [("test_actor_declares_the_keys_it_writes[OUT_KEYS_LEFT_TO_TORCHRL-heads=seed]",
                                  "do not name the keys its samples are written to")],
    "IN_PLACE_WRITES_NOTHING": [(f"{WITH_SUM}[IN_PLACE_WRITES_NOTHING-heads=seed-mode=in-place]",
                                 "no log-prob written for head")],
}


@pytest.fixture(scope="module")
def suite_run(tmp_path_factory):
    return run_suite(tmp_path_factory.mktemp("composite_edges"), SPEC, "-k", SELECTED, "--impl",
                     ",".join(f"{MODULE}:{name}" for name in [*MUTANTS, "UNMUTATED"]))


def test_every_mutant_has_a_case():
    assert set(FAILS) == set(MUTANTS)


@pytest.mark.parametrize("mutant", list(MUTANTS))
def test_mutant_fails_the_edge_spec(suite_run, mutant):
    assert suite_run.results is not None, suite_run.output[-3000:]
    failing = suite_run.rows(implementation=mutant, outcome="fail")
    for spec, text in FAILS[mutant]:
        named = [r for r in failing if spec in r["nodeid"] and text in r["message"]]
        assert named, (f"{mutant}: no failure of {spec} saying {text!r}; failures:\n"
                       + "\n".join(f"{r['nodeid']}: {r['message'][:300]}" for r in failing))


def test_the_unmutated_construction_passes(suite_run):
    # 2 out-of-range + 1 leading dims + 2 MEAN + 1 missing head + 2 [B, 2] layouts + 4 sums
    # + 2 declared keys
    assert_unmutated_passes(suite_run, 14)
