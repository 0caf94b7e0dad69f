"""The unreduced-loss mutants (tests/mutants/sac_done_states_unreduced.py) each fail the §3
spec of ``conformance/test_sac_done_states_unreduced.py`` that names what they get wrong, with
its words; the construction without an edit passes every spec of the file. One suite run
covers them."""

import pytest

from tests.conftest import run_suite
from tests.mutants import assert_fails_with, assert_unmutated_passes
from tests.mutants.sac_done_states_unreduced import MUTANTS

pytestmark = pytest.mark.slow

SPEC = "conformance/test_sac_done_states_unreduced.py"
MODULE = "tests.mutants.sac_done_states_unreduced"
KINDS = ("continuous", "discrete")
AGENTS = ("per_agent", "nested")
SPECS_IN_FILE = 24
TERMS = "test_unreduced_losses_are_the_per_agent_step_terms[{}-%s-%s-skip=%s]"
MEAN = "test_the_mean_of_the_unreduced_losses_is_the_reduced_loss[{}-%s-%s]"
OUTPUT = "test_unreduced_output_keeps_the_batch_shape_and_scalars[{}-%s-%s]"
EVERY_OUTPUT = [OUTPUT % (k, lay) for k in KINDS for lay in ("single", *AGENTS)]

# mutant -> (words of its failure, the specs (node id tails) that must fail with them)
CASES = {
    "EMPTY_OUTPUT_BATCH": ("container without the input's batch shape", EVERY_OUTPUT),
    "ENTROPY_PER_SAMPLE": ("entropy is not a single value", EVERY_OUTPUT),
    "AGENTS_AVERAGED": ("does not keep one value per agent-step",
                        [TERMS % (k, lay, s) for k in KINDS for lay in AGENTS
                         for s in (False, True)]),
    "ALPHA_LOSS_BROADCAST": ("unreduced loss_alpha != the oracle's term per agent-step",
                             [TERMS % (k, lay, s) for k in KINDS
                              for lay in ("single", *AGENTS) for s in (False, True)]),
    "MEAN_PER_ROW": ("mean of the unreduced", [MEAN % (k, lay) for k in KINDS for lay in AGENTS]),
}


@pytest.fixture(scope="module")
def suite_run(tmp_path_factory):
    return run_suite(tmp_path_factory.mktemp("unreduced"), SPEC, "--impl",
                     ",".join(f"{MODULE}:{name}" for name in [*CASES, "UNMUTATED"]))


def test_every_mutant_has_a_case():
    assert set(CASES) == set(MUTANTS)


@pytest.mark.parametrize("mutant", list(CASES))
def test_mutant_fails_the_unreduced_spec(suite_run, mutant):
    words, specs = CASES[mutant]
    assert_fails_with(suite_run, mutant, words, [s.format(mutant) for s in specs])


def test_the_unmutated_construction_passes(suite_run):
    assert_unmutated_passes(suite_run, SPECS_IN_FILE)
