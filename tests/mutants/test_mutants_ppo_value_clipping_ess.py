"""The ESS mutants (tests/mutants/ppo_value_clipping_ess.py) fail §4's ESS spec where the
releases before 0.13.3 fail it, naming the shape; the construction without an edit (TorchRL
0.14.1's forward, transplanted) passes every case. One suite run covers them."""

import pytest

from tests.conftest import run_suite
from tests.mutants import assert_fails_with, assert_unmutated_passes
from tests.mutants.ppo_value_clipping_ess import MUTANTS

pytestmark = pytest.mark.slow

SPEC = "conformance/test_ppo_value_clipping_ess.py"
MODULE = "tests.mutants.ppo_value_clipping_ess"
NAME = "test_ess_is_kish_over_the_batch_per_element[{}-B,F={}]"
#: mutant -> (words, the shapes it fails on, the shapes it passes)
CASES = {
    "ESS_SQUEEZE_ALL": ("ESS shape != the feature dimensions",
                        ["1,3", "6,1", "1,4,2"], ["1", "6", "6,3", "6,4,2"]),
    "ESS_POOLED": ("ESS shape != the feature dimensions",
                   ["1,3", "6,1", "6,3", "1,4,2", "6,4,2"], ["1", "6"]),
}


@pytest.fixture(scope="module")
def suite_run(tmp_path_factory):
    return run_suite(tmp_path_factory.mktemp("ess"), SPEC, "--impl",
                     ",".join(f"{MODULE}:{name}" for name in [*CASES, "UNMUTATED"]))


def test_every_mutant_has_a_case():
    assert set(CASES) == set(MUTANTS)


@pytest.mark.parametrize("mutant", list(CASES))
def test_mutant_fails_the_ess_spec(suite_run, mutant):
    words, failing, passing = CASES[mutant]
    assert_fails_with(suite_run, mutant, words, [NAME.format(mutant, s) for s in failing])
    passed = {r["nodeid"].split("::", 1)[-1] for r in suite_run.rows(implementation=mutant,
                                                                       outcome="pass")}
    assert passed == {NAME.format(mutant, s) for s in passing}, passed


def test_the_unmutated_construction_passes(suite_run):
    assert_unmutated_passes(suite_run, 7)
