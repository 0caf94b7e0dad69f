"""Timing a group of calls round by round, so that every call sees the same machine.

On a shared machine the speed of the same work changes within seconds (measured here: a fixed
Python loop ran at 1x or 1.9x its fastest time, switching every few hundred milliseconds, 35% to
90% of the time slow depending on the minute). Two calls timed one after the other, each for a
quarter of a second, can land in different states, and their ratio moves by a third from run to
run. So a group's calls take turns: one *cycle* gives every call a short slice (a few calibrated
rounds, ``SLICE`` seconds at most), the starting call rotating from cycle to cycle, and cycles
repeat until the group's budget is spent. A ratio of two calls is then the median over cycles of
their per-cycle medians' ratio: each pair was timed within milliseconds, in one machine state.
"""

from __future__ import annotations

import gc
import statistics
from collections.abc import Callable
from dataclasses import dataclass, field

ROUND = 100e-6  # seconds: a round repeats a fast call until it takes this long (timer overhead)
SLICE = 0.01  # seconds of timed work per call per cycle: well inside one machine state
SLOW = 0.05  # seconds: a call at least this long is one round per cycle


@dataclass
class Timing:
    """One call's record in a group: its rounds and per-cycle medians."""

    call: Callable[[], object]
    before: Callable[[], object] | None = None  # untimed, before every single call
    loops: int = 1  # calls per round
    round_seconds: list[float] = field(default_factory=list)  # each round, all its loops
    cycles: list[float] = field(default_factory=list)  # per cycle: median seconds per call


def calibrate(timing: Timing, clock, first_call: float) -> None:
    """Calls per round so that a round takes at least ``ROUND``, from one timed call (and a
    second estimate when the call is near the timer's resolution). Fresh-state calls: one."""
    if timing.before is not None or first_call >= ROUND:
        timing.loops = 1
        return
    loops = 1
    while True:  # the first call may have been too short to time at all
        start = clock()
        for _ in range(loops):
            timing.call()
        took = clock() - start
        if took >= ROUND / 10 or loops >= 1_000_000:
            break
        loops *= 10
    timing.loops = max(1, min(1_000_000, round(loops * ROUND / max(took, 1e-9))))


def _slice(timing: Timing, clock) -> float:
    timed, per_call = 0.0, []
    while True:
        if timing.before is not None:
            timing.before()
        start = clock()
        for _ in range(timing.loops):
            timing.call()
        took = clock() - start
        timed += took
        per_call.append(took / timing.loops)
        timing.round_seconds.append(took)
        if timed >= SLICE or took >= SLOW:
            break
    timing.cycles.append(statistics.median(per_call))
    return timed


def run(timings: list[Timing], clock, budget: float, min_cycles: int = 3,
        min_cycles_slow: int = 2) -> int:
    """Cycles over ``timings`` until each call has had ``min_cycles`` slices (``min_cycles_slow``
    when a call's round in the last cycle took ``SLOW`` or more: one such round is a slice) and
    the group's timed work reaches ``budget`` seconds; the number of cycles. GC is off while
    timing: a collection landing in one round is unrelated to the workload."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        cycles, spent, needed = 0, 0.0, min_cycles
        while cycles < needed or spent < budget:
            shift = cycles % len(timings)
            for timing in timings[shift:] + timings[:shift]:
                spent += _slice(timing, clock)
            cycles += 1
            if any(t.round_seconds[-1] >= SLOW for t in timings):
                needed = min(min_cycles, min_cycles_slow)
        return cycles
    finally:
        if enabled:
            gc.enable()


def paired_ratio(numerator: list[float], denominator: list[float]) -> float | None:
    """Median over cycles of numerator / denominator (None unless both have the same cycles)."""
    if not numerator or len(numerator) != len(denominator) or not all(denominator):
        return None
    return statistics.median(a / b for a, b in zip(numerator, denominator, strict=True))
