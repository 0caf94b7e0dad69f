"""The value-norm mutants (tests/mutants/ppo_value_clipping_value_norm.py) fail §4's value-norm
spec in every case, naming the space they clipped in where the spec can tell; the construction
without an edit passes every case. One suite run covers them."""

import itertools

import pytest

from tests.conftest import run_suite
from tests.mutants import assert_fails_with, assert_unmutated_passes
from tests.mutants.ppo_value_clipping_value_norm import MUTANTS

pytestmark = pytest.mark.slow

SPEC = "conformance/test_ppo_value_clipping_value_norm.py"
MODULE = "tests.mutants.ppo_value_clipping_value_norm"
ALL = [f"test_value_clipping_in_normalised_space[{{}}-{c}-{n}-{w}]" for c, n, w in
       itertools.product(("MAPPOLoss", "IPPOLoss"), ("running", "popart"),
                         ("fresh", "warmed-up"))]
WARMED = [s for s in ALL if s.endswith("warmed-up]")]
PADDED = [f"test_padding_is_left_out_of_the_normaliser[{{}}-{c}-{n}-{k}]" for c, n, k in
          itertools.product(("MAPPOLoss", "IPPOLoss"), ("running", "popart"),
                            ("clip=0.2", "clip=off"))]
CASES = {  # mutant -> [(words, specs)]
    "RAW_SPACE": [("clipped and compared in raw units", ALL)],
    "OLD_VALUE_RAW": [("the stored prediction left unnormalised", ALL)],
    "STATS_BEFORE_UPDATE": [("normalised by the statistics before this batch", WARMED),
                            ("critic loss with value_norm", ALL)],
    "NORM_COUNTS_PADDING": [("the padding's targets are folded into the normaliser", PADDED)],
}


@pytest.fixture(scope="module")
def suite_run(tmp_path_factory):
    return run_suite(tmp_path_factory.mktemp("value-norm"), SPEC, "--impl",
                     ",".join(f"{MODULE}:{name}" for name in [*CASES, "UNMUTATED"]))


def test_every_mutant_has_a_case():
    assert set(CASES) == set(MUTANTS)


@pytest.mark.parametrize("mutant", list(CASES))
def test_mutant_fails_the_value_norm_spec(suite_run, mutant):
    for words, specs in CASES[mutant]:
        assert_fails_with(suite_run, mutant, words, [s.format(mutant) for s in specs])


def test_the_unmutated_construction_passes(suite_run):
    assert_unmutated_passes(suite_run, len(ALL) + len(PADDED))


def test_norm_counts_padding_passes_without_a_mask(suite_run):
    rows = [r for r in suite_run.rows(implementation="NORM_COUNTS_PADDING")
            if "normalised_space" in r["nodeid"]]
    assert len(rows) == len(ALL) and all(r["outcome"] == "pass" for r in rows), rows
