"""Performance targets: computed from one run's medians, reported as met or not, never asserted.

Each area's targets live next to its workloads (``TARGETS`` in ``bench_<area>.py``). A target is
evaluated for every selected implementation (the reference, a plug-in, another library's
adapter); one that compares against another implementation (``versus``, TorchRL) is not
evaluated for that implementation itself. A point that was not measured gives "not measured",
never a verdict.

A ratio of two points measured in turns (``benchtools.turns``) is a ``Ratio``: the median over
its pairs, which carries every pair's ratio, so that a target line gives its spread (lowest and
highest pair) and says when the goal lies within it (some pairs meet it and some do not: the
verdict of the median is then not settled by this run). A ratio of medians (points timed apart)
is a plain float and is said to be unpaired.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable
from dataclasses import dataclass

from benchtools.turns import pair_ratios


@dataclass(frozen=True)
class Stats:
    min: float
    median: float
    max: float
    rounds: int
    cycles: tuple = ()  #: per-cycle medians, when measured in turns with its group
    group: str = ""  #: the group it was measured with (``benchtools.groups.groups``)


class Points:
    """Medians of one run, looked up by workload, implementation and parameters."""

    def __init__(self, device: str = "cpu"):
        self._stats: dict[tuple, Stats] = {}
        self.device = device  #: the run's device: what a lookup without one means

    @staticmethod
    def _key(workload: str, implementation: str | None, device: str, params: dict) -> tuple:
        return (workload, implementation, device,
                tuple(sorted((k, str(v)) for k, v in params.items())))

    def add(self, workload, implementation, device, params, stats: Stats) -> None:
        self._stats[self._key(workload, implementation, device, params)] = stats

    def get(self, workload, implementation=None, device=None, **params) -> Stats | None:
        return self._stats.get(self._key(workload, implementation, device or self.device,
                                         params))

    def median(self, workload, implementation=None, device=None, **params) -> float | None:
        stats = self.get(workload, implementation, device, **params)
        return None if stats is None else stats.median

    def items(self):
        return self._stats.items()


class Ratio(float):
    """A ratio measured in turns: its value is the median over its pairs (one per cycle, both
    calls timed within milliseconds); ``pairs`` holds every pair's ratio, sorted."""

    pairs: tuple

    def __new__(cls, pairs):
        pairs = tuple(sorted(pairs))
        value = super().__new__(cls, statistics.median(pairs))
        value.pairs = pairs
        return value

    def spread(self, ok: Callable[[float], bool]) -> str:
        """``median of N pairs in turns, spread LO - HI``, plus ``the goal within it`` when the
        lowest and the highest pair get different verdicts from ``ok``."""
        lo, hi = self.pairs[0], self.pairs[-1]
        text = f"median of {len(self.pairs)} pairs in turns, spread {lo:.3g} – {hi:.3g}"
        return text + ("; the goal is within its spread" if ok(lo) != ok(hi) else "")


def ratio(a: Stats | float | None, b: Stats | float | None) -> float | None:
    """a / b. Two points measured in turns in one group: the median over their cycles of the
    per-cycle ratio (each pair timed within milliseconds, so a change of the machine's speed
    cancels), a ``Ratio`` that keeps its pairs; otherwise the ratio of the medians."""
    if a is None or b is None:
        return None
    if isinstance(a, Stats) and isinstance(b, Stats):
        if a.group and a.group == b.group:
            pairs = pair_ratios(list(a.cycles), list(b.cycles))
            if pairs is not None:
                return Ratio(pairs)
        a, b = a.median, b.median
    elif isinstance(a, Stats) or isinstance(b, Stats):
        raise TypeError("ratio of a Stats and a number: pass two Stats or two numbers")
    return a / b if b else None


@dataclass(frozen=True)
class Target:
    text: str  #: what is measured, with ``{impl}`` for the implementation
    goal: str  #: e.g. "<= 2"; for an account (``ok`` None), what the line measures it for
    measure: Callable[[Points, str], float | None]
    #: the verdict; None for an account: a measured line with no target, never "met"
    ok: Callable[[float], bool] | None
    versus: str | None = None  #: the implementation compared against, if any
    #: the device the target is about (None: any, evaluated on the run's device); on a run on
    #: another device it is "not measured", never a verdict
    device: str | None = None
    #: a ratio of two points that the run measures in turns: a value without its pairs (the
    #: points were timed apart) is said to be unpaired
    paired: bool = True

    def lines(self, points: Points, implementations: list[str]) -> list[str]:
        out = []
        for impl in implementations:
            if impl == self.versus:
                continue
            text = self.text.format(impl=impl)
            if self.device is not None and self.device != points.device:
                why = "no CUDA device" if self.device == "cuda" else f"not a {self.device} run"
                out.append(f"- {text}: not measured: {why} in this {points.device} run "
                           f"(target {self.goal})")
                continue
            value = self.measure(points, impl)
            if value is None:
                out.append(f"- {text}: not measured (target {self.goal})")
            elif self.ok is None:
                how = (value.spread(lambda v: True) if isinstance(value, Ratio)
                       else "unpaired: a ratio of medians")
                out.append(f"- {text} = **{value:.3g}** ({how}; no target: {self.goal})")
            else:
                verdict = "met" if self.ok(value) else "NOT met"
                how = (value.spread(self.ok) if isinstance(value, Ratio)
                       else "unpaired: a ratio of medians" if self.paired else "")
                how = f"{how}; " if how else ""
                out.append(f"- {text} = **{value:.3g}** ({how}target {self.goal}: {verdict})")
        return out
