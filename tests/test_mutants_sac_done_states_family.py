"""The §3 family mutants (``tests/mutants/sac_done_states.py``, bottom) fail the family specs
with messages naming their bug, and pass what they do not break."""

import pytest

SPEC = "conformance/test_sac_done_states_family.py"
MODULE = "tests.mutants.sac_done_states"

#: mutant -> (text its failures must name, spec that must fail, minimum failures)
MUTANTS = {
    "MASKED_ACTION_ACTOR_NAN": ("the actor loss scores the policy by p * logits",
                                "test_discrete_masked_actions_give_finite_losses", 4),
    "MASKED_ACTION_SKIP_NAN": ("the skip path scores the next policy by its logits",
                               "test_discrete_masked_actions_give_finite_losses", 2),
    "FIRST_TWO_QVALUE_NETS": ("more than two Q-networks", "test_more_than_two_qvalue_networks",
                              16),
}


@pytest.fixture(scope="module")
def mutant_run(tmp_path_factory):
    from tests.conftest import run_suite

    impls = ",".join(f"{MODULE}:{name}" for name in MUTANTS)
    return run_suite(tmp_path_factory.mktemp("sac_family_mutants"), SPEC, "--impl", impls,
                     "--no-report", "--expectations", "none")


@pytest.mark.parametrize("mutant", list(MUTANTS))
def test_mutant_fails_the_family_specs(mutant_run, mutant):
    bug, spec, minimum = MUTANTS[mutant]
    assert mutant_run.returncode == 1, mutant_run.output[-3000:]
    failing = [r for r in mutant_run.rows(implementation=mutant) if r["outcome"] == "fail"]
    naming = [r for r in failing if bug in r["message"] and spec in r["nodeid"]]
    assert len(naming) >= minimum, (
        f"{mutant}: expected >= {minimum} failures of {spec} naming {bug!r}, got "
        f"{len(naming)} of {len(failing)}:\n"
        + "\n".join(f"{r['nodeid']}: {r['message'][:300]}" for r in failing))


def test_mutants_pass_what_they_do_not_break(mutant_run):
    """The skip-path mutant passes with the flag off; the masked-action mutants pass the
    ensemble specs; the ensemble mutant passes the masked-action specs."""
    rows = mutant_run.rows
    assert all(r["outcome"] == "pass" for r in rows(implementation="MASKED_ACTION_SKIP_NAN")
               if "skip=False" in r["nodeid"])
    for mutant in ("MASKED_ACTION_ACTOR_NAN", "MASKED_ACTION_SKIP_NAN"):
        ens = [r for r in rows(implementation=mutant) if "more_than_two" in r["nodeid"]]
        assert ens and all(r["outcome"] == "pass" for r in ens), mutant
    masked = [r for r in rows(implementation="FIRST_TWO_QVALUE_NETS") if "masked" in r["nodeid"]]
    assert masked and all(r["outcome"] == "pass" for r in masked)
