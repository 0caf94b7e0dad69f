"""What every benchmark shares: the implementations (through the suite's registry), devices,
the seed, one thread, the CPU's timer (how a call is bracketed on each device, CUDA
synchronisation included, is ``benchtools.clock``).

Implementations are chosen exactly as ``--impl`` chooses them for the specs
(``conformance.implementations.resolve``): ``reference``, ``torchrl`` or ``pkg.module:object``,
from ``TORCHRL_CONFORMANCE_IMPL`` (default ``reference,torchrl``). An area an implementation
does not provide, or cannot run here (``Untestable``), and a device that is absent raise
``NotImplementedError``: asv shows the point as n/a, the side-by-side run as skipped with the
reason. Nothing here imports torch at module level, so asv can list the benchmarks cheaply.
"""

from __future__ import annotations

import functools
import os

from conformance.implementations import UnknownImplementation, names, resolve

#: the asv classes' device parameter: ``TORCHRL_CONFORMANCE_BENCH_DEVICES=cuda`` on a GPU machine
#: records the cuda points only (asv runs a process per point: the CPU's would double the time)
DEVICES_VAR = "TORCHRL_CONFORMANCE_BENCH_DEVICES"
KNOWN_DEVICES = ("cpu", "cuda")


def devices() -> list[str]:
    raw = os.environ.get(DEVICES_VAR) or ",".join(KNOWN_DEVICES)
    chosen = [d.strip() for d in raw.split(",") if d.strip()]
    unknown = [d for d in chosen if d not in KNOWN_DEVICES]
    if unknown or not chosen:
        raise ValueError(f"{DEVICES_VAR}={raw!r}: choose among {', '.join(KNOWN_DEVICES)}")
    return chosen


DEVICES = devices()
SEED = 20261122
#: torch intra-op threads inside every benchmark. One by default: on small shared machines
#: two-thread kernels on tiny tensors swing by up to 10x and make ratios meaningless.
THREADS_VAR = "TORCHRL_CONFORMANCE_BENCH_THREADS"


def implementation_names() -> list[str]:
    """The implementation ids to benchmark, as the --impl value names them."""
    return names(None)  # $TORCHRL_CONFORMANCE_IMPL, else the default: as --impl reads it


IMPLEMENTATIONS = implementation_names()


def select(names: list[str]) -> None:
    """Benchmark ``names`` from now on (the side-by-side run's ``--bench-impl``). In place: the
    asv classes' parameter lists are this very list."""
    IMPLEMENTATIONS[:] = names
    _selected.cache_clear()

#: ratios are <implementation> / BASELINE when the baseline is selected
BASELINE = "torchrl"


TIMER_VAR = "TORCHRL_CONFORMANCE_BENCH_TIMER"  # "cpu" (default) or "wall"


def timer():
    """The CPU points' clock. The process's CPU time by default: with one thread, other
    processes on a shared machine barely change it (wall time swings several-fold);
    ``TORCHRL_CONFORMANCE_BENCH_TIMER=wall`` for wall time. The cuda points always use wall
    time (``benchtools.clock``)."""
    import time

    return time.perf_counter if os.environ.get(TIMER_VAR) == "wall" else time.process_time


def threads() -> int:
    return int(os.environ.get(THREADS_VAR, "1"))


@functools.cache
def _selected() -> dict[str, object]:
    # keyed by the name as given (asv params and report columns), not by the registry's id
    chosen = resolve(",".join(IMPLEMENTATIONS))
    return {name: s.obj for name, s in zip(IMPLEMENTATIONS, chosen, strict=True)}


def preload() -> None:
    """Under asv (``$ASV`` set, or asv's runner script), import torch and resolve every selected implementation's areas
    now: asv's forkserver imports the benchmark modules once and forks a process per point from
    it, so each point starts with them loaded instead of importing torch and TorchRL again
    (seconds of CPU a point, most of a ``--quick`` run). Whatever fails here is left to the
    point's own set-up, which reports it as n/a."""
    import sys
    from pathlib import Path

    runner = Path(sys.argv[0] if sys.argv else "")  # asv's forkserver: .../asv/benchmark.py
    if os.environ.get("ASV") != "true" and not (runner.name == "benchmark.py"
                                                 and "asv" in runner.parts):
        return
    try:
        import torch

        torch.set_num_threads(threads())  # before any op: a forked child inherits no pool
        from conformance.areas import ORDER

        for name in IMPLEMENTATIONS:
            for area in ORDER:
                try:
                    area_of(name, area.name)
                except NotImplementedError:
                    pass
    except Exception:  # noqa: BLE001 - the points say it, one by one
        pass


def area_of(implementation: str, area: str):
    """The ``area`` object of ``implementation`` (from the registry), or NotImplementedError."""
    from conformance.interface import Untestable

    try:
        impl = _selected()[implementation]
    except UnknownImplementation as exc:
        raise NotImplementedError(str(exc)) from None
    except KeyError:
        raise NotImplementedError(f"{implementation!r} is not among {IMPLEMENTATIONS}") from None
    try:
        obj = getattr(impl, area, None)
    except Untestable as exc:
        raise NotImplementedError(f"{implementation} cannot run {area} here: {exc}") from None
    if obj is None:
        raise NotImplementedError(f"{implementation} does not provide {area}")
    return obj


def device(name: str):
    """The torch device ``name`` with one thread and the seed set; n/a when absent."""
    import torch

    if name == "cuda" and not torch.cuda.is_available():
        raise NotImplementedError("no CUDA device")
    torch.set_num_threads(threads())
    torch.manual_seed(SEED)
    return torch.device(name)


def library_attribute(area_obj, name: str, why: str):
    """An attribute of the wrapped library that an area object may expose beyond the interface
    (the built-in adapters do); n/a with the reason for an implementation without it."""
    value = getattr(area_obj, name, None)
    if value is None:
        raise NotImplementedError(f"{type(area_obj).__name__} exposes no `{name}` ({why})")
    return value
