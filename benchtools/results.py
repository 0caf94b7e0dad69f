"""A side-by-side run's results, read from the JSON pytest-benchmark wrote (never rewritten):
each group's entry carries its calls in ``extra_info["calls"]``; a point measured in several
passes has its cycles pooled, so its median spans the run."""

from __future__ import annotations

import json
import math
import statistics
from dataclasses import dataclass
from pathlib import Path

from benchtools.targets import Points, Stats


@dataclass
class Run:
    document: dict
    points: Points
    implementations: list[str]  #: in run order
    device: str


def load(path: Path) -> Run:
    document = json.loads(path.read_text())
    pooled: dict = {}
    impls: list[str] = []
    device = "cpu"
    for bench in document.get("benchmarks", []):
        info = bench.get("extra_info", {})
        for call in info.get("calls", []):
            key = (call["workload"], call["implementation"], call["device"],
                   tuple(sorted(call["params"].items())))
            entry = pooled.setdefault(key, {"call": call, "cycles": [], "rounds": 0,
                                            "min": math.inf, "max": 0.0, "group": info["group"]})
            entry["cycles"] += call["cycles"]
            entry["rounds"] += call["rounds"]
            entry["min"] = min(entry["min"], call["min"])
            entry["max"] = max(entry["max"], call["max"])
            device = call["device"]
            if call["implementation"] and call["implementation"] not in impls:
                impls.append(call["implementation"])
    points = Points(device)
    for entry in pooled.values():
        call = entry["call"]
        points.add(call["workload"], call["implementation"], call["device"], call["params"],
                   Stats(entry["min"], statistics.median(entry["cycles"]), entry["max"],
                         entry["rounds"], tuple(entry["cycles"]), entry["group"]))
    return Run(document, points, impls, device)


def read_skips(path: Path) -> dict:
    """(workload, implementation, parameter values) -> why the point was not measured."""
    skips = {}
    if path.is_file():
        for line in path.read_text().splitlines():
            entry = json.loads(line)
            key = (entry["workload"], entry["implementation"], tuple(entry["params"].values()))
            skips[key] = entry["reason"]
    return skips
