"""The benchmark modules of the five areas, in the one area order (``conformance.areas``)."""

from __future__ import annotations

import importlib
from dataclasses import dataclass

from conformance.areas import ORDER


def modules():
    """``benchmarks.bench_<area>`` for every area, in order."""
    return [importlib.import_module(f"benchmarks.bench_{area.name}") for area in ORDER]


def workloads():
    """(area name, workload) for every workload of every area module, in order, then the
    devices' floor yardsticks (``benchtools.floors``, under the pseudo-area ``floor``)."""
    from benchtools import floors

    return [(area.name, w) for area, module in zip(ORDER, modules(), strict=True)
            for w in module.WORKLOADS] + [(floors.AREA, w) for w in floors.WORKLOADS]


def targets():
    """(area name, target) for every area's performance targets, in order."""
    return [(area.name, t) for area, module in zip(ORDER, modules(), strict=True)
            for t in module.TARGETS]


@dataclass(frozen=True)
class Group:
    """Points measured together, round by round (``benchtools.turns``): every
    implementation of a point, with the points its targets divide it by (``companions``)."""

    area: str
    items: tuple  #: (workload, implementation or None for a yardstick, params), in grid order

    @property
    def label(self) -> str:
        names = list(dict.fromkeys(w.name for w, _, _ in self.items))
        values: dict = {}
        for _, _, params in self.items:
            for k, v in params.items():
                values.setdefault(k, {})[str(v)] = None  # an ordered set of the values
        params = ",".join(f"{k}={'|'.join(v)}" for k, v in values.items())
        return f"{self.area}.{'+'.join(names)}[{params}]"


def groups(implementations, device: str = "cpu") -> list[Group]:
    """Every (workload, implementation, params) of the grid on ``device``, exactly once, in
    groups: a point's implementations together, joined with its companions' (transitively)."""
    by_name, order, parent = {}, [], {}

    def find(key):
        while parent[key] != key:
            parent[key] = parent[parent[key]]
            key = parent[key]
        return key

    def point(area, name, params):
        return (area, name, tuple(sorted((k, str(v)) for k, v in params.items())))

    for area, workload in workloads():
        by_name[(area, workload.name)] = workload
        for params in workload.points(device):
            key = point(area, workload.name, params)
            parent[key] = key
            order.append((area, workload, params, key))
    for area, workload, params, key in order:
        for name, other in (workload.companions(params) if workload.companions else []):
            if (area, name) not in by_name:
                raise LookupError(f"{area}.{workload.name}: no companion workload {name!r}")
            partner = point(area, name, other)
            if partner not in parent:
                raise LookupError(f"{area}.{workload.name}{params}: companion {name}{other} "
                                  "is not a point of its grid")
            parent[find(key)] = find(partner)
    members: dict = {}
    for area, workload, params, key in order:
        impls = implementations if workload.area else [None]
        members.setdefault(find(key), (area, []))[1].extend(
            (workload, impl, params) for impl in impls)
    return [Group(area, tuple(items)) for area, items in members.values()]
