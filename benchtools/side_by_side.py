"""pytest-benchmark over the same workloads as asv: every workload, at every point of its grid,
on every selected implementation, in one process (``python -m benchtools`` drives it; its options
are in ``benchtools/conftest.py``).

One test per group (``benchtools.groups``) and pass: the implementations of a point, with the
points its targets divide it by (``Workload.companions``). ``benchmark.pedantic`` times the
group's *cycles*: one round is one cycle of ``benchtools.turns``, in which every call of the group
gets its slice of calibrated rounds, the first call rotating. So pytest-benchmark's own table,
JSON and ``compare`` see one entry per group (its cycle time), and each call's per-cycle medians,
min, max and rounds go into the entry's ``extra_info["calls"]``, from which the report takes its
medians and paired ratios. A point that cannot run here is listed with its reason (``--bench-skips``)
and reported as not measured; the group's other points still run.
"""

from __future__ import annotations

import itertools
import json
import math

import pytest

from benchtools import groups, registry, turns

_OVER_BUDGET: dict = {}  # (workload, implementation, other params) -> (size, seconds) too slow
_GROUPS: dict[str, groups.Group] = {}


def pytest_generate_tests(metafunc):
    if "group" not in metafunc.fixturenames:
        return
    from benchtools.conftest import Options

    options = Options.of(metafunc.config)
    registry.select(options.implementations)
    _GROUPS.update((g.label, g) for g in groups.groups(options.implementations, options.device))
    suffix = (lambda walk: f"-pass{walk + 1}") if options.passes > 1 else (lambda walk: "")
    metafunc.parametrize(("group", "walk"), [
        pytest.param(label, walk, id=label + suffix(walk))
        for walk in range(options.passes) for label in _GROUPS])


def test_group(benchmark, bench_options, group, walk):
    options = bench_options
    measured, skipped = [], []  # (record info, Timing)
    for workload, impl, params in _GROUPS[group].items:
        info = {"area": _GROUPS[group].area, "workload": workload.name, "implementation": impl,
                "device": options.device, "params": {k: str(v) for k, v in params.items()},
                "size_key": workload.size_key}
        try:
            measured.append((info, _prepare(workload, impl, params, options)))
        except NotImplementedError as exc:
            _record_skip(options.skips, info, str(exc))
            skipped.append(f"{workload.name} {impl or 'yardstick'}: {exc}")
    if not measured:
        pytest.skip("; ".join(dict.fromkeys(skipped)))
    clock = options.clock
    timings = [t for _, t in measured]
    # pedantic needs its number of rounds up front: one cycle, not kept, sizes the pass
    first = turns.cycle(timings, 0, clock)
    needed = turns.cycles_needed(timings)
    for timing in timings:
        timing.cycles.clear()
        timing.round_seconds.clear()
    rounds = max(needed, math.ceil(options.max_time * len(timings) / max(first, 1e-9)))
    number = itertools.count()
    benchmark.pedantic(lambda: turns.cycle(timings, next(number), clock), rounds=rounds,
                       iterations=1, warmup_rounds=0)
    benchmark.extra_info.update(group=group, walk=walk, calls=[
        {**info, "cycles": t.cycles, "loops": t.loops, "rounds": len(t.round_seconds),
         "min": min(t.round_seconds) / t.loops, "max": max(t.round_seconds) / t.loops}
        for info, t in measured])


def _prepare(workload, impl, params, options) -> turns.Timing:
    from benchtools.workload import timing

    series = (workload.name, impl,
              tuple((k, v) for k, v in params.items() if k != workload.size_key))
    size, seconds = _OVER_BUDGET.get(series, (None, None))
    if size is not None and params[workload.size_key] >= size:  # a larger size: only slower
        raise NotImplementedError(f"{workload.size_key}={size} already took {seconds:.1f} s "
                                  f"a call, over the side-by-side budget of "
                                  f"{options.max_call:g} s")
    result = timing(workload, impl, options.device, options.clock, **params)
    first = result.probe_seconds
    if first > options.max_call:
        _OVER_BUDGET[series] = (params[workload.size_key], first)
        raise NotImplementedError(f"one call takes {first:.1f} s, over the side-by-side "
                                  f"budget of {options.max_call:g} s a call (asv measures it)")
    return result


def _record_skip(path: str | None, info: dict, reason: str) -> None:
    if path:
        with open(path, "a", encoding="utf-8") as fh:
            fh.write(json.dumps({"workload": info["workload"],
                                 "implementation": info["implementation"],
                                 "params": info["params"], "reason": reason}) + "\n")
