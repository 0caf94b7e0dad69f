"""The mask mutants (tests/mutants/ppo_value_clipping_masks.py) each fail the §4 mask spec
that names what they get wrong, with its words; the construction without an edit passes every
spec of the file. One suite run covers them."""

import pytest

from tests.conftest import run_suite
from tests.mutants import assert_fails_with, assert_unmutated_passes
from tests.mutants.ppo_value_clipping_masks import MUTANTS

pytestmark = pytest.mark.slow

SPEC = "conformance/test_ppo_value_clipping_masks.py"
MODULE = "tests.mutants.ppo_value_clipping_masks"
SPECS_IN_FILE = 9
FRACTION = [f"test_padding_is_left_out_of_the_value_clip_fraction[{{}}-{p}]"
            for p in ("padded-tail", "scattered")]
LOSS = [f"test_padding_is_left_out_of_the_clipped_critic_loss[{{}}-{p}]"
        for p in ("padded-tail", "scattered")]

# mutant -> (words of its failure, the specs (node id tails) that must fail with them)
CASES = {
    "CLIP_FRACTION_COUNTS_PADDING": ("counted over every position, padding included", FRACTION),
    "CLIP_FRACTION_OVER_THE_BATCH": ("value clip fraction under a validity mask", FRACTION),
    "MASK_DROPPED": ("the padding is averaged in", LOSS),
    "COUNT_CLAMPED_AT_TWO": ("value clip fraction under a validity mask",
                             ["test_a_single_valid_step[{}]"]),
    "MASKS_ORED": ("value clip fraction under a validity mask",
                   ["test_both_of_torchrls_masks_are_anded[{}]"]),
    "LAST_MASK_ONLY": ("value clip fraction under a validity mask",
                       ["test_both_of_torchrls_masks_are_anded[{}]"]),
    "MASK_DTYPE_KEPT": ("refused with an error that does not name the mask",
                        ["test_a_numeric_mask_is_read_as_its_truth_value[{}-float32]"]),
    "REDUCTION_TAKES_THE_MASK_AS_GIVEN": (
        "refused with an error that does not name the mask",
        [f"test_a_numeric_mask_is_read_as_its_truth_value[{{}}-{d}]" for d in ("int64", "float32")]),
}


@pytest.fixture(scope="module")
def suite_run(tmp_path_factory):
    return run_suite(tmp_path_factory.mktemp("masks"), SPEC, "--impl",
                     ",".join(f"{MODULE}:{name}" for name in [*CASES, "UNMUTATED"]))


def test_every_mutant_has_a_case():
    assert set(CASES) == set(MUTANTS)


@pytest.mark.parametrize("mutant", list(CASES))
def test_mutant_fails_the_mask_spec(suite_run, mutant):
    words, specs = CASES[mutant]
    assert_fails_with(suite_run, mutant, words, [s.format(mutant) for s in specs])


def test_mask_dropped_also_fails_the_fraction(suite_run):
    assert_fails_with(suite_run, "MASK_DROPPED", "counted over every position",
                      [s.format("MASK_DROPPED") for s in FRACTION])


def test_the_unmutated_construction_passes(suite_run):
    assert_unmutated_passes(suite_run, SPECS_IN_FILE)
