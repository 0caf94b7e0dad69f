"""A workload, written once, and the asv benchmark class made from it.

A ``Workload`` names an area, a parameter grid and ``prepare(area_object, device, **params)``,
which builds everything untimed and returns a ``Timed``: the call to time and, when each call
needs fresh state (say, the maximum put back under the ring cursor), what to run untimed before
it. asv (``bench_<area>.py`` classes, history) and pytest-benchmark (``benchtools.side_by_side``,
ratios in one process) both time exactly ``Timed.call``; neither has workload code of its own.

Three kinds of asv class come from a workload: ``asv_class`` (``time_<name>``: raw times),
``asv_versus_baseline`` (``track_ratio``: <implementation> / torchrl at the same point) and
``asv_versus_companions`` (``track_ratio``: the point over the point its targets divide it by).
A ratio is timed in turns (``benchtools.turns``), so asv records it with history, ``asv compare``
and ``asv continuous`` like any other benchmark.

How a call is bracketed on its device (synchronisation, warm-up, the clock) is decided in
``benchtools.clock`` and applied here, in ``Workload.build`` and ``timing``: a workload's
``prepare`` never synchronises. Sizes where only a GPU makes sense (``cuda_params``) are points of
the cuda grid only.
"""

from __future__ import annotations

import hashlib
import inspect
import itertools
from collections.abc import Callable
from dataclasses import dataclass, field

from benchtools import clock as clocks
from benchtools import registry, turns


@dataclass(frozen=True)
class Timed:
    call: Callable[[], object]
    before: Callable[[], object] | None = None  # untimed, before every single call


@dataclass(frozen=True)
class Workload:
    name: str  #: the method name: ``time_<name>``
    area: str | None  #: None: an implementation-independent yardstick (e.g. one torch.tanh)
    params: dict[str, list]  #: in order; the last is the size the scaling plots use
    prepare: Callable[..., Timed] = field(repr=False)
    doc: str = ""
    #: each call needs state that the call itself destroys (``Timed.before`` restores it)
    fresh_state: bool = False
    #: params -> the other points (workload name in the same module, params) that a target
    #: divides this point by: the side-by-side run measures them interleaved with this point
    companions: Callable[[dict], list[tuple[str, dict]]] | None = field(default=None,
                                                                        repr=False)
    #: values added to the grid on cuda only (sizes where a GPU matters and a CPU run would
    #: only get slower), e.g. ``{"size": [1_000_000]}``
    cuda_params: dict[str, list] = field(default_factory=dict)
    #: params -> the point's physical floor (``benchtools.floors.Floor``: kernel launches and
    #: bytes); None: one launch, no bytes worth a copy
    floor: Callable[[dict], object] | None = field(default=None, repr=False)
    #: the CPU values asv lists where they differ from ``params`` (e.g. ``{"size": [100,
    #: 10_000]}``): asv records history, one process and set-up per point, so its grid keeps the
    #: points that targets and history quote; the side-by-side run measures the whole grid
    asv_params: dict[str, list] = field(default_factory=dict)

    def asv_grid(self) -> dict[str, list]:
        """asv's params: ``asv_params`` over ``params``, plus every cuda-only value."""
        cpu = {k: self.asv_params.get(k, v) for k, v in self.params.items()}
        return {k: [*v, *(x for x in self.cuda_params.get(k, []) if x not in v)]
                for k, v in cpu.items()}

    def grid(self, device: str = "cpu") -> dict[str, list]:
        """The parameter grid on ``device``; ``device=None``: every device's (asv's params)."""
        if device == "cpu" or not self.cuda_params:
            return self.params
        return {k: [*v, *(x for x in self.cuda_params.get(k, []) if x not in v)]
                for k, v in self.params.items()}

    def build(self, implementation: str | None, device: str, *,
              device_clock: clocks.DeviceClock | None = None, **params) -> Timed:
        """Resolve the area through the registry, then prepare, every call completed on the
        device (``benchtools.clock``); raises NotImplementedError for what cannot run here."""
        if device == "cpu" and params not in list(self.points("cpu")):
            raise NotImplementedError(f"a cuda-only point of {self.name} ({params})")
        dev = registry.device(device)
        device_clock = device_clock or clocks.of(device)
        area = registry.area_of(implementation, self.area) if self.area else None
        timed = self.prepare(area, dev, **params)
        if device_clock.synchronises:
            device_clock.sync()  # what prepare queued is no call's time
        return Timed(device_clock.complete(timed.call), device_clock.complete(timed.before))

    def points(self, device: str | None = "cpu"):
        """Every parameter combination on ``device`` (None: on any device), as dicts
        (implementation and device excluded)."""
        grid = self.grid("cuda" if device is None else device)
        names = list(grid)
        for combo in itertools.product(*grid.values()):
            yield dict(zip(names, combo, strict=True))

    @property
    def size_key(self) -> str:
        return list(self.params)[-1]

    @property
    def version(self) -> str:
        # asv compares results only while a benchmark's version is unchanged: tie it to the
        # workload's own source, not to the generic method below that every class shares
        return hashlib.sha256(inspect.getsource(self.prepare).encode()).hexdigest()[:16]


def same_point(*names: str) -> Callable[[dict], list[tuple[str, dict]]]:
    """Companions: the workloads ``names`` at the same parameters."""
    return lambda params: [(name, dict(params)) for name in names]


def asv_class(class_name: str, workload: Workload, **attributes) -> type:
    """An asv benchmark class ``class_name`` with one method, ``time_<workload.name>``, over
    params [implementation,] device, *grid.

    A ``fresh_state`` workload gets one call per sample and ``Timed.before`` in ``setup``
    (asv runs setup before every sample when ``number`` is 1), and no asv warm-up (on cuda the
    device's warm-up calls, ``benchtools.clock``, run in every setup, each after ``before``).
    """
    names = (["implementation"] if workload.area else []) + ["device", *workload.params]
    grid = ([registry.IMPLEMENTATIONS] if workload.area else []) + [
        registry.DEVICES, *workload.asv_grid().values()]

    def setup(self, *args):
        given = dict(zip(names, args, strict=True))
        impl, device = given.pop("implementation", None), given.pop("device")
        device_clock = clocks.use(clocks.of(device))  # the timer of this point's device
        self.timed = workload.build(impl, device, device_clock=device_clock, **given)
        device_clock.warm(self.timed.call, self.timed.before)
        if self.timed.before is not None:
            self.timed.before()

    def timed_call(self, *args):
        self.timed.call()

    timed_call.version = workload.version
    timed_call.__doc__ = workload.doc
    body = {"params": grid, "param_names": names, "setup": setup,
            f"time_{workload.name}": timed_call, "timeout": 600,
            # 2 rounds x 5-20 samples: medians repeat within a few percent
            "rounds": 2, "repeat": (5, 20, 10.0), "timer": staticmethod(clocks.active_timer)}
    if workload.fresh_state:
        body.update(number=1, warmup_time=0.0, repeat=(10, 40, 10.0))
    body.update(attributes)
    return type(class_name, (), body)


#: seconds of timed work behind one ratio that asv tracks (both calls, in turns)
RATIO_BUDGET = 0.5


def timing(workload: Workload, implementation: str | None, device: str,
           clock: clocks.DeviceClock, **params) -> turns.Timing:
    """The calibrated Timing of a point: its device's warm-up calls and its probe call (the
    CPU's warm-up) already made."""
    timed = workload.build(implementation, device, device_clock=clock, **params)
    clock.warm(timed.call, timed.before)
    result = turns.Timing(timed.call, timed.before)
    turns.calibrate(result, clock, turns.probe(result, clock))
    return result


def _ratio_class(class_name: str, names: list[str], grid: list, pair, doc: str) -> type:
    """An asv class with one method, ``track_ratio``, over ``names``/``grid``; ``pair(given)``
    builds the (numerator, denominator) Timings of a point."""

    def setup(self, *args):
        given = dict(zip(names, args, strict=True))
        self.clock = clocks.use(clocks.of(given["device"]))
        self.pair = pair(given, self.clock)

    def track_ratio(self, *args):
        return turns.ratio_in_turns(*self.pair, self.clock, RATIO_BUDGET)

    track_ratio.__doc__ = doc
    return type(class_name, (), {"params": grid, "param_names": names, "setup": setup,
                                 "track_ratio": track_ratio, "unit": "ratio", "timeout": 600,
                                 "rounds": 1, "repeat": 1})


def asv_versus_baseline(class_name: str, workload: Workload) -> type:
    """<implementation> / the baseline (torchrl) at every point, for every other selected
    implementation (n/a when the baseline is not selected)."""
    others = [i for i in registry.IMPLEMENTATIONS if i != registry.BASELINE]
    names = ["implementation", "device", *workload.params]

    def pair(given, clock):
        if registry.BASELINE not in registry.IMPLEMENTATIONS:
            raise NotImplementedError(f"{registry.BASELINE} is not selected")
        impl, device = given.pop("implementation"), given.pop("device")
        return (timing(workload, impl, device, clock, **given),
                timing(workload, registry.BASELINE, device, clock, **given))

    return _ratio_class(class_name, names, [others or [registry.BASELINE], registry.DEVICES,
                                            *workload.asv_grid().values()], pair,
                        f"{workload.name}: implementation / {registry.BASELINE}, in turns")


def asv_versus_companions(class_name: str, workload: Workload, siblings: list[Workload]) -> type:
    """The point over its (first) companion (``Workload.companions``: a yardstick, or the same
    call with an option flipped), for every selected implementation: the ratios the targets
    quote."""
    by_name = {w.name: w for w in siblings}
    names = ["implementation", "device", *workload.params]

    def pair(given, clock):
        impl, device = given.pop("implementation"), given.pop("device")
        other_name, other_params = workload.companions(given)[0]
        other = by_name[other_name]
        return (timing(workload, impl, device, clock, **given),
                timing(other, impl if other.area else None, device, clock, **other_params))

    return _ratio_class(class_name, names, [registry.IMPLEMENTATIONS, registry.DEVICES,
                                            *workload.asv_grid().values()], pair,
                        f"{workload.name} over its companion point, in turns")
