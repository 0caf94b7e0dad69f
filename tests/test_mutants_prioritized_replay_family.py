"""The §5 family mutants (``tests/mutants/prioritized_replay_family.py``) fail the family specs
with messages naming their bug, and pass what they do not break."""

import pytest

SPEC = "conformance/test_prioritized_replay_family.py"
MODULE = "tests.mutants.prioritized_replay_family"

#: mutant -> (text its failures must name, spec that must fail, minimum failures)
MUTANTS = {
    "SLICE_STATE_NOT_SAVED": ("its state_dict / load_state_dict are SliceSampler's",
                              "test_slice_checkpoint_restores_the_priorities", 4),
    "LOAD_ALIASES_CHECKPOINT": ("load_state_dict kept references to the checkpoint's objects",
                                "test_loaded_checkpoint_is_not_aliased", 1),
}


@pytest.fixture(scope="module")
def mutant_run(tmp_path_factory):
    from tests.conftest import run_suite

    impls = ",".join(f"{MODULE}:{name}" for name in MUTANTS)
    return run_suite(tmp_path_factory.mktemp("per_family_mutants"), SPEC, "--impl", impls,
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


def test_aliasing_mutant_passes_the_round_trips(mutant_run):
    """Nothing writes to a loaded buffer in the round-trip specs: aliasing cannot show there."""
    rows = [r for r in mutant_run.rows(implementation="LOAD_ALIASES_CHECKPOINT")
            if "round-trips" in r["nodeid"]]
    assert rows and all(r["outcome"] == "pass" for r in rows)
