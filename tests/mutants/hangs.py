"""Implementations that never return, or take the process down: the run must go on."""

from __future__ import annotations

import os
import signal
import time

from tests.mutants import implementation
from tests.mutants.ppo_value_clipping import ClippedOnly


class SleepsInPython(ClippedOnly):
    """Hangs in Python (interruptible by a signal), on every call: inside hypothesis too."""

    def critic_loss(self, **kwargs):
        time.sleep(10_000)


class HangsInNativeCode(ClippedOnly):
    """Hangs where no Python signal handler can run, as native code that masks signals does:
    SIGALRM is blocked in this thread, so the alarm is never delivered."""

    def critic_loss(self, **kwargs):
        signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGALRM})
        time.sleep(10_000)


class Segfaults(ClippedOnly):
    def critic_loss(self, **kwargs):
        os.kill(os.getpid(), signal.SIGSEGV)


class _SignalsFromItsFinalizer:
    def __del__(self):
        os.kill(os.getpid(), signal.SIGINT)
        time.sleep(1)  # the handler runs in here: its KeyboardInterrupt is printed and dropped


class CtrlCInAFinalizer(ClippedOnly):
    """Ctrl-C that lands while Python runs a finalizer (torch and tensordict objects are
    collected all the time): Python drops the KeyboardInterrupt and the call returns."""

    def critic_loss(self, **kwargs):
        _SignalsFromItsFinalizer()  # collected at once
        return super().critic_loss(**kwargs)


SLEEPS = implementation("sleeps", ppo_value_clipping=SleepsInPython())
NATIVE_HANG = implementation("native-hang", ppo_value_clipping=HangsInNativeCode())
SEGFAULT = implementation("segfault", ppo_value_clipping=Segfaults())
CTRL_C_IN_FINALIZER = implementation("ctrl-c-in-finalizer", ppo_value_clipping=CtrlCInAFinalizer())
