"""The callable-scale mutants (tests/mutants/tanh_normal_callable_scale.py) fail the §1
callable-scale specs with their words, where the callable matters (a callable replaced by ones
passes with ``torch.ones_like``); TorchRL's own class through the same adapter passes every spec
of the file. One suite run covers them."""

import pytest

from tests.conftest import run_suite
from tests.mutants import assert_fails_with, assert_unmutated_passes
from tests.mutants.tanh_normal_callable_scale import MUTANTS

pytestmark = pytest.mark.slow

SPEC = "conformance/test_tanh_normal_mode_callable_scale.py"
MODULE = "tests.mutants.tanh_normal_callable_scale"
SPECS_IN_FILE = 9
MODE = "test_callable_scale_has_the_mode_of_the_called_scale[{}-scale_fn={}-bounds={}]"
SCORE = "test_callable_scale_scores_draws_under_the_called_scale[{}-scale_fn={}]"
BOUNDS = ("(-1.0, 1.0)", "(0.0, 4.0)")


def _specs(fns):
    return ([MODE.format("{}", fn, b) for fn in fns for b in BOUNDS]
            + [SCORE.format("{}", fn) for fn in fns])


# mutant -> (words of its failure, the specs (node id tails) that must fail with them)
CASES = {
    "CALLABLE_IGNORED": ("not the mode with the scale it returns", [
        MODE.format("{}", fn, b) for fn in ("full_like(0.5)", "of_loc") for b in BOUNDS]),
    "CALLABLE_REFUSED": ("a callable scale was refused",
                         _specs(("ones_like", "full_like(0.5)", "of_loc"))),
}


@pytest.fixture(scope="module")
def suite_run(tmp_path_factory):
    return run_suite(tmp_path_factory.mktemp("callable-scale"), SPEC, "--impl",
                     ",".join(f"{MODULE}:{name}" for name in [*CASES, "UNMUTATED"]))


def test_every_mutant_has_a_case():
    assert set(CASES) == set(MUTANTS)


@pytest.mark.parametrize("mutant", list(CASES))
def test_mutant_fails_the_callable_scale_specs(suite_run, mutant):
    words, specs = CASES[mutant]
    assert_fails_with(suite_run, mutant, words, [s.format(mutant) for s in specs])


def test_ignored_callable_also_fails_the_score(suite_run):
    assert_fails_with(suite_run, "CALLABLE_IGNORED", "not its log-density under the scale", [
        SCORE.format("CALLABLE_IGNORED", fn) for fn in ("full_like(0.5)", "of_loc")])


def test_ignored_callable_passes_with_ones_like(suite_run):
    rows = [r for r in suite_run.rows(implementation="CALLABLE_IGNORED")
            if "scale_fn=ones_like" in r["nodeid"]]
    assert len(rows) == 3 and all(r["outcome"] == "pass" for r in rows), rows


def test_the_unmutated_construction_passes(suite_run):
    assert_unmutated_passes(suite_run, SPECS_IN_FILE)
