"""The target-entropy mutants (tests/mutants/sac_done_states_target_entropy.py) each fail the
§3 spec of ``conformance/test_sac_done_states_target_entropy.py`` on the action spaces they
count wrongly, with its words; the construction without an edit passes every case. One suite
run covers them."""

import pytest

from conformance.test_sac_done_states_target_entropy import NOWHERE, SPACES
from tests.conftest import run_suite
from tests.mutants import assert_fails_with, assert_unmutated_passes
from tests.mutants.sac_done_states_target_entropy import MUTANTS

pytestmark = pytest.mark.slow

SPEC = "conformance/test_sac_done_states_target_entropy.py"
MODULE = "tests.mutants.sac_done_states_target_entropy"
TEST = "test_the_automatic_target_entropy_is_minus_the_action_dimensions[{}-%s]"
TWO_HEADS = [TEST % c for c in SPACES if c.startswith("composite-two-heads")]
AGENTS = [TEST % c for c in SPACES if c.startswith("agents=")]
REFUSED = "test_without_an_action_spec_the_automatic_target_entropy_is_refused[{}-%s]"

# mutant -> (words of its failure, the specs (node id tails) that must fail with them)
CASES = {
    "ALWAYS_MINUS_ONE": ("every action counts as one dimension",
                         [TEST % c for c in SPACES
                          if c != "A=1" and not c.startswith("composite-two-heads")]),
    "AGENTS_COUNTED": ("the agents' dimension is counted",
                       [TEST % "agents=3-A=2-spec-on-actor"]),
    "FIRST_HEAD_ONLY": ("only one head of the composite action is counted", TWO_HEADS),
    "CONTAINER_KEPT": ("the agents' dimension is counted", AGENTS),
    "LAST_DIM_ONLY": ("automatic target entropy != -dim(A)", [TEST % "A=(2,3)"]),
    "NO_REFUSAL": ("no action spec: the refusal is an AttributeError",
                   [REFUSED % c for c in NOWHERE]),
}


@pytest.fixture(scope="module")
def suite_run(tmp_path_factory):
    return run_suite(tmp_path_factory.mktemp("target_entropy"), SPEC, "--impl",
                     ",".join(f"{MODULE}:{name}" for name in [*CASES, "UNMUTATED"]))


def test_every_mutant_has_a_case():
    assert set(CASES) == set(MUTANTS)


@pytest.mark.parametrize("mutant", list(CASES))
def test_mutant_fails_the_target_entropy_spec(suite_run, mutant):
    words, specs = CASES[mutant]
    assert_fails_with(suite_run, mutant, words, [s.format(mutant) for s in specs])


def test_always_minus_one_also_fails_two_heads(suite_run):
    assert_fails_with(suite_run, "ALWAYS_MINUS_ONE", "automatic target entropy != -dim(A)",
                      [s.format("ALWAYS_MINUS_ONE") for s in TWO_HEADS])


def test_the_unmutated_construction_passes(suite_run):
    assert_unmutated_passes(suite_run, len(SPACES) + len(NOWHERE))
