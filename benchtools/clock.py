"""How a timed call is bracketed on each device, in one place: both tools (the side-by-side run
and asv) get their calls and their clock from here, and no workload synchronises by itself.

On the CPU a call's work is done when it returns: the call is timed as it is, on the process's
CPU time (``registry.timer``: other processes on a shared machine barely change it).

On CUDA a call returns once its kernels are queued. So every call the tools run on a cuda point,
timed or not (``complete``: the call, the untimed ``before``, and ``prepare``'s own set-up), ends
with a synchronisation: whenever the clock is read the device's queue is empty, a round's first
call is not billed for earlier work, and its last call's kernels have finished when the round's
time is read. The clock is wall time (the work runs outside the process). A call's time is thus
its latency from the Python call to its results being ready, launch and synchronisation
included, the unit the launch+sync floor (``benchtools.floors``) is in. CUDA events would time the
same span (the stream idles while Python launches) and still need a synchronisation to be read,
so synchronising is the one mechanism. Before a cuda point is timed it is called ``warmup`` times
untimed: the CUDA context, kernel loading, library handles and the caching allocator's first
blocks are set up on first use and do not belong to any call's time.

The synchronisation and the timer are parameters of ``DeviceClock``, so the self-tests check the
bracketing with a fake device on a machine without CUDA.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

#: untimed calls of a cuda point before its first timed one (the CPU needs none: the probe call
#: of ``benchtools.turns`` is its warm-up, as before)
CUDA_WARMUP = 3


def _nothing() -> None:
    return None


@dataclass(frozen=True)
class DeviceClock:
    device: str
    read: Callable[[], float]  #: the timer
    sync: Callable[[], object] = _nothing  #: waits until the device's queued work is done
    warmup: int = 0  #: untimed calls of a point before it is timed

    @property
    def synchronises(self) -> bool:
        return self.sync is not _nothing

    def __call__(self) -> float:
        return self.read()

    def complete(self, call: Callable[[], object] | None) -> Callable[[], object] | None:
        """``call`` followed by a synchronisation (``call`` itself on the CPU: no wrapper, so
        the CPU's timings are unchanged)."""
        if call is None or not self.synchronises:
            return call
        sync = self.sync

        def completed():
            result = call()
            sync()
            return result

        completed.__wrapped__ = call
        return completed

    def warm(self, call: Callable[[], object], before: Callable[[], object] | None) -> None:
        """``warmup`` untimed calls (each after ``before``, when a call needs fresh state)."""
        for _ in range(self.warmup):
            if before is not None:
                before()
            call()


def cuda_available() -> bool:
    import torch

    return torch.cuda.is_available()


def of(device: str) -> DeviceClock:
    """The clock of ``device`` ("cpu" or "cuda"); NotImplementedError("no CUDA device") for cuda
    without one (the point is n/a)."""
    from benchtools import registry

    if device == "cpu":
        return DeviceClock("cpu", registry.timer())
    if device == "cuda":
        if not cuda_available():
            raise NotImplementedError("no CUDA device")
        import torch

        return DeviceClock("cuda", time.perf_counter, torch.cuda.synchronize, CUDA_WARMUP)
    raise NotImplementedError(f"unknown device {device!r} (cpu or cuda)")


# asv reads one ``timer`` per benchmark class, while the device is one of its parameters: the
# classes' timer reads the clock of the device their ``setup`` last chose (asv runs one point at
# a time in a process).
_ACTIVE: list[DeviceClock] = []


def use(clock: DeviceClock) -> DeviceClock:
    _ACTIVE[:] = [clock]
    return clock


def active_timer() -> float:
    """The timer asv's classes use: the clock of the point being set up (CPU time before any)."""
    if not _ACTIVE:
        use(of("cpu"))
    return _ACTIVE[0].read()
