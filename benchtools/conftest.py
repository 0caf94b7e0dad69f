"""The side-by-side run's options (pytest's own option mechanism: what ``python -m benchtools``
passes on the command line, never through the environment)."""

from __future__ import annotations

import os
from dataclasses import dataclass

import pytest


def pytest_addoption(parser):
    group = parser.getgroup("benchtools", "side-by-side benchmarks (python -m benchtools)")
    group.addoption("--bench-impl", default=None,
                    help="implementations, as for the specs (default: $TORCHRL_CONFORMANCE_IMPL, "
                         "then reference,torchrl)")
    group.addoption("--bench-device", default="cpu", choices=["cpu", "cuda"])
    group.addoption("--bench-passes", type=int, default=1,
                    help="walks over the whole grid (each point's cycles pooled over them)")
    group.addoption("--bench-max-time", type=float, default=0.25,
                    help="timed seconds per call in each pass")
    group.addoption("--bench-max-call", type=float, default=3.0,
                    help="a call that takes longer is not measured here (asv has it)")
    group.addoption("--bench-skips", default=None,
                    help="file to append the reason of every point not measured (JSON lines)")


@dataclass(frozen=True)
class Options:
    implementations: list[str]
    device: str
    passes: int
    max_time: float
    max_call: float
    skips: str | None

    @property
    def clock(self):
        """The device's clock (``benchtools.clock``): CPU time of this single-threaded process
        on the CPU (other processes on a shared machine barely change it); wall time on CUDA,
        whose work is outside the process, every call ending with a synchronisation."""
        from benchtools import clock

        return clock.of(self.device)

    @classmethod
    def of(cls, config) -> Options:
        from benchtools.registry import implementation_names

        raw = config.getoption("--bench-impl")
        names = ([n.strip() for n in raw.split(",") if n.strip()] if raw
                 else implementation_names())
        return cls(names, config.getoption("--bench-device"),
                   max(1, config.getoption("--bench-passes")),
                   config.getoption("--bench-max-time"), config.getoption("--bench-max-call"),
                   config.getoption("--bench-skips"))


@pytest.fixture(scope="session")
def bench_options(request) -> Options:
    return Options.of(request.config)


def _load() -> list[float] | None:
    """The machine's load average over 1, 5 and 15 minutes (None where the OS has none)."""
    try:
        return [round(x, 2) for x in os.getloadavg()]
    except OSError:
        return None


def pytest_sessionstart(session):
    session.config.stash[_LOAD_AT_START] = _load()


_LOAD_AT_START = pytest.StashKey[object]()


def pytest_benchmark_update_machine_info(config, machine_info):
    """The load of the machine at the start and at the end of the run, kept in the results
    (``machine_info["load"]``): the report names it, since the machine may be shared."""
    machine_info["load"] = {"start": config.stash.get(_LOAD_AT_START, None), "end": _load()}
