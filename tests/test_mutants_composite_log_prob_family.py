"""The §2 family mutants (``tests/mutants/composite_log_prob_family.py``) fail the family specs
with messages naming their bug, and pass what they do not break."""

import pytest

SPEC = "conformance/test_composite_log_prob_family.py"
MODULE = "tests.mutants.composite_log_prob_family"

#: mutant -> (text its failures must name, spec that must fail, minimum failures)
MUTANTS = {
    "LOG_WEIGHTS_AVERAGED": ("the log-weights were not summed over the heads",
                             "test_ppo_ratio_of_a_changed_policy", 6),
    "ENTROPY_ELEMENTWISE": ("each head's entropy is weighted as it comes",
                            "test_entropy_bonus_of_a_composite_policy", 2),
    "ENTROPY_TOP_LEVEL_KEYS": ("not by the nested key of each head",
                               "test_entropy_bonus_of_a_composite_policy", 4),
}


@pytest.fixture(scope="module")
def mutant_run(tmp_path_factory):
    from tests.conftest import run_suite

    impls = ",".join(f"{MODULE}:{name}" for name in MUTANTS)
    return run_suite(tmp_path_factory.mktemp("composite_family_mutants"), SPEC, "--impl", impls,
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
    rows = mutant_run.rows
    for mutant in ("ENTROPY_ELEMENTWISE", "ENTROPY_TOP_LEVEL_KEYS"):
        ratio = [r for r in rows(implementation=mutant) if "ratio" in r["nodeid"]]
        assert ratio and all(r["outcome"] == "pass" for r in ratio), mutant
        one = [r for r in rows(implementation=mutant) if "coeff=one" in r["nodeid"]]
        assert one and all(r["outcome"] == "pass" for r in one), mutant
    entropy = [r for r in rows(implementation="LOG_WEIGHTS_AVERAGED") if "entropy" in r["nodeid"]]
    assert entropy and all(r["outcome"] == "pass" for r in entropy)
