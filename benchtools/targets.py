"""Performance targets: computed from one run's medians, reported as met or not, never asserted.

Each area's targets live next to its workloads (``TARGETS`` in ``bench_<area>.py``). A target is
evaluated for every selected implementation (the reference, a plug-in, another library's
adapter); one that compares against another implementation (``versus``, TorchRL) is not
evaluated for that implementation itself. A point that was not measured gives "not measured",
never a verdict.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from benchtools.turns import paired_ratio


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


def ratio(a: Stats | float | None, b: Stats | float | None) -> float | None:
    """a / b. Two points measured in turns in one group: the median over their cycles of the
    per-cycle ratio (each pair timed within milliseconds, so a change of the machine's speed
    cancels); otherwise the ratio of the medians."""
    if a is None or b is None:
        return None
    if isinstance(a, Stats) and isinstance(b, Stats):
        if a.group and a.group == b.group:
            paired = paired_ratio(list(a.cycles), list(b.cycles))
            if paired is not None:
                return paired
        a, b = a.median, b.median
    elif isinstance(a, Stats) or isinstance(b, Stats):
        raise TypeError("ratio of a Stats and a number: pass two Stats or two numbers")
    return a / b if b else None


@dataclass(frozen=True)
class Target:
    text: str  #: what is measured, with ``{impl}`` for the implementation
    goal: str  #: e.g. "<= 2"
    measure: Callable[[Points, str], float | None]
    ok: Callable[[float], bool]
    versus: str | None = None  #: the implementation compared against, if any
    #: the device the target is about (None: any, evaluated on the run's device); on a run on
    #: another device it is "not measured", never a verdict
    device: str | None = None

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
            else:
                verdict = "met" if self.ok(value) else "NOT met"
                out.append(f"- {text} = **{value:.3g}** (target {self.goal}: {verdict})")
        return out
