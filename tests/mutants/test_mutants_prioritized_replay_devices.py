"""§5's device-spelling spec (``conformance/test_prioritized_replay_devices.py``) passes the
reference under either spelling of its device and fails a sampler that rebuilds its trees when
its device is spelled otherwise than its trees' (``SPELLING_RESETS_TREES``), naming the step. No
GPU is needed: on the CPU the spellings are ``cpu`` and ``cpu:0``, and the mutant's comparison
tells them apart as TorchRL's tells ``cuda`` from ``cuda:0``."""

import pytest
import torch

from conformance.test_prioritized_replay_devices import (
    SPELLINGS,
    check_the_buffer_keeps_its_priorities,
    spelled,
    spelled_run,
)
from tests.conftest import run_suite
from tests.mutants import assert_fails_with, assert_unmutated_passes
from tests.mutants.prioritized_replay_devices import MUTANTS, spelling_area

CPU = torch.device("cpu")
SPEC = "conformance/test_prioritized_replay_devices.py"
MODULE = "tests.mutants.prioritized_replay_devices"


@pytest.mark.parametrize("spelling", SPELLINGS)
def test_the_reference_keeps_its_priorities_under_either_spelling(spelling):
    where = spelled(CPU, spelling)
    assert str(where) == {"type-only": "cpu", "indexed": "cpu:0"}[spelling]
    check_the_buffer_keeps_its_priorities(spelled_run(spelling_area("UNMUTATED"), where))


def test_a_sampler_that_rebuilds_its_trees_on_a_spelling_fails_the_check():
    area = spelling_area("SPELLING_RESETS_TREES")
    with pytest.raises(AssertionError, match=r"sample\(64\) raised RuntimeError|tree values "
                       "after sample") as failure:
        check_the_buffer_keeps_its_priorities(spelled_run(area, spelled(CPU, "indexed")))
    assert "device='cpu:0'" in str(failure.value), str(failure.value)
    # the spelling its trees report passes: the check tells the two spellings apart
    check_the_buffer_keeps_its_priorities(spelled_run(area, spelled(CPU, "type-only")))


def test_every_mutant_is_checked():
    assert set(MUTANTS) == {"SPELLING_RESETS_TREES"}


@pytest.mark.slow
def test_the_spec_catches_the_mutant_in_a_suite_run(tmp_path):
    run = run_suite(tmp_path, SPEC, "--impl", f"{MODULE}:SPELLING_RESETS_TREES,{MODULE}:UNMUTATED")
    assert_fails_with(run, "SPELLING_RESETS_TREES", "sample(64) raised RuntimeError",
                      ["test_the_devices_spelling_keeps_the_priorities"
                       "[SPELLING_RESETS_TREES-device=indexed]"])
    rows = run.rows(implementation="SPELLING_RESETS_TREES")
    assert {r["parameters"]: r["outcome"] for r in rows} == {
        "device=type-only": "pass", "device=indexed": "fail"}, rows
    assert_unmutated_passes(run, 2)
