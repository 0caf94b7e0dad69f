"""Each historical PPO value-clipping bug, plugged in with --impl, fails the PPO specs."""

import pytest

from tests.conftest import assert_mutant_caught

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
