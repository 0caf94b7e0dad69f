"""The cpprb adapter drives cpprb's own PrioritizedReplayBuffer, its recovered tree values are
cpprb's, its unseedable sampler still gives seed-independent verdicts, and a mutant of cpprb
fails the specs."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from tests.conftest import run_suite
from tests.libraries.conftest import need

#: run in the library's layer (python -m conformance.libraries.selftests); the mutant
#: tests among them run the suite in a subprocess
pytestmark = pytest.mark.slow

cpprb = need("cpprb")

from conformance.implementations.cpprb import IMPLEMENTATION  # noqa: E402

ALPHA, BETA, EPS = 0.6, 0.4, 1e-3


def _buffer(capacity=8):
    return IMPLEMENTATION.prioritized_replay.buffer(capacity=capacity, alpha=ALPHA, beta=BETA,
                                                    eps=EPS)


def test_the_adapter_drives_cpprbs_buffer():
    buf = _buffer()
    assert type(buf.rb) is cpprb.PrioritizedReplayBuffer
    buf.extend(4)
    buf.update_priority(np.arange(4), np.array([2.0, 10.0, 3.0, 0.5]))
    assert buf.rb.get_stored_size() == len(buf) == 4
    assert buf.default_priority() == buf.rb.get_max_priority() == 10.0


def test_recovered_tree_values_are_cpprbs_transformed_priorities():
    """Every priority set explicitly: the values read back through beta = 1 weights are
    (p + eps)^alpha for each item, to float32 rounding (the spec's rtol is 2e-6)."""
    buf = _buffer()
    p = np.array([2.0, 10.0, 3.0, 0.5, 7.25, 0.015625, 1.0, 4.5])
    buf.extend(8)
    buf.update_priority(np.arange(8), p)
    np.testing.assert_allclose(buf.tree_values(), (p + EPS) ** ALPHA, rtol=1e-6)


def test_recovered_tree_value_of_a_defaulted_item():
    """A new item written after priorities up to 10 holds (10 + eps)^alpha (cpprb's default is
    its running maximum), measured relative to the items set explicitly."""
    buf = _buffer()
    buf.extend(3)
    buf.update_priority(np.arange(3), np.array([2.0, 10.0, 3.0]))
    buf.extend(1)
    values = buf.tree_values()
    np.testing.assert_allclose(values[3], (10.0 + EPS) ** ALPHA, rtol=1e-6)


def test_stratified_sampling_counts_do_not_depend_on_the_seed():
    """cpprb's generator cannot be seeded; its draw is stratified, so each index's count is
    within two of n P(i) on every call (one for the stratification, one for float32 rounding of
    the strata boundaries): the sampling specs' verdicts cannot change from run to run."""
    buf = _buffer(16)
    p = np.random.default_rng(0).integers(16, 640, 16) / 64.0
    buf.extend(16)
    buf.update_priority(np.arange(16), p)
    law = (p + EPS) ** ALPHA / ((p + EPS) ** ALPHA).sum()
    for _ in range(5):
        draw = buf.sample(4000, torch.Generator().manual_seed(0))
        counts = np.bincount(draw.index, minlength=16)
        assert np.all(np.abs(counts - 4000 * law) <= 2.0), (counts, 4000 * law)


def test_a_cpprb_mutant_fails_the_specs(tmp_path):
    """cpprb with every new item forced to priority 1.0 (the 'fallback to the initial value'
    bug) fails the spec the real cpprb passes."""
    run = run_suite(tmp_path, "conformance/test_prioritized_replay.py", "-k",
                    "test_new_item_gets_the_largest_stored_priority", "--impl",
                    "cpprb,tests.libraries.mutants:CPPRB_FALLBACK")
    assert run.results is not None, run.output[-3000:]
    real = run.rows(implementation="cpprb")
    mutant = run.rows(implementation="CPPRB_FALLBACK")
    assert real and all(r["outcome"] == "pass" for r in real), real
    assert mutant and all(r["outcome"] == "fail" for r in mutant), mutant
