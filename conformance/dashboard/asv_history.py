"""The asv results (``reports/asv/results``) as series: per benchmark, one line per parameter set
over the environments that ran it (a TorchRL release's history environment, or the stack at a
commit of this suite), for the benchmarks page's charts."""

from __future__ import annotations

import itertools
import json
import math
import re
from pathlib import Path

MAX_LINES = 6  # per chart; the rest are counted under it


def _env_label(result: dict) -> str:
    name = result.get("env_name", "")
    found = re.search(r"torchrl-(\d+\.\d+\.\d+)", name)
    if found:
        return found.group(1)
    return f"stack@{str(result.get('commit_hash', ''))[:7]}"


def _key(label: str) -> tuple:
    found = re.match(r"^(\d+)\.(\d+)\.(\d+)$", label)
    return (0, tuple(map(int, found.groups())), "") if found else (1, (), label)


def load(results_dir: Path) -> list[dict]:
    """[{name, unit, envs: [labels], lines: {params: [value or None per env]}, hidden: n}]."""
    results_dir = Path(results_dir)
    meta_file = results_dir / "benchmarks.json"
    if not meta_file.is_file():
        return []
    try:
        meta = json.loads(meta_file.read_text(encoding="utf-8"))
    except ValueError:
        return []  # not asv's benchmarks.json: no history charts rather than a wrong one
    runs = []
    for path in sorted(results_dir.glob("*/*.json")):
        if path.name == "machine.json":
            continue
        try:
            doc = json.loads(path.read_text(encoding="utf-8"))
        except ValueError:
            continue
        if "results" in doc:
            runs.append(doc)
    by_name: dict[str, dict[str, dict[str, float]]] = {}
    for doc in runs:
        env = _env_label(doc)
        columns = doc.get("result_columns", ["result", "params"])
        for name, entry in doc["results"].items():
            if not isinstance(entry, list):
                continue
            row = dict(zip(columns, entry, strict=False))
            values, params = row.get("result"), row.get("params") or []
            if not isinstance(values, list):
                continue
            combos = [", ".join(str(p).strip("'") for p in c) for c in itertools.product(*params)] or [""]
            for combo, value in zip(combos, values, strict=False):
                if isinstance(value, (int, float)) and not math.isnan(value):
                    # the newest run of an environment wins (sorted file order is arbitrary: keep min start)
                    by_name.setdefault(name, {}).setdefault(combo, {})[env] = float(value)
    charts = []
    for name in sorted(by_name):
        combos = by_name[name]
        envs = sorted({e for values in combos.values() for e in values}, key=_key)
        # lines that span the most environments first: a history, not a snapshot
        ranked = sorted(combos, key=lambda c: (-len(combos[c]), c))
        shown = ranked[:MAX_LINES]
        charts.append({"name": name, "unit": "s" if meta.get(name, {}).get("unit") == "seconds" else "",
                       "envs": envs,
                       "lines": {c: [combos[c].get(e) for e in envs] for c in shown},
                       "hidden": len(ranked) - len(shown)})
    return charts
