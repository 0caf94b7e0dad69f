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
#: cycles every group runs at least, slow calls included: a paired ratio is a median over at
#: least this many pairs, and its spread (the lowest and highest pair) means something
MIN_PAIRS = 5


@dataclass
class Timing:
    """One call's record in a group: its rounds and per-cycle medians."""

    call: Callable[[], object]
    before: Callable[[], object] | None = None  # untimed, before every single call
    loops: int = 1  # calls per round
    round_seconds: list[float] = field(default_factory=list)  # each round, all its loops
    cycles: list[float] = field(default_factory=list)  # per cycle: median seconds per call
    probe_seconds: float = 0.0  # the first call, kept out of the record (the warm-up)


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


def probe(timing: Timing, clock) -> float:
    """Seconds of one call, kept out of the record (also its warm-up)."""
    if timing.before is not None:
        timing.before()
    start = clock()
    timing.call()
    timing.probe_seconds = clock() - start
    return timing.probe_seconds


def cycle(timings: list[Timing], number: int, clock) -> float:
    """Cycle ``number``: one slice of every call, starting with call ``number`` (mod count), so
    that no call always runs first; the seconds of timed work it took."""
    shift = number % len(timings)
    return sum(_slice(timing, clock) for timing in timings[shift:] + timings[:shift])


def cycles_needed(timings: list[Timing], min_cycles: int = MIN_PAIRS,
                  min_cycles_slow: int = MIN_PAIRS) -> int:
    """``min_cycles``, or ``min_cycles_slow`` once a call's last round took ``SLOW`` or more
    (one such round is a whole slice)."""
    if any(t.round_seconds and t.round_seconds[-1] >= SLOW for t in timings):
        return min(min_cycles, min_cycles_slow)
    return min_cycles


def run(timings: list[Timing], clock, budget: float, min_cycles: int = MIN_PAIRS,
        min_cycles_slow: int = MIN_PAIRS) -> int:
    """Cycles over ``timings`` until each call has had ``cycles_needed`` slices and the group's
    timed work reaches ``budget`` seconds; the number of cycles. GC is off while timing: a
    collection landing in one round is unrelated to the workload."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        cycles, spent = 0, 0.0
        while cycles < cycles_needed(timings, min_cycles, min_cycles_slow) or spent < budget:
            spent += cycle(timings, cycles, clock)
            cycles += 1
        return cycles
    finally:
        if enabled:
            gc.enable()


def pair_ratios(numerator: list[float], denominator: list[float]) -> list[float] | None:
    """numerator / denominator cycle by cycle (None unless both have the same cycles)."""
    if not numerator or len(numerator) != len(denominator) or not all(denominator):
        return None
    return [a / b for a, b in zip(numerator, denominator, strict=True)]


def paired_ratio(numerator: list[float], denominator: list[float]) -> float | None:
    """Median over cycles of numerator / denominator (None unless both have the same cycles)."""
    pairs = pair_ratios(numerator, denominator)
    return None if pairs is None else statistics.median(pairs)


def ratio_in_turns(numerator: Timing, denominator: Timing, clock, budget: float) -> float:
    """numerator / denominator, timed in turns for ``budget`` seconds: what asv tracks as a
    ratio (``track_ratio``), from calls already calibrated."""
    run([numerator, denominator], clock, budget)
    return paired_ratio(numerator.cycles, denominator.cycles)
