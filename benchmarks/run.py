"""``nox -s bench``: run the asv benchmarks in the current environment, then write
reports/benchmarks.md (reference / upstream ratios per area) and log-log scaling plots.

    python -m benchmarks.run [--quick] [--bench REGEX] [--report-only]

asv runs with ``--python=same`` (no environment is built) and records the results under the
current commit, so ``asv publish`` / ``asv compare`` can use them later.
"""

from __future__ import annotations

import argparse
import itertools
import json
import math
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "reports" / "asv" / "results"
REPORT = ROOT / "reports" / "benchmarks.md"
PLOTS = ROOT / "reports" / "benchmarks"

def _value(points, benchmark: str, **where):
    """The measured value of ``benchmark`` (suffix match) at the given parameters, or None."""
    for name, params, value in points:
        if name.endswith(benchmark) and all(str(params.get(k)) == str(v) for k, v in where.items()):
            return value if isinstance(value, int | float) and not (
                isinstance(value, float) and math.isnan(value)) else None
    return None


def _ratio(a, b):
    return None if a is None or b in (None, 0) else a / b


def _fmt(value, target: str, ok) -> str:
    if value is None:
        return f"not measured (target {target})"
    verdict = "met" if ok(value) else "NOT met"
    return f"**{value:.3g}** (target {target}: {verdict})"


def target_lines(points) -> list[str]:
    """The project's headline targets, computed from one run (reported, never asserted)."""
    lines = []
    for dtype in ("float32", "float64"):
        ref = _value(points, "TanhNormalMode.time_mode", implementation="reference", device="cpu",
                     size=10000, dtype=dtype)
        up = _value(points, "TanhNormalMode.time_mode", implementation="torchrl", device="cpu",
                    size=10000, dtype=dtype)
        tanh = _value(points, "TanhBaseline.time_tanh", device="cpu", size=10000, dtype=dtype)
        lines.append(f"- TanhNormal mode, 1e4 {dtype}: upstream get_mode() / reference = "
                     f"{_fmt(_ratio(up, ref), '>= 100', lambda v: v >= 100)}; reference / one "
                     f"torch.tanh = {_fmt(_ratio(ref, tanh), '<= 30', lambda v: v <= 30)}")
    for impl in ("reference", "torchrl"):
        big = _value(points, "ExtendOverMax.time_extend_over_max", implementation=impl,
                     device="cpu", capacity=1000000)
        small = _value(points, "ExtendOverMax.time_extend_over_max", implementation=impl,
                       device="cpu", capacity=1000)
        ratio = _ratio(big, small)
        shown = (_fmt(ratio, "<= 2", lambda v: v <= 2) if impl == "reference"
                 else "not measured" if ratio is None else f"{ratio:.3g} (for comparison)")
        lines.append(f"- PER extend over the max slot, {impl}: time(1e6) / time(1e3) = {shown}")
    for op in ("sample_256", "update_256"):
        ratio = _ratio(*(_value(points, f"SampleUpdate.time_{op}", implementation=impl,
                                device="cpu", capacity=1000000) for impl in ("reference", "torchrl")))
        lines.append(f"- PER {op} at 1e6, reference / torchrl C++ trees = "
                     f"{_fmt(ratio, '<= 2', lambda v: v <= 2)}")
    skip = [v for n, p, v in points if n.endswith("SkipCost.track_ratio")
            and p.get("implementation") == "reference" and isinstance(v, float) and not math.isnan(v)]
    lines.append("- SAC reference loss, skip_done_states True / False at 10% done (max over kinds "
                 f"and batches) = {_fmt(max(skip) if skip else None, '<= 1.1', lambda v: v <= 1.1)}")
    worst = None
    for size in (100, 1000, 10000, 100000):
        ratio = _ratio(
            _value(points, "CompositeLogProb.time_log_prob", implementation="reference",
                   device="cpu", size=size),
            _value(points, "CompositeLogProb.time_raw_log_softmax_gather",
                   implementation="reference", device="cpu", size=size))
        worst = ratio if worst is None or (ratio is not None and ratio > worst) else worst
    lines.append("- composite aggregate log-prob, reference / raw log_softmax gathers (max over "
                 f"batch sizes) = {_fmt(worst, '<= 3', lambda v: v <= 3)}")
    return lines


def run_asv(quick: bool, bench: str | None, repeat: int | None = None) -> int:
    commit = subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True,
                            text=True, check=True).stdout.strip()
    subprocess.run([sys.executable, "-m", "asv", "machine", "--yes"], cwd=ROOT, check=True)
    cmd = [sys.executable, "-m", "asv", "run", "--python=same", "--set-commit-hash", commit,
           "--show-stderr"]
    if quick:
        cmd.append("--quick")
    elif repeat:
        # a fixed number of samples per point: enough for a median, bounded in time
        cmd += ["-a", f"repeat={repeat}", "-a", "warmup_time=0.05"]
    if bench:
        cmd += ["--bench", bench]
    print("+", " ".join(cmd), flush=True)
    return subprocess.run(cmd, cwd=ROOT).returncode


def latest_results() -> dict:
    """asv results of this machine, newest measurement of each benchmark first: a run of a
    subset (``--bench``) updates its benchmarks and keeps the others' latest values."""
    files = sorted((p for p in RESULTS.glob("*/*.json") if p.name != "machine.json"),
                   key=lambda p: p.stat().st_mtime)
    if not files:
        raise SystemExit(f"no asv results under {RESULTS}: run the benchmarks first")
    merged: dict = {}
    for path in files:
        document = json.loads(path.read_text())
        results = {**merged.get("results", {}), **document["results"]}
        merged = {**document, "results": results}
    return merged


def rows(document: dict):
    """Yield (benchmark, {param: value}, seconds-or-value) for every measured point."""
    columns = document["result_columns"]
    for name, entry in document["results"].items():
        record = dict(zip(columns, entry, strict=False))
        params = record.get("params") or []
        values = record["result"]
        if not params:
            yield name, {}, values[0] if isinstance(values, list) else values
            continue
        names = _param_names(name, len(params))
        for combo, value in zip(itertools.product(*params), values, strict=False):
            yield name, dict(zip(names, (_unquote(c) for c in combo), strict=True)), value


def _unquote(value: str):
    return value.strip("'\"") if isinstance(value, str) else value


_PARAM_NAMES: dict[str, list[str]] = {}


def _param_names(benchmark: str, n: int) -> list[str]:
    if not _PARAM_NAMES:
        bench_json = RESULTS / "benchmarks.json"
        if bench_json.is_file():
            for key, spec in json.loads(bench_json.read_text()).items():
                if isinstance(spec, dict) and "param_names" in spec:
                    _PARAM_NAMES[key] = spec["param_names"]
    return _PARAM_NAMES.get(benchmark, [f"p{i}" for i in range(n)])


def ratio_table(points) -> list[str]:
    """reference / torchrl for every benchmark method and parameter combination."""
    by_key: dict[tuple, dict[str, float]] = {}
    for name, params, value in points:
        if "implementation" not in params or not isinstance(value, int | float) or value is None:
            continue
        if not name.split(".")[-1].startswith(("time_", "peakmem_")):
            continue  # tracked accuracies are listed as values, not as speed ratios
        if isinstance(value, float) and math.isnan(value):
            continue
        rest = tuple(sorted((k, v) for k, v in params.items() if k != "implementation"))
        by_key.setdefault((name, rest), {})[params["implementation"]] = value
    per_bench: dict[str, list[float]] = {}
    for (name, _), impls in by_key.items():
        if "reference" in impls and "torchrl" in impls and impls["torchrl"] > 0:
            per_bench.setdefault(name, []).append(impls["reference"] / impls["torchrl"])
    lines = ["| benchmark | points | min | median | max |", "|---|---|---|---|---|"]
    for name, ratios in sorted(per_bench.items()):
        lines.append(f"| `{name}` | {len(ratios)} | {min(ratios):.3g} | "
                     f"{statistics.median(ratios):.3g} | {max(ratios):.3g} |")
    return lines


def plot(points) -> list[Path]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    PLOTS.mkdir(parents=True, exist_ok=True)
    series: dict[str, dict[tuple, list[tuple[float, float]]]] = {}
    axis: dict[str, str] = {}
    for name, params, value in points:
        if not name.split(".")[-1].startswith("time_") or not isinstance(value, int | float):
            continue
        size_key = next((k for k in ("size", "batch", "capacity") if k in params), None)
        if size_key is None or value is None or (isinstance(value, float) and math.isnan(value)):
            continue
        label = tuple((k, v) for k, v in params.items() if k != size_key)
        axis[name] = size_key
        series.setdefault(name, {}).setdefault(label, []).append((float(params[size_key]), value))
    written = []
    for name, lines in series.items():
        fig, ax = plt.subplots(figsize=(6, 4))
        for label, xy in sorted(lines.items()):
            xy.sort()
            ax.plot([x for x, _ in xy], [y for _, y in xy], marker="o",
                    label=", ".join(f"{v}" for _, v in label))
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel(axis[name])
        ax.set_ylabel("seconds")
        ax.set_title(name, fontsize=9)
        ax.legend(fontsize=7)
        path = PLOTS / f"{name}.png"
        fig.tight_layout()
        fig.savefig(path, dpi=90)
        plt.close(fig)
        written.append(path)
    return written


def write_report(quick: bool = False) -> Path:
    from conformance.files import atomic_write

    document = latest_results()
    points = list(rows(document))
    lines = ["# Benchmarks", "",
             f"asv results of commit `{document.get('commit_hash', '?')[:10]}` on "
             f"`{document.get('params', {}).get('machine', '?')}`; "
             f"stack: {', '.join(f'{k} {v}' for k, v in document.get('requirements', {}).items()) or 'current environment'}.",
             "Ratios are reference / torchrl time for the same parameters, measured in one run "
             "(below 1: the reference is faster).",
             *(["", "**Quick run (`--quick`): one sample per point, so ratios near a target are "
                 "noise on a loaded machine; run `nox -s bench -- --bench <regex>` without "
                 "`--quick` before quoting a verdict.**"] if quick else []),
             "", *ratio_table(points), "",
             "## Targets (measured in this run)", "", *target_lines(points)]
    lines += ["", "## Measured points", "", "| benchmark | parameters | value |", "|---|---|---|"]
    for name, params, value in points:
        shown = "n/a" if value is None else f"{value:.4g}" if isinstance(value, float) else value
        lines.append(f"| `{name}` | {', '.join(f'{k}={v}' for k, v in params.items())} | {shown} |")
    plots = plot(points)
    lines += ["", "## Scaling plots", ""]
    lines += [f"![{p.stem}](benchmarks/{p.name})" for p in plots]
    atomic_write(REPORT, "\n".join(lines) + "\n")
    return REPORT


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.run", description=__doc__)
    parser.add_argument("--quick", action="store_true", help="one repetition per benchmark")
    parser.add_argument("--bench", help="regex of benchmarks to run")
    parser.add_argument("--repeat", type=int, help="samples per point (instead of asv's default)")
    parser.add_argument("--report-only", action="store_true")
    args = parser.parse_args(argv)
    status = 0 if args.report_only else run_asv(args.quick, args.bench, args.repeat)
    print(f"report: {write_report(args.quick)}")
    return status


if __name__ == "__main__":
    sys.exit(main())
