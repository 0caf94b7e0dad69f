"""An implementation whose first PPO call starts a thread that makes float64 the default dtype
a little later, inside whatever test runs next (issue #44): the change must never be blamed on
the next implementation's spec."""

from __future__ import annotations

import threading
import time

import torch

from tests.leaks.state import Leaky

_STARTED = threading.Event()


def _later() -> None:
    time.sleep(0.5)
    torch.set_default_dtype(torch.float64)


def _start_once() -> None:
    if not _STARTED.is_set():
        _STARTED.set()
        threading.Thread(target=_later, name="late-dtype", daemon=True).start()


LATE = Leaky("late-dtype", _start_once)
