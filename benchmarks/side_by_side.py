"""pytest-benchmark over the same workloads as asv: every workload, at every point of its grid,
on every selected implementation, in one process (``python -m benchmarks.run`` drives it).

One test per group (``suite.groups``): the implementations of a point, with the points its
targets divide it by (``Workload.companions``). A group's calls are timed round by round in turns
(``benchmarks.interleave``), so the implementations compared in a ratio saw the same machine;
each call's rounds are calibrated (a round repeats a fast call until it takes ``ROUND``) and are
recorded as one pytest-benchmark entry per point and implementation, grouped by point in its
table and JSON. A workload whose call needs fresh state (``Workload.fresh_state``) runs single
calls, each after its untimed ``Timed.before``. Implementations come from
``TORCHRL_CONFORMANCE_IMPL`` (as ``--impl``), the device from ``TORCHRL_CONFORMANCE_BENCH_DEVICE``
(cpu or cuda). A point that cannot run here is recorded as skipped, with the reason, and
reported as not measured; the group's other points still run.
"""

from __future__ import annotations

import json
import os
import types

import pytest

from benchmarks import common, interleave, suite
from benchmarks.common import DEVICE_VAR, MAX_CALL_VAR, PASSES_VAR, SKIPS_VAR

#: a point whose single call takes longer is not measured here (asv has it): it would take the
#: run past its few minutes (TorchRL's get_mode() at 1e5 takes tens of seconds a call)
MAX_CALL_DEFAULT = 3.0
# The whole grid is walked PASSES times and each point's rounds are pooled over the passes
# (``benchmarks.run.merge_passes``): a point's median then spans the run, not one moment of it.
PASSES = max(1, int(os.environ.get(PASSES_VAR, "1")))
_OVER_BUDGET: dict = {}  # (workload, implementation, other params) -> (size, seconds) too slow


def _label(params: dict) -> str:
    return ",".join(f"{k}={v}" for k, v in params.items())


def _cases():
    groups = suite.groups(common.IMPLEMENTATIONS)
    for walk in range(PASSES):
        for group in groups:
            ident = group.label + (f"-pass{walk + 1}" if PASSES > 1 else "")
            yield pytest.param(group, walk, id=ident)


@pytest.mark.parametrize(("group", "walk"), list(_cases()))
def test_group(request, group, walk):
    # pytest-benchmark's session: its JSON and console table are written from its entries
    session = request.config._benchmarksession
    device = os.environ.get(DEVICE_VAR, "cpu")
    clock = session.options["timer"].target
    limit = float(os.environ.get(MAX_CALL_VAR, MAX_CALL_DEFAULT))
    measured, skipped = [], []  # (record info, Timing)
    for workload, impl, params in group.items:
        info = {"area": group.area, "workload": workload.name, "implementation": impl,
                "device": device, "params": {k: str(v) for k, v in params.items()},
                "size_key": workload.size_key, "group": group.label, "walk": walk}
        try:
            timing = _prepare(workload, impl, params, device, clock, limit)
        except NotImplementedError as exc:
            _record_skip(info, str(exc))
            skipped.append(f"{workload.name} {impl or 'yardstick'}: {exc}")
            continue
        measured.append((info, timing))
    if not measured:
        pytest.skip("; ".join(dict.fromkeys(skipped)))
    interleave.run([t for _, t in measured], clock,
                   budget=float(session.options["max_time"]) * len(measured))
    for info, timing in measured:
        _record(session, info, timing, walk)


def _prepare(workload, impl, params, device, clock, limit):
    series = (workload.name, impl,
              tuple((k, v) for k, v in params.items() if k != workload.size_key))
    size, seconds = _OVER_BUDGET.get(series, (None, None))
    if size is not None and params[workload.size_key] >= size:  # a larger size: only slower
        raise NotImplementedError(f"{workload.size_key}={size} already took {seconds:.1f} s "
                                  f"a call, over the side-by-side budget of {limit:g} s")
    timed = workload.build(impl, device, **params)
    timing = interleave.Timing(timed.call, timed.before)
    first = _probe(timing, clock)
    if first > limit:
        _OVER_BUDGET[series] = (params[workload.size_key], first)
        raise NotImplementedError(f"one call takes {first:.1f} s, over the side-by-side "
                                  f"budget of {limit:g} s a call (asv measures it)")
    interleave.calibrate(timing, clock, first)
    return timing


def _probe(timing, clock) -> float:
    """Seconds of one call kept out of the record (also the warm-up), on the run's clock: CPU
    time on the CPU, so the budget does not depend on how loaded the machine is."""
    if timing.before is not None:
        timing.before()
    start = clock()
    timing.call()
    return clock() - start


def _record(session, info: dict, timing, walk: int) -> None:
    """One pytest-benchmark entry for one point and implementation, from its rounds."""
    from pytest_benchmark.stats import Metadata

    point = f"{info['area']}.{info['workload']}[{_label(info['params'])}]"
    name = (f"{point}-{info['implementation'] or 'yardstick'}"
            + (f"-pass{walk + 1}" if PASSES > 1 else ""))
    info = {**info, "cycles": timing.cycles, "loops": timing.loops}
    entry = types.SimpleNamespace(
        name=name, fullname=f"benchmarks/side_by_side.py::{name}", param=name, params=None,
        group=point, extra_info=info, cprofile_stats=None, has_error=False)
    options = {"disable_gc": True, "timer": session.options["timer"].target,
               "min_rounds": 1, "max_time": float(session.options["max_time"]),
               "min_time": interleave.ROUND, "precision": None, "confidence": None,
               "warmup": False}
    record = Metadata(entry, iterations=timing.loops, options=options)
    for seconds in timing.round_seconds:
        record.update(seconds)
    session.benchmarks.append(record)


def _record_skip(info: dict, reason: str) -> None:
    if os.environ.get(SKIPS_VAR):
        with open(os.environ[SKIPS_VAR], "a", encoding="utf-8") as fh:
            fh.write(json.dumps({"workload": info["workload"],
                                 "implementation": info["implementation"],
                                 "params": info["params"], "reason": reason}) + "\n")
