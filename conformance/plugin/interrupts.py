"""Ctrl-C stops the run even when Python swallows it.

Python raises ``KeyboardInterrupt`` wherever the main thread happens to be when SIGINT arrives.
If that is a finalizer (``__del__``, a weakref callback: torch and tensordict objects are
collected all the time), the exception is printed as "Exception ignored in ..." and dropped, and
the run goes on as if Ctrl-C had never been pressed (``tests.mutants.hangs:CTRL_C_IN_FINALIZER``
shows it: without this guard the run goes through every test). So SIGINT is also remembered, and
the run stops at the next phase of the next test, with the tests that finished kept and the
results marked partial, as for any Ctrl-C. A process that inherited SIGINT ignored (a shell's
background job) is left as its parent chose.
"""

from __future__ import annotations

import signal
import threading

import pytest


class InterruptGuard:
    def __init__(self):
        self.pending = False

    def _on_sigint(self, signum, frame):
        self.pending = True
        raise KeyboardInterrupt

    def pytest_sessionstart(self, session):
        # only over Python's own handler: a debugger or a caller may have installed theirs
        if (threading.current_thread() is threading.main_thread()
                and signal.getsignal(signal.SIGINT) is signal.default_int_handler):
            signal.signal(signal.SIGINT, self._on_sigint)

    def _check(self):
        if self.pending:
            raise KeyboardInterrupt("Ctrl-C (an earlier KeyboardInterrupt was swallowed)")

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_setup(self, item):
        self._check()

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_call(self, item):
        self._check()
