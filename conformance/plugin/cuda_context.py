"""A CUDA context that a test left unusable: blame that test, never the ones after it.

A device-side assert (an out-of-range index reaching a CUDA gather, as TorchRL's composite
distribution does under ``ExplorationType.MEAN``, pytorch/rl#2402) does not raise in the test
that launched the kernel as an ``IndexError`` does on the CPU: it poisons the process's CUDA
context, and every later CUDA call of that process fails with "device-side assert triggered".
Seen on an H200 (tools/gpu_run.sh): one known failure of TorchRL turned 209 specs of both
implementations red in the worker that ran it. No state can be put back (isolation.py restores
what can be), so:

* after each test's call on a CUDA run, the context is checked (a synchronisation and one tiny
  kernel): when it is lost, that test fails with an error that names its implementation (as a
  state leak does, overriding an expected failure: this is worse than the failure listed);
* then this process runs no other spec: a pytest-xdist worker ends itself once the test is
  reported (pytest-xdist starts a fresh worker and hands it the tests that were waiting), and a
  single process stops the session, so the run is incomplete rather than wrong.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable

import pytest
import torch

from conformance import device
from conformance.plugin import keys

EXIT_CODE = 3  # a worker that ends itself; pytest-xdist reports and replaces it


def lost(where: torch.device) -> str | None:
    """Why the CUDA context of ``where`` is unusable (one line), or None when it works."""
    if where.type != "cuda":  # a fake-CUDA self-test computes on the CPU: nothing to check
        return None
    try:
        torch.cuda.synchronize(where)
        torch.ones(1, device=where).add_(1).item()
    except Exception as exc:  # noqa: BLE001 - torch.AcceleratorError, or RuntimeError before it
        return f"{type(exc).__name__}: {(str(exc).strip().splitlines() or [''])[0]}"
    return None


def message(impl: str | None, why: str) -> str:
    return (f"implementation {impl or '?'!r} left this process's CUDA context unusable in its "
            f"test ({why}); a device-side assert poisons every later CUDA call of the process, "
            "so no other spec runs in it")


class CudaContextPlugin:
    def __init__(self, item_impl: Callable, in_worker: bool, check: Callable | None = None):
        self.item_impl = item_impl
        self.in_worker = in_worker
        self.check = check
        self.culprit: str | None = None

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_call(self, item):
        try:
            return (yield)
        finally:
            # `lost` looked up now: tests/plugin/fake_cuda.py replaces it to stage a lost context
            why = (self.check or lost)(device.target())
            if why is not None:
                self.culprit = item.nodeid
                item.stash[keys.STATE_LEAK] = message(self.item_impl(item), why)

    @pytest.hookimpl(trylast=True)
    def pytest_runtest_logfinish(self, nodeid, location):
        if self.culprit is None:
            return
        text = f"conformance: the CUDA context was lost in {self.culprit}; no other spec runs here"
        if self.in_worker:
            print(text, file=sys.stderr, flush=True)
            os._exit(EXIT_CODE)
        # a single process: stop before the next test, which would fail for no fault of its own
        raise pytest.exit.Exception(f"{text} (the run is incomplete)", returncode=1)


def register(config, item_impl: Callable) -> None:
    """Add the check to a run whose device is a CUDA device."""
    if device.current().type == "cuda":
        in_worker = getattr(config, "workerinput", None) is not None
        config.pluginmanager.register(CudaContextPlugin(item_impl, in_worker),
                                      "conformance-cuda-context")
