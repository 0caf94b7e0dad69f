"""§5 on a device named two ways: ``"cuda"`` and ``"cuda:N"`` (on the CPU, ``cpu`` and ``cpu:0``).

``torch.device("cuda")`` and ``torch.device("cuda:0")`` name the same device (the current one)
but compare unequal, and a user writes either: ``LazyTensorStorage(N, device="cuda")``,
``PrioritizedSampler(..., device="cuda")``, or ``"cuda:0"`` as TorchRL's own CUDA tests do
(pytorch/rl#3677, #3685). A prioritized buffer built on the run's device under either spelling
must keep what it is given across ``sample()`` and ``update_priority()``: the tree values
``(p + eps)^alpha`` of every stored item, the default priority of a new item (the largest
priority stored), and the importance weights of a draw. TorchRL 0.14.1's CUDA sampler compares
the device asked for with the device its trees report (always indexed) and rebuilds empty
trees at every call when the two are spelled differently (the report
``reports/upstream-bugs/prb-cuda-device-spelling-resets-trees.md``): on a CUDA run its
``device=type-only`` spec fails.

On the CPU the two spellings are ``cpu`` (built as every other spec builds it) and ``cpu:0``,
handed to the sampler as given (a release without a ``device=`` keyword fails that one); an
area that declares no devices is built without one under both. The check itself is
self-tested on the CPU against a sampler that rebuilds on a spelling
(``tests/mutants/test_mutants_prioritized_replay_devices.py``).

Oracle: ``conformance.oracles.prioritized_replay.ReplayModel`` (numpy, float64), as in
``conformance/test_prioritized_replay.py``.
"""

from __future__ import annotations

import pytest
import torch

from conformance import device
from conformance._assertions import message
from conformance.oracles import prioritized_replay as oracle
from conformance.test_prioritized_replay import ALPHA, BETA, EPS, Run

SPELLINGS = ("type-only", "indexed")
PR_3677 = "https://github.com/pytorch/rl/pull/3677"
CAPACITY = 8


def spelled(run: torch.device, spelling: str) -> torch.device:
    """The run's device written as its type alone (``cuda``) or with its index (``cuda:0``)."""
    if spelling == "type-only":
        return torch.device(run.type)
    index = run.index
    if index is None:
        index = torch.cuda.current_device() if run.type == "cuda" else 0
    return torch.device(run.type, index)


def spelled_run(area, where: torch.device) -> Run:
    """A ``Run`` (the seed specs' step log and checks) whose buffer is built with ``where``
    (None: without a device keyword)."""
    run = Run.__new__(Run)
    run.area, run.log = area, [f"buffer(capacity={CAPACITY}, device={str(where)!r})"]
    placed = {} if where is None else {"device": where}  # None: an area without devices
    run.buf = area.buffer(capacity=CAPACITY, alpha=ALPHA, beta=BETA, eps=EPS, **placed)
    run.model = oracle.ReplayModel(CAPACITY, ALPHA, BETA, EPS,
                                   initial_priority=float(area.initial_priority))
    return run


def check_the_buffer_keeps_its_priorities(run: Run) -> None:
    """Extend, update, sample, update and extend again; after each step every tree value and
    the default priority against the model, and the draws' weights against it. A step that
    raises fails the spec naming the step (an emptied sampler refuses to sample, or draws with
    ``inf`` weights)."""
    __tracebackhide__ = True
    _step(run, "extend(4)", lambda: run.extend(4))
    run.check_tree(what="tree values after extend(4) != (default + eps)^alpha", link=PR_3677)
    _step(run, "update_priority", lambda: run.update([0, 1, 2, 3], [2.0, 10.0, 3.0, 0.5]))
    run.check_tree(what="tree values after update_priority != (p + eps)^alpha", link=PR_3677)
    run.check_default(link=PR_3677)
    _step(run, "sample(64)", lambda: run.check_sample(64, seed=5))
    run.log.append("sample(64)")
    run.check_tree(what="tree values after sample() != (p + eps)^alpha (sample() must not "
                        "change them)", link=PR_3677)
    run.check_default("default priority after sample() != largest raw priority stored",
                      link=PR_3677)
    # the maximum only rises: the largest priority stored and the largest ever given agree,
    # so a library that keeps the historical maximum by design is judged on the trees alone
    _step(run, "update_priority", lambda: run.update([1], [12.0]))
    run.check_tree(what="tree values after a second update_priority != (p + eps)^alpha",
                   link=PR_3677)
    run.check_default("default priority after raising the maximum != largest raw priority "
                      "stored", link=PR_3677)
    _step(run, "extend(2)", lambda: run.extend(2))
    run.check_tree(what="tree values after extend(2) != (p + eps)^alpha", link=PR_3677)
    _step(run, "sample(64)", lambda: run.check_sample(64, seed=6))


def _step(run: Run, what: str, step) -> None:
    """Run ``step``; an exception other than a check's own fails the spec naming the step."""
    __tracebackhide__ = True
    try:
        step()
    except AssertionError:
        raise
    except Exception as exc:  # noqa: BLE001 -- any refusal of a valid step is the failure
        raise AssertionError(message(
            f"{what} raised {type(exc).__name__} on a buffer that holds items",
            params=run.params(), expected="the step done, the priorities kept",
            actual=f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}",
            cause="the sampler lost its trees between two calls (rebuilt empty), or refuses "
                  "the device's spelling", link=PR_3677)) from exc


@pytest.mark.parametrize("spelling", SPELLINGS, ids=lambda s: f"device={s}")
def test_the_devices_spelling_keeps_the_priorities(prioritized_replay, spelling):
    """A buffer built on the run's device spelled ``cuda`` / ``cuda:N`` (``cpu`` / ``cpu:0``)
    keeps its priorities across ``sample()`` and ``update_priority()``."""
    where = spelled(device.current(), spelling) if device.declares(prioritized_replay) else None
    check_the_buffer_keeps_its_priorities(spelled_run(prioritized_replay, where))
