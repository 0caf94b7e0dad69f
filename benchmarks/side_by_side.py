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

import json
import os
import time

import pytest

from benchmarks import common, suite
from benchmarks.common import DEVICE_VAR, MAX_CALL_VAR, PASSES_VAR, SKIPS_VAR

#: a point whose single call takes longer is not measured here (asv has it): it would take the
#: run past its few minutes (TorchRL's get_mode() at 1e5 takes tens of seconds a call)
MAX_CALL_DEFAULT = 3.0
# The machine's speed drifts by a third over seconds (measured: one tanh over 1e5 float64 took
# 640 or 890 µs, pinned to one core, nothing else running), so one point measured in one short
# window lands in whichever regime the window caught. The whole grid is walked PASSES times and
# each point's rounds are pooled over the passes (``benchmarks.run.merge_passes``): every
# point's median then spans the run, not a quarter of a second.
PASSES = max(1, int(os.environ.get(PASSES_VAR, "1")))
FRESH_STATE_ROUNDS = max(10, 30 // PASSES)  # per pass
SLOW = 0.05  # seconds: above this a call is timed in fixed rounds, not calibrated ones
SLOW_ROUNDS = max(2, 5 // PASSES)  # per pass
_OVER_BUDGET: dict = {}  # (workload, implementation, other params) -> (size, seconds) too slow


def _label(params: dict) -> str:
    return ",".join(f"{k}={v}" for k, v in params.items())


def _cases():
    for walk in range(PASSES):
        for area, workload in suite.workloads():
            for params in workload.points():
                for impl in common.IMPLEMENTATIONS if workload.area else [None]:
                    ident = f"{area}.{workload.name}[{_label(params)}]-{impl or 'yardstick'}"
                    if PASSES > 1:
                        ident += f"-pass{walk + 1}"
                    yield pytest.param(area, workload, impl, params, walk, id=ident)


@pytest.mark.parametrize(("area", "workload", "implementation", "params", "walk"), list(_cases()))
def test_workload(benchmark, area, workload, implementation, params, walk):
    device = os.environ.get(DEVICE_VAR, "cpu")
    benchmark.group = f"{area}.{workload.name}[{_label(params)}]"
    benchmark.extra_info.update(area=area, workload=workload.name, implementation=implementation,
                                device=device, params={k: str(v) for k, v in params.items()},
                                size_key=workload.size_key, walk=walk)
    limit = float(os.environ.get(MAX_CALL_VAR, MAX_CALL_DEFAULT))
    series = (workload.name, implementation,
              tuple((k, v) for k, v in params.items() if k != workload.size_key))
    try:
        if series in _OVER_BUDGET:  # grids grow: a larger size would only take longer
            size, seconds = _OVER_BUDGET[series]
            raise NotImplementedError(f"{workload.size_key}={size} already took {seconds:.1f} s "
                                      f"a call, over the side-by-side budget of {limit:g} s")
        timed = workload.build(implementation, device, **params)
        probe = _probe(timed, device)
        if probe > limit:
            _OVER_BUDGET[series] = (params[workload.size_key], probe)
            raise NotImplementedError(f"one call takes {probe:.1f} s, over the side-by-side "
                                      f"budget of {limit:g} s a call (asv measures it)")
    except NotImplementedError as exc:
        _record_skip(benchmark.extra_info, str(exc))
        pytest.skip(str(exc))
    if timed.before is not None:
        benchmark.pedantic(timed.call, setup=timed.before, rounds=FRESH_STATE_ROUNDS,
                           iterations=1, warmup_rounds=0)
    elif probe > SLOW:
        benchmark.pedantic(timed.call, rounds=SLOW_ROUNDS, iterations=1, warmup_rounds=0)
    else:
        benchmark(timed.call)


def _probe(timed, device: str) -> float:
    """Seconds of one call kept out of the record (also the warm-up), on the run's clock: CPU
    time on the CPU, so the budget does not depend on how loaded the machine is."""
    clock = time.process_time if device == "cpu" else time.perf_counter
    if timed.before is not None:
        timed.before()
    start = clock()
    timed.call()
    return clock() - start


def _record_skip(info: dict, reason: str) -> None:
    if os.environ.get(SKIPS_VAR):
        with open(os.environ[SKIPS_VAR], "a", encoding="utf-8") as fh:
            fh.write(json.dumps({"workload": info["workload"],
                                 "implementation": info["implementation"],
                                 "params": info["params"], "reason": reason}) + "\n")
