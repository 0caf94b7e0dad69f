"""A wall-clock limit on every test, for hangs in Python and in native code alike.

Two layers, because one cannot do both jobs:

- ``SIGALRM`` raises :class:`SpecTimeout` in the test when its time is up. It derives from
  ``BaseException`` on purpose: hypothesis catches ``Exception`` (and pytest's ``Failed``, which is
  how pytest-timeout fails a test) per example and goes on shrinking, so a hang inside a property
  test would otherwise restart with the next example.
- A watchdog thread ends the process ``GRACE`` seconds later if the test is still running: code
  stuck in C with the GIL held never lets a Python signal handler run. Under pytest-xdist
  (``-n``, what ``nox -s conformance`` uses) only that worker dies; xdist reports the test as
  crashed and starts a new worker, and the note left in ``notes_dir`` lets the results say
  "timed out" instead of "crashed". Without xdist the whole run ends, after ``on_kill`` has
  written the results and report.

Crashes (a segfault in an extension) are explained the same way: each worker points
``faulthandler`` at its own file in ``notes_dir`` and records which test it is running.
"""

from __future__ import annotations

import faulthandler
import os
import signal
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest

# The slowest legitimate spec is TorchRL's failing replay property test, whose time goes into
# hypothesis shrinking: 10.9 s on an idle 2-core machine, 60-115 s on one loaded 5-fold.
DEFAULT_SECONDS = 120.0
GRACE = 5.0
ENV_VAR = "TORCHRL_CONFORMANCE_SPEC_TIMEOUT"
KILLED_EXIT_CODE = 70


class SpecTimeout(BaseException):
    """The test ran past its wall-clock limit."""


def timed_out_message(seconds: float) -> str:
    return f"timed out after {seconds:g} s"


MAX_SECONDS = 86400.0  #: a day: longer is no limit, and a timer of 1e300 s overflows


class Watchdog:
    def __init__(self, seconds: float, notes_dir: Path | None, worker: str,
                 on_kill: Callable[[str, str], None] | None = None):
        # nan compares false with everything (no limit at all), inf and 1e300 overflow the
        # timer: only a finite number of seconds up to a day, or 0 (no limit), is a limit
        if not (seconds == 0 or 0 < seconds <= MAX_SECONDS):
            raise pytest.UsageError(f"--spec-timeout {seconds:g}: a finite number of seconds "
                                    f"between 0 (no limit) and {MAX_SECONDS:g}")
        self.seconds = seconds
        self.notes_dir = notes_dir
        self.worker = worker
        self.on_kill = on_kill
        self._current: tuple[str, float] | None = None
        self.fired: str | None = None  #: node id of the test the alarm fired in
        self._lock = threading.Lock()
        self._crash_file = None
        if seconds > 0:
            threading.Thread(target=self._watch, name="conformance-watchdog", daemon=True).start()

    def record_crashes(self) -> None:
        """Point faulthandler at this worker's crash note (after pytest's own faulthandler
        plugin has pointed it at stderr, which the controller does not keep)."""
        if self.notes_dir is not None and self._crash_file is None:
            self._crash_file = open(self.notes_dir / f"{self.worker}.crash", "w")  # noqa: SIM115 - faulthandler keeps it
            faulthandler.enable(file=self._crash_file)

    # ------------------------------------------------------------------ per test
    def start(self, nodeid: str) -> None:
        self.fired = None
        with self._lock:
            self._current = (nodeid, time.monotonic() + self.seconds)
        if self.notes_dir is not None:
            (self.notes_dir / f"{self.worker}.running").write_text(nodeid)

    def stop(self) -> None:
        with self._lock:
            self._current = None

    def arm(self) -> None:
        """Alarm at the test's deadline, for one phase (inside pytest's per-phase exception
        handling, so that the exception lands in the test and not in pytest's own code)."""
        with self._lock:
            current = self._current
        if (self.seconds > 0 and current and not self.fired
                and threading.current_thread() is threading.main_thread()):
            signal.signal(signal.SIGALRM, self._alarm)
            signal.setitimer(signal.ITIMER_REAL, max(current[1] - time.monotonic(), 0.01))

    def disarm(self) -> None:
        if self.seconds > 0 and threading.current_thread() is threading.main_thread():
            signal.setitimer(signal.ITIMER_REAL, 0)

    def _alarm(self, signum, frame):
        with self._lock:
            if self._current is None:
                return
            nodeid = self._current[0]
            # what is left of the test (its teardown) gets GRACE more before the hard limit
            self._current = (nodeid, time.monotonic())
        self.fired = nodeid
        # fire again until the phase ends: code that catches BaseException (hypothesis does,
        # between examples) must not run on; the phase wrapper disarms it
        signal.setitimer(signal.ITIMER_REAL, 1.0)
        raise SpecTimeout(timed_out_message(self.seconds))

    # ------------------------------------------------------------------ hard limit
    def _watch(self) -> None:
        while True:
            time.sleep(0.5)
            with self._lock:
                current = self._current
            if current is None or time.monotonic() < current[1] + GRACE:
                continue
            nodeid = current[0]
            why = (f"{timed_out_message(self.seconds)} (stuck outside Python, where the alarm "
                   f"cannot interrupt it: the process running it was killed)")
            if self.notes_dir is not None:
                (self.notes_dir / f"{self.worker}.killed").write_text(f"{nodeid}\n{why}")
            if self.on_kill is not None:
                try:
                    self.on_kill(nodeid, why)
                finally:
                    os._exit(KILLED_EXIT_CODE)
            os._exit(KILLED_EXIT_CODE)


def crash_explanation(notes_dir: Path | None, nodeid: str) -> str:
    """Why the worker running ``nodeid`` died, from the notes the workers left."""
    if notes_dir is not None and notes_dir.is_dir():
        for running in notes_dir.glob("*.running"):
            if running.read_text() != nodeid:
                continue
            worker = running.stem
            killed = notes_dir / f"{worker}.killed"
            if killed.is_file() and killed.read_text().split("\n", 1)[0] == nodeid:
                return killed.read_text().split("\n", 1)[1]
            crash = notes_dir / f"{worker}.crash"
            text = crash.read_text(errors="replace").strip() if crash.is_file() else ""
            fatal = next((line for line in text.splitlines() if line.startswith("Fatal Python error")), "")
            if fatal:
                return f"the process crashed: {fatal.removeprefix('Fatal Python error: ')}"
    return "the process crashed (no signal recorded)"


class WatchdogPlugin:
    """Arms the watchdog for each test, and its alarm for each phase of it."""

    def __init__(self, watchdog: Watchdog):
        self.watchdog = watchdog

    def pytest_sessionstart(self, session):
        self.watchdog.record_crashes()

    @pytest.hookimpl(hookwrapper=True, tryfirst=True)
    def pytest_runtest_protocol(self, item, nextitem):
        self.watchdog.start(item.nodeid)
        try:
            yield
        finally:
            self.watchdog.stop()

    def _phase(self):
        self.watchdog.arm()
        try:
            yield
        finally:
            self.watchdog.disarm()

    @pytest.hookimpl(hookwrapper=True, tryfirst=True)
    def pytest_runtest_setup(self, item):
        yield from self._phase()

    @pytest.hookimpl(hookwrapper=True, tryfirst=True)
    def pytest_runtest_call(self, item):
        yield from self._phase()

    @pytest.hookimpl(hookwrapper=True, tryfirst=True)
    def pytest_runtest_teardown(self, item, nextitem):
        yield from self._phase()
