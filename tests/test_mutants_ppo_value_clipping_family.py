"""The §4 family mutants (``tests/mutants/ppo_value_clipping_family.py``) fail the family specs
with messages naming their bug, and pass what they do not break."""

import pytest

SPEC = "conformance/test_ppo_value_clipping_family.py"
MODULE = "tests.mutants.ppo_value_clipping_family"

#: mutant -> (text its failures must name, spec that must fail, minimum failures)
MUTANTS = {
    "CLIP_VALUE_NOT_SCHEDULABLE": ("made schedulable by pytorch/rl#3612",
                                   "test_rescheduled_clip_value_takes_effect", 8),
    "CLIP_VALUE_DROPPED": ("the value clipping shared by PPOLoss",
                           "test_every_loss_class_clips_like_baselines", 6),
    "TUPLE_EPSILON_PICKS_HIGH": ("clip_value=True with a tuple clip_epsilon was accepted",
                                 "test_tuple_clip_epsilon_with_clip_value_true_is_refused", 1),
}


@pytest.fixture(scope="module")
def mutant_run(tmp_path_factory):
    from tests.conftest import run_suite

    impls = ",".join(f"{MODULE}:{name}" for name in MUTANTS)
    return run_suite(tmp_path_factory.mktemp("ppo_family_mutants"), SPEC, "--impl", impls,
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
    for mutant, untouched in (("CLIP_VALUE_NOT_SCHEDULABLE", "test_every_loss_class"),
                              ("CLIP_VALUE_DROPPED", "test_tuple_clip_epsilon"),
                              ("TUPLE_EPSILON_PICKS_HIGH", "test_rescheduled")):
        mine = [r for r in rows(implementation=mutant) if untouched in r["nodeid"]]
        assert mine and all(r["outcome"] == "pass" for r in mine), mutant
    clip = [r for r in rows(implementation="CLIP_VALUE_DROPPED")
            if "test_every_loss_class" in r["nodeid"] and "-ClipPPOLoss-" in r["nodeid"]]
    assert clip and all(r["outcome"] == "pass" for r in clip), "ClipPPOLoss is left intact"
