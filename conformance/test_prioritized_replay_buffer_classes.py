"""§5 the prioritized buffer classes, built as TorchRL's examples build them.

TorchRL's prioritized examples (DQN, Rainbow-style agents, the replay-buffer tutorial) do not
build a sampler: they build ``TensorDictPrioritizedReplayBuffer(alpha=, beta=, eps=,
storage=LazyTensorStorage(N))`` (or ``PrioritizedReplayBuffer``), sample tensordicts, write
``td_error`` into them and call ``update_tensordict_priority``. A drop-in must therefore provide
these classes with its own sampler inside, its options reaching that sampler
(``conformance.interface.PrioritizedBufferClasses``). Built so, with TorchRL's defaults (no
in-buffer tracking):

- new items get the largest priority ever given (the documented initial value before any):
  lowering the maximum does not lower the default, and a write over old slots gives the new
  items that maximum too;
- the tree holds ``(p + eps)^alpha`` for every item, draws and importance weights follow it;
- with an upper bound on the default (an option of the reference's classes; TorchRL's have
  none, pytorch/rl#2210), the default is capped by it.

Oracle: ``conformance.oracles.prioritized_replay.ReplayModel`` with the default rule of these
buffers (the largest priority ever given). Priorities are multiples of 1/64 (float32-exact);
tolerances as in ``conformance/test_prioritized_replay.py``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pytest

from conformance import capabilities, device
from conformance._assertions import assert_close
from conformance.interface import EXAMPLE_BUFFER_KINDS
from conformance.oracles.prioritized_replay import ReplayModel
from conformance.test_prioritized_replay import Run, grid

ISSUE_2210 = "https://github.com/pytorch/rl/issues/2210"
PER_PAPER = "https://arxiv.org/abs/1511.05952"
ALPHA, BETA, EPS = 0.6, 0.4, 1e-3
CAPACITY = 16
TORCHRL_EPS = 1e-8  # the default eps of TorchRL's buffer classes
TREE_RTOL, RAW_RTOL = 2e-6, 1e-5
NOT_PASSED = ("the buffer class does not hand its options to the sampler it holds (or holds "
              "another sampler than the implementation's)")


@dataclass
class HistoricalModel(ReplayModel):
    """The model with TorchRL's default rule (``max_priority_within_buffer=False``): a new
    item gets the largest priority ever given, capped, or the initial value before any."""

    def default_priority(self, evicting=()) -> float:
        m = self.historical_max
        return self._cap(self.initial_priority if m is None else m)


@pytest.fixture
def classes(request, impl, prioritized_replay):
    return capabilities.require(request, impl, "prioritized_replay", prioritized_replay,
                                "example_buffer")


def example_run(area, kind: str, upper: float | None = None, eps: float | None = EPS) -> Run:
    """``eps=None``: left out, as TorchRL's examples leave it (TorchRL's default, 1e-8)."""
    run = Run.__new__(Run)  # Run's checks and log, on a buffer built by example_buffer
    run.area, run.log = area, [f"{kind}(alpha={ALPHA}, beta={BETA}, eps={eps or 'default'})"]
    run.buf = area.example_buffer(kind=kind, capacity=CAPACITY, alpha=ALPHA, beta=BETA,
                                  eps=eps, upper_priority=upper, **device.keyword(area))
    run.model = HistoricalModel(CAPACITY, ALPHA, BETA, TORCHRL_EPS if eps is None else eps,
                                initial_priority=float(area.initial_priority),
                                upper_priority=upper)
    return run


def check(run: Run, what: str, *, link: str = PER_PAPER) -> None:
    """Every tree value and the default priority against the model."""
    __tracebackhide__ = True
    run.check_len()
    assert_close(f"tree values {what} != (p + eps)^alpha", run.buf.tree_values(),
                 run.model.tree_values(), params=run.params(), rtol=TREE_RTOL,
                 cause=NOT_PASSED, link=link)
    assert_close(f"default priority {what} != largest priority ever given (capped)",
                 float(run.buf.default_priority()), run.model.default_priority(),
                 params=run.params(), rtol=RAW_RTOL, cause=NOT_PASSED, link=link)


@pytest.mark.parametrize("eps", [EPS, None], ids=lambda e: f"eps={e or 'default'}")
@pytest.mark.parametrize("kind", EXAMPLE_BUFFER_KINDS)
def test_example_buffer_follows_the_largest_priority_ever_given(classes, kind, eps):
    """Ten items at the initial priority; a sampled batch gets new priorities (its distinct
    indices, as a training step writes its TD errors); four new items get their maximum; every
    item holding the maximum is lowered (the default stays); four more items wrap the ring over
    slots 0 and 1 and get it too. Tree, default, draws and weights checked after each step;
    eps given, or left out as the examples leave it (TorchRL's default 1e-8)."""
    rng = np.random.default_rng(51)
    run = example_run(classes, kind, eps=eps)
    run.extend(10, check=False)
    check(run, "after extend(10)")
    draw = run.check_sample(64, seed=51)
    sampled = np.unique(np.asarray(draw.index))
    run.update(sampled, grid(rng, len(sampled), 16, 640))
    check(run, "after update_priority of a sampled batch")
    run.extend(4, check=False)
    check(run, "after extend(4)")
    top = np.flatnonzero(run.model.priority == np.nanmax(run.model.priority))
    run.update(top, np.full(len(top), 0.25))
    check(run, "after lowering the maximum (no item holds it any more)")
    run.extend(4, check=False)  # slots 14, 15, 0, 1
    check(run, "after a write that wraps the ring")
    run.check_sample(256, seed=52)


@pytest.mark.parametrize("kind", EXAMPLE_BUFFER_KINDS)
def test_example_buffer_caps_the_default(classes, kind):
    """With ``upper_priority=4``: the default is min(1, 4) while empty, 4 once 10 was given,
    and new items get 4."""
    run = example_run(classes, kind, upper=4.0)
    check(run, "of an empty buffer", link=ISSUE_2210)
    run.extend(6, check=False)
    run.update(np.arange(6), [10.0, 2.0, 0.5, 3.0, 1.5, 0.25])
    check(run, "after a priority of 10", link=ISSUE_2210)
    run.extend(2, check=False)
    check(run, "after extend(2)", link=ISSUE_2210)
    run.check_sample(64, seed=53)
