"""The §1 family mutant (``tests/mutants/tanh_normal_mode_family.py``) fails the saturation
specs with a message naming the bug, and passes where tanh does not saturate."""

import pytest

from tests.conftest import assert_mutant_caught

#: every test here reads a run of the whole suite on a mutant (a module fixture)
pytestmark = pytest.mark.slow

SPEC = "conformance/test_tanh_normal_mode_family.py"
IMPL = "tests.mutants.tanh_normal_mode_family:SCORE_OF_ROUNDED_ACTION"


def test_rounded_action_score_is_caught(suite):
    run = suite(SPEC, "--impl", IMPL, "--no-report", "--expectations", "none")
    assert_mutant_caught(run, SPEC, bug="the score was computed from the rounded action",
                         min_failures=2)
    unsaturated = [r for r in run.rows() if "abs_loc=0.5" in r["nodeid"]]
    assert unsaturated and all(r["outcome"] == "pass" for r in unsaturated)
