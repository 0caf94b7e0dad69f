"""Every test starts from the process state the specs expect, and leaves it so.

An implementation under test runs in the suite's process, and some process-wide settings change
what every later test computes: grad mode, the default dtype and device, deterministic
algorithms, anomaly detection, torch's thread count and float32 matmul precision, numpy's error
state and print options, the warning filters. One implementation that leaves one of them changed
would move its neighbours' verdicts (a ``set_grad_enabled(False)`` in a PPO loss fails the
reference's gradient checks; ``np.seterr(all="raise")`` raises inside the oracles), and blame
them for it.

So the state is taken once, when the suite starts (before any implementation is imported), and:

* after each test's call and teardown it is compared with that state: what changed is put back,
  and the test gets an error that names its implementation and each change ("implementation
  'x' left global state changed: grad mode: enabled -> disabled; restored");
* what an implementation changes when it is imported (``--impl`` loads it before any test) is
  put back at once, and each of its tests gets that error;
* before each test the state is put back silently if something else (a test module's import)
  moved it.

A thread that an implementation starts (at import or in a test) can change the state later,
during another implementation's test: that change is never blamed on the test it lands in. The
suite notes which implementation started each thread (:class:`ThreadOwners`); a change found
while a thread of another implementation was running is a thread leak that names that
implementation, and the run is no verdict (``conformance.plugin.results``).

Warning filters are special: libraries add ``ignore``/``once`` filters for their own warnings
when a module is first imported (TorchRL does, and torch imports sympy lazily), which changes no
verdict. The filters are restored after each test whatever changed; what counts as a leak is a
filter that turns warnings into errors, or filters removed (``resetwarnings``).
"""

from __future__ import annotations

import threading
import warnings
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pytest
import torch

from conformance.plugin import keys


@dataclass(frozen=True)
class Setting:
    name: str
    get: Callable[[], object]
    put: Callable[[object], None]


def _put_deterministic(value) -> None:
    enabled, warn_only = value
    torch.use_deterministic_algorithms(enabled, warn_only=warn_only)


def _put_anomaly(value) -> None:
    enabled, check_nan = value
    torch.autograd.set_detect_anomaly(enabled, check_nan)


SETTINGS = (
    Setting("grad mode", torch.is_grad_enabled, torch.set_grad_enabled),
    Setting("default dtype", torch.get_default_dtype, torch.set_default_dtype),
    Setting("default device", torch.get_default_device, torch.set_default_device),
    Setting("deterministic algorithms (enabled, warn_only)",
            lambda: (torch.are_deterministic_algorithms_enabled(),
                     torch.is_deterministic_algorithms_warn_only_enabled()),
            _put_deterministic),
    Setting("anomaly detection (enabled, check_nan)",
            lambda: (torch.is_anomaly_enabled(), torch.is_anomaly_check_nan_enabled()),
            _put_anomaly),
    Setting("torch threads", torch.get_num_threads, torch.set_num_threads),
    Setting("float32 matmul precision", torch.get_float32_matmul_precision,
            torch.set_float32_matmul_precision),
    Setting("numpy error state", np.geterr, lambda v: np.seterr(**v)),
    Setting("numpy print options", np.get_printoptions, lambda v: np.set_printoptions(**v)),
)


def _shown(value) -> str:
    if isinstance(value, bool):
        return "enabled" if value else "disabled"
    return str(value)


def snapshot() -> tuple:
    return tuple(s.get() for s in SETTINGS)


def restore(expected: tuple) -> list[str]:
    """Put every setting that differs from ``expected`` back; what changed, one item each."""
    changes = []
    for setting, want, have in zip(SETTINGS, expected, snapshot(), strict=True):
        if have != want:
            if isinstance(want, dict):
                moved = {k: f"{want.get(k)!r} -> {have.get(k)!r}" for k in sorted(have)
                         if have.get(k) != want.get(k)}
                changes.append(f"{setting.name}: " + ", ".join(f"{k} {v}" for k, v in moved.items()))
            else:
                changes.append(f"{setting.name}: {_shown(want)} -> {_shown(have)}")
            setting.put(want)
    return changes


def filter_changes(before: list, after: list) -> list[str]:
    """Warning-filter changes that can move a verdict: an ``error`` filter added, filters removed."""
    changes = [f"warning filter added: {f[0]} {getattr(f[2], '__name__', f[2])}"
               + (f" matching {f[1].pattern!r}" if f[1] is not None else "")
               for f in after if f[0] == "error" and f not in before]
    removed = [f for f in before if f not in after]
    if removed:
        changes.append(f"{len(removed)} warning filter(s) removed")
    return changes


def put_filters(filters: list) -> None:
    """Make ``warnings.filters`` hold ``filters`` again, through the public API."""
    warnings.resetwarnings()
    for action, message, category, module, lineno in reversed(filters):
        warnings.filterwarnings(action, message.pattern if message else "", category,
                                module.pattern if module else "", lineno)


def leak_message(impl_id: str | None, changes: list[str], when: str) -> str:
    who = f"implementation {impl_id!r}" if impl_id else "this test"
    return (f"{who} left global state changed {when}: " + "; ".join(changes)
            + " (restored, so that the tests after it run from the expected state)")


def thread_idents() -> set[int]:
    return {t.ident for t in threading.enumerate() if t.ident is not None}


class ThreadOwners:
    """Which implementation started each thread (thread id -> (implementation, thread name))."""

    def __init__(self):
        self.owners: dict[int, tuple[str, str]] = {}

    def claim(self, before: set[int], impl_id: str | None) -> None:
        """The threads running now that were not in ``before`` were started by ``impl_id``."""
        for thread in threading.enumerate():
            if thread.ident is not None and thread.ident not in before \
                    and thread.ident not in self.owners and impl_id:
                self.owners[thread.ident] = (impl_id, thread.name)

    def others(self, impl_id: str | None, seen: set[int]) -> list[str]:
        """Threads of implementations other than ``impl_id`` among ``seen`` or running now."""
        idents = seen | thread_idents()
        return sorted({f"{owner!r} (thread {name!r})" for ident, (owner, name) in self.owners.items()
                       if ident in idents and owner != impl_id})


#: one per process: implementations are imported once (``pytest_plugin._resolve``)
OWNERS = ThreadOwners()


def thread_leak_message(impl_id: str | None, suspects: list[str], changes: list[str],
                        when: str) -> str:
    return (f"global state changed {when} of {impl_id or 'a test'!r} while a thread started by "
            f"implementation {', '.join(suspects)} was running: " + "; ".join(changes)
            + " (restored; not blamed on this test; no verdict for a run in which a thread "
            "changes global state)")


class IsolationPlugin:
    """Where tests run: restore before, check and restore after, blame the implementation."""

    def __init__(self, expected: tuple, item_impl: Callable, import_leaks: dict[str, str]):
        self.expected = expected
        self.item_impl = item_impl
        self.import_leaks = import_leaks  # implementation id -> what its import changed
        self.filters: list = []
        self.catcher = None

    def _check(self, item, when: str, filters_after: list | None = None) -> None:
        changes = restore(self.expected)
        if filters_after is not None:
            changes += filter_changes(self.filters, filters_after)
        if not changes:
            return
        impl = self.item_impl(item)
        suspects = OWNERS.others(impl, self.running)
        if suspects:  # another implementation's thread may have made it: not this test's fault
            item.stash[keys.THREAD_LEAK] = thread_leak_message(impl, suspects, changes, when)
        else:  # reported with this phase (conformance.plugin.results.OutcomeRecorder)
            item.stash[keys.STATE_LEAK] = leak_message(impl, changes, when)

    running: set = frozenset()  # threads running when the current test was set up

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_setup(self, item):
        self.running = thread_idents()
        # moved by something that is no test (an import at collection), or by a thread an
        # implementation started, after the last test's check
        changes = restore(self.expected)
        suspects = OWNERS.others(None, self.running) if changes else []
        if suspects:
            item.stash[keys.THREAD_LEAK] = thread_leak_message(
                self.item_impl(item), suspects, changes, "before the test")
        self.filters = list(warnings.filters)
        self.catcher = warnings.catch_warnings()
        self.catcher.__enter__()
        leaked = self.import_leaks.get(self.item_impl(item) or "")
        if leaked:
            item.stash[keys.STATE_LEAK] = leaked

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_call(self, item):
        before = thread_idents()
        try:
            return (yield)
        finally:
            OWNERS.claim(before, self.item_impl(item))  # the threads this test started
            self.running = self.running | thread_idents()
            self._check(item, "in its test")

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_teardown(self, item, nextitem):
        try:
            return (yield)
        finally:
            after = list(warnings.filters)
            if self.catcher is not None:
                self.catcher.__exit__(None, None, None)
                self.catcher = None
            self._check(item, "after its test", after)
