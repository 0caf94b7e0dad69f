"""The benchmark modules of the five areas, in the one area order (``conformance.areas``)."""

from __future__ import annotations

import importlib

from conformance.areas import ORDER


def modules():
    """``benchmarks.bench_<area>`` for every area, in order."""
    return [importlib.import_module(f"benchmarks.bench_{area.name}") for area in ORDER]


def workloads():
    """(area name, workload) for every workload of every area module, in order."""
    return [(area.name, w) for area, module in zip(ORDER, modules(), strict=True)
            for w in module.WORKLOADS]


def targets():
    """(area name, target) for every area's performance targets, in order."""
    return [(area.name, t) for area, module in zip(ORDER, modules(), strict=True)
            for t in module.TARGETS]
