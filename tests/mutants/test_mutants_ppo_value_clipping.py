"""Each historical PPO value-clipping bug, plugged in with --impl, fails the PPO specs."""

import pytest

from tests.conftest import assert_mutant_caught

#: every test here reads a run of the whole suite on a mutant (a module fixture)
pytestmark = pytest.mark.slow

SPEC = "conformance/test_ppo_value_clipping.py"


@pytest.mark.parametrize(
    ("mutant", "bug"),
    [
        ("CLIPPED_ONLY", "without max()"),
        ("MIN_INSTEAD_OF_MAX", "min() instead of max()"),
        ("WRONG_CLIP_FRACTION", "pytorch/rl#2005"),
    ],
)
def test_mutant_fails_the_ppo_specs(suite, mutant, bug):
    run = suite(SPEC, "--impl", f"tests.mutants.ppo_value_clipping:{mutant}")
    failing = assert_mutant_caught(run, SPEC, bug=bug, min_failures=3)
    assert any("test_property_matches_baselines" in r["nodeid"] for r in failing)


def test_a_loss_that_always_raises_does_not_pass_the_rejection_spec(suite):
    spec = f"{SPEC}::test_negative_clip_value_is_rejected"
    run = suite(spec, "--impl", "tests.mutants.ppo_value_clipping:RAISES_EVERYWHERE")
    assert run.returncode == 1, run.output[-2000:]
    (row,) = run.rows()
    assert row["outcome"] == "fail"
    assert "raised for a valid clip_value" in row["message"], row["message"]
