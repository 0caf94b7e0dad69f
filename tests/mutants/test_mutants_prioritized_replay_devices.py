"""The check of §5's device-spelling spec (``conformance/test_prioritized_replay_devices.py``)
passes the reference under either spelling of its device and fails a sampler that rebuilds its
trees when its device is spelled otherwise than its trees' (``SPELLING_RESETS_TREES``), naming
the step; the spec itself cannot be tested on a CPU run and says why. No GPU is needed: a CPU
device spelled ``cpu:0`` stands for ``cuda:0`` (see ``tests/mutants/prioritized_replay_devices``)."""

import pytest
import torch

from conformance.interface import Untestable
from conformance import test_prioritized_replay_devices as spec
from conformance.test_prioritized_replay_devices import (
    SPELLINGS,
    check_the_buffer_keeps_its_priorities,
    spelled,
    spelled_run,
)
from tests.mutants.prioritized_replay_devices import MUTANTS, spelling_area

CPU = torch.device("cpu")


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


def test_a_cpu_run_cannot_test_the_spellings():
    area = spelling_area("UNMUTATED")
    area.devices = ("cpu", "cuda")
    impl = type("Impl", (), {"name": "reference"})()
    with pytest.raises(Untestable, match="need a CUDA run"):
        spec.test_the_devices_spelling_keeps_the_priorities(impl, area, "type-only")
