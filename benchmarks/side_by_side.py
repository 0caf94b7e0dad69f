"""pytest-benchmark over the same workloads as asv: every workload, at every point of its grid,
on every selected implementation, in one process (``python -m benchmarks.run`` drives it).

The implementations of one point run one after the other and share a pytest-benchmark group, so
its console table compares them directly. Rounds are calibrated by pytest-benchmark; a workload
whose call needs fresh state (``Workload.fresh_state``) runs a fixed number of single calls, each
after its untimed ``Timed.before``. Implementations come from ``TORCHRL_CONFORMANCE_IMPL`` (as
``--impl``), the device from ``TORCHRL_CONFORMANCE_BENCH_DEVICE`` (cpu or cuda). A point that
cannot run here is skipped with the reason, and reported as not measured.
"""

from __future__ import annotations

import os

import pytest

from benchmarks import common, suite

DEVICE_VAR = "TORCHRL_CONFORMANCE_BENCH_DEVICE"
FRESH_STATE_ROUNDS = 30


def _label(params: dict) -> str:
    return ",".join(f"{k}={v}" for k, v in params.items())


def _cases():
    for area, workload in suite.workloads():
        for params in workload.points():
            for impl in common.IMPLEMENTATIONS if workload.area else [None]:
                ident = f"{area}.{workload.name}[{_label(params)}]-{impl or 'yardstick'}"
                yield pytest.param(area, workload, impl, params, id=ident)


@pytest.mark.parametrize(("area", "workload", "implementation", "params"), list(_cases()))
def test_workload(benchmark, area, workload, implementation, params):
    device = os.environ.get(DEVICE_VAR, "cpu")
    benchmark.group = f"{area}.{workload.name}[{_label(params)}]"
    benchmark.extra_info.update(area=area, workload=workload.name, implementation=implementation,
                                device=device, params={k: str(v) for k, v in params.items()},
                                size_key=workload.size_key)
    try:
        timed = workload.build(implementation, device, **params)
    except NotImplementedError as exc:
        pytest.skip(str(exc))
    if timed.before is None:
        benchmark(timed.call)
    else:
        benchmark.pedantic(timed.call, setup=timed.before, rounds=FRESH_STATE_ROUNDS,
                           iterations=1, warmup_rounds=0)
