"""The one-line mutants of the reference ClipPPOLoss (tests/mutants/ppo_value_clipping_options.py)
each fail the §4 spec written for them, naming the bug; the same construction without an edit
passes every spec of the options file and the seed spec's clip_value=0.0 case."""

import pytest

from tests.conftest import run_suite
from tests.mutants import assert_unmutated_passes
from tests.mutants.ppo_value_clipping_options import MUTANTS

pytestmark = pytest.mark.slow

OPTIONS = "conformance/test_ppo_value_clipping_options.py"
SEED_OFF = "conformance/test_ppo_value_clipping.py::test_no_clipping_when_option_is_off"
MODULE = "tests.mutants.ppo_value_clipping_options"

#: mutant -> (spec that must fail, text its failure must show, parameter ids that must fail)
CAUGHT = {
    "TENSOR_THRESHOLD_REFUSED": ("test_a_tensor_clip_value_clips_like_the_float",
                                 "ValueError", 4),
    "TENSOR_SIZE_UNCHECKED": ("test_an_invalid_clip_value_is_refused_naming_it",
                              "does not name clip_value", 1),
    "NAN_ACCEPTED": ("test_an_invalid_clip_value_is_refused_naming_it",
                     "an invalid clip_value was accepted", 2),
    "ZERO_REFUSED": ("test_no_clipping_when_option_is_off", "ValueError", 1),
    # the residual's variance pooled over both columns, the total's per column: K=2 only
    "EV_POOLED": ("test_explained_variance_is_numpys_formula",
                  "1 - Var(R - v) / Var(R) per column", 2),
    "EV_SAMPLE_VARIANCE": ("test_explained_variance_is_numpys_formula",
                           "correction=1", 4),
    "EV_EPS_SUBTRACTED": ("test_explained_variance_of_constant_returns_is_not_positive",
                          "subtracted", 1),
    "EV_ALWAYS": ("test_no_explained_variance_when_logging_is_off",
                  "log_explained_variance=False", 1),
    "SHARED_TRAINED_WITHOUT_FUNCTIONAL": (
        "test_separate_losses_keeps_the_critic_gradient_off_shared_parameters",
        "reached the parameters shared with the policy", 1),
    "TARGET_UNNAMED": ("test_a_missing_entry_is_named", "does not name it", 1),
}


@pytest.fixture(scope="module")
def suite_run(tmp_path_factory):
    return run_suite(tmp_path_factory.mktemp("ppo_options"), OPTIONS, SEED_OFF, "--impl",
                     ",".join(f"{MODULE}:{name}" for name in [*MUTANTS, "UNMUTATED",
                                                              "ALWAYS_REFUSES"]))


def test_every_mutant_has_a_case():
    assert set(CAUGHT) == set(MUTANTS)


@pytest.mark.parametrize("mutant", list(MUTANTS))
def test_mutant_fails_its_spec(suite_run, mutant):
    assert suite_run.results is not None, suite_run.output[-3000:]
    spec, text, minimum = CAUGHT[mutant]
    rows = suite_run.rows(implementation=mutant)
    failing = [r for r in rows if r["outcome"] == "fail" and f"::{spec}[" in r["nodeid"]
               and text in r["message"]]
    assert len(failing) >= minimum, [(r["nodeid"], r["outcome"], r["message"][:300])
                                     for r in rows if r["outcome"] != "pass"]


def test_the_unmutated_construction_passes(suite_run):
    assert_unmutated_passes(suite_run, 24)


def test_an_area_that_always_refuses_fails_the_refusal_specs(suite_run):
    rows = [r for r in suite_run.rows(implementation="ALWAYS_REFUSES")
            if "_refused_naming_it[" in r["nodeid"] or "_missing_entry_is_named[" in r["nodeid"]]
    assert len(rows) == 7 and all(r["outcome"] == "fail" and "proves nothing" in r["message"]
                                  for r in rows), [(r["nodeid"], r["outcome"]) for r in rows]
