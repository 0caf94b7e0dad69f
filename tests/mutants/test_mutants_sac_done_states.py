"""Each historical SAC done-state bug, plugged in with --impl, fails the SAC specs with a
message naming it. The four mutants run side by side in one suite run (one torch import):
each is its own implementation with its own rows in the results."""

import pytest

#: every test here reads a run of the whole suite on a mutant (a module fixture)
pytestmark = pytest.mark.slow

SPEC = "conformance/test_sac_done_states.py"
MODULE = "tests.mutants.sac_done_states"

#: mutant -> (text its failures must name, specs that must be among them, minimum failures)
MUTANTS = {
    "MASKING_ALWAYS_ON": ("pytorch/rl#2606",
                          "test_fixed_batch_size_actor_works_with_flag_off", 4),
    "FLAG_IGNORED": ("the flag is ignored",
                     "test_terminal_next_states_never_reach_the_networks", 6),
    "MASK_BROADCAST_WRONGLY": ("broadcast over the agents",
                               "test_losses_and_gradients_match_oracle", 4),
    "TRUNCATION_AS_TERMINATION": ("truncation is treated as termination",
                                  "test_truncated_transitions_bootstrap_from_the_next_state", 6),
}


@pytest.fixture(scope="module")
def mutant_run(tmp_path_factory):
    from tests.conftest import run_suite

    impls = ",".join(f"{MODULE}:{name}" for name in MUTANTS)
    return run_suite(tmp_path_factory.mktemp("sac_mutants"), SPEC, "--impl", impls, "--no-report")


@pytest.mark.parametrize("mutant", list(MUTANTS))
def test_mutant_fails_the_sac_specs(mutant_run, mutant):
    bug, spec, minimum = MUTANTS[mutant]
    assert mutant_run.returncode == 1, mutant_run.output[-3000:]
    rows = mutant_run.rows(implementation=mutant)
    assert rows, f"no results for {mutant}:\n{mutant_run.output[-3000:]}"
    failing = [r for r in rows if r["outcome"] == "fail"]
    naming = [r for r in failing if bug in r["message"]]
    assert len(naming) >= minimum, (
        f"{mutant}: expected >= {minimum} failures naming {bug!r}, got {len(naming)} of "
        f"{len(failing)} failures:\n"
        + "\n".join(f"{r['nodeid']}: {r['message'][:300]}" for r in failing))
    assert any(spec in r["nodeid"] for r in naming), f"{mutant}: {spec} does not name {bug!r}"


def test_mutants_pass_what_they_do_not_break(mutant_run):
    """A mutant that fails everything would prove nothing: the flag-off specs of the mutants
    that only break skipping pass."""
    for mutant in ("FLAG_IGNORED", "MASK_BROADCAST_WRONGLY", "TRUNCATION_AS_TERMINATION"):
        off = [r for r in mutant_run.rows(implementation=mutant) if "skip=False" in r["nodeid"]]
        assert off and all(r["outcome"] == "pass" for r in off), mutant
