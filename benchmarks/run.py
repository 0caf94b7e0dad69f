"""``nox -s bench``: every workload on every selected implementation, side by side in one process
(pytest-benchmark, ``benchmarks/side_by_side.py``), then ``reports/benchmarks.md`` (ratio tables,
per-point medians with their spread, per-area targets met or not) and log-log scaling plots in
``reports/benchmarks/``.

    python -m benchmarks.run [--impl reference,torchrl] [--device cpu|cuda] [-k EXPR]
                             [--max-time SECONDS] [--report-only]

asv (history across commits and releases) reads the same workloads; see the README.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
REPORT = ROOT / "reports" / "benchmarks.md"
PLOTS = ROOT / "reports" / "benchmarks"
RESULTS = PLOTS / "side_by_side.json"
SKIPS = PLOTS / "side_by_side_skips.jsonl"
PREVIOUS = PLOTS / "side_by_side.previous.json"  # the run before, for the repeatability check
BASELINE = "torchrl"  # ratios are <implementation> / torchrl when torchrl is selected


def timer_for(device: str) -> str:
    """CPU time of this single-threaded process on the CPU: other processes on a shared machine
    take wall time from it but barely change its CPU time. Wall time on CUDA, where the work
    happens outside the process's CPU time (each call ends with a synchronize)."""
    return "time.process_time" if device == "cpu" else "time.perf_counter"


def run_pytest(impl: str, device: str, keyword: str | None, max_time: float,
               max_call: float, passes: int = 1) -> int:
    from benchmarks.common import DEVICE_VAR, MAX_CALL_VAR, PASSES_VAR, SKIPS_VAR, THREADS_VAR
    from conformance.implementations import ENV_VAR

    PLOTS.mkdir(parents=True, exist_ok=True)
    SKIPS.unlink(missing_ok=True)
    env = {**os.environ, ENV_VAR: impl, DEVICE_VAR: device, SKIPS_VAR: str(SKIPS),
           MAX_CALL_VAR: str(max_call), PASSES_VAR: str(passes),
           "PYTHONPATH": str(ROOT), "PYTHONHASHSEED": "0",
           THREADS_VAR: os.environ.get(THREADS_VAR, "1")}
    cmd = [sys.executable, "-m", "pytest", str(ROOT / "benchmarks" / "side_by_side.py"),
           "-p", "no:cacheprovider", "-q", "-rs", f"--benchmark-json={RESULTS}",
           # per point and implementation, per pass; rounds and GC are side_by_side's own
           f"--benchmark-max-time={max_time / passes}",
           "--benchmark-columns=min,median,max,rounds", "--benchmark-sort=name",
           f"--benchmark-timer={timer_for(device)}"]
    if keyword:
        cmd += ["-k", keyword]
    print("+", " ".join(cmd), flush=True)
    return subprocess.run(cmd, cwd=ROOT, env=env).returncode


def merge_passes(path: Path) -> None:
    """Pool each point's rounds over the passes of the run (``side_by_side.PASSES``): one entry
    per point, its statistics over every round of every pass."""
    document = json.loads(path.read_text())
    merged: dict = {}
    for bench in document.get("benchmarks", []):
        info = bench["extra_info"]
        key = (info["workload"], info["implementation"], info["device"],
               tuple(sorted(info["params"].items())))
        info.pop("walk", None)
        if key not in merged:
            merged[key] = bench
            continue
        data = merged[key]["stats"].setdefault("data", [])
        data += bench["stats"].get("data", [])
        # the group's calls had the same cycles in every pass: pooled in pass order they stay
        # aligned, so paired ratios span the run too
        merged[key]["extra_info"].setdefault("cycles", []).extend(info.get("cycles", []))
    for bench in merged.values():
        data = sorted(bench["stats"].get("data", []))
        if data:
            bench["stats"].update(min=data[0], max=data[-1], median=statistics.median(data),
                                  mean=statistics.fmean(data), rounds=len(data))
        bench["name"] = bench["name"].rsplit("-pass", 1)[0]
        bench["fullname"] = bench["fullname"].rsplit("-pass", 1)[0]
    document["benchmarks"] = list(merged.values())
    path.write_text(json.dumps(document))


def compact(path: Path) -> None:
    """Drop pytest-benchmark's per-round samples (megabytes; the report needs the statistics)."""
    document = json.loads(path.read_text())
    for bench in document.get("benchmarks", []):
        bench.get("stats", {}).pop("data", None)
    path.write_text(json.dumps(document, indent=1) + "\n")


def load(path: Path | None = None):
    """(document, Points, implementations in run order) from a pytest-benchmark JSON."""
    from benchmarks.targets import Points, Stats

    document = json.loads((path or RESULTS).read_text())
    points = Points()
    impls: list[str] = []
    for bench in document["benchmarks"]:
        info, stats = bench["extra_info"], bench["stats"]
        points.add(info["workload"], info["implementation"], info["device"], info["params"],
                   Stats(stats["min"], stats["median"], stats["max"], stats["rounds"],
                         tuple(info.get("cycles", ())), info.get("group", "")))
        if info["implementation"] and info["implementation"] not in impls:
            impls.append(info["implementation"])
    return document, points, impls


def _seconds(value: float | None) -> str:
    if value is None:
        return "not measured"
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("µs", 1e-6)):
        if value >= scale:
            return f"{value / scale:.3g} {unit}"
    return f"{value / 1e-9:.3g} ns"


def _cell(stats) -> str:
    if stats is None:
        return "not measured"
    return (f"{_seconds(stats.median)} ({_seconds(stats.min)} – {_seconds(stats.max)}, "
            f"{stats.rounds} rounds)")


def ratio_table(points, impls: list[str], device: str) -> list[str]:
    """Per workload: <impl> / baseline over the grid (min, median, max)."""
    from benchmarks import suite
    from benchmarks.targets import ratio

    base = BASELINE if BASELINE in impls else impls[0]
    lines = [f"| workload | implementation / {base} | points | min | median | max |",
             "|---|---|---|---|---|---|"]
    for area, workload in suite.workloads():
        if workload.area is None:
            continue
        for impl in (i for i in impls if i != base):
            ratios = []
            for params in workload.points():
                value = ratio(points.get(workload.name, impl, device, **params),
                              points.get(workload.name, base, device, **params))
                if value is not None:
                    ratios.append(value)
            name = f"`{area}.{workload.name}`"
            if not ratios:
                lines.append(f"| {name} | {impl} | 0 | not measured | | |")
                continue
            lines.append(f"| {name} | {impl} | {len(ratios)} | {min(ratios):.3g} | "
                         f"{statistics.median(ratios):.3g} | {max(ratios):.3g} |")
    return lines


def point_tables(points, impls: list[str], device: str, skips: dict) -> list[str]:
    """Every point: median (min – max, rounds) per implementation, and the ratio."""
    from benchmarks import suite
    from benchmarks.targets import ratio

    base = BASELINE if BASELINE in impls else impls[0]
    out = []
    for area, workload in suite.workloads():
        columns = impls if workload.area else [None]
        out += ["", f"### `{area}.{workload.name}`: {workload.doc}", ""]
        header = [*workload.params, *(c or "time" for c in columns)]
        others = [i for i in columns if i and i != base]
        header += [f"{i} / {base}" for i in others if base in columns]
        out += ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
        for params in workload.points():
            row = [str(v) for v in params.values()]
            for impl in columns:
                stats = points.get(workload.name, impl, device, **params)
                reason = skips.get((workload.name, impl, tuple(str(v) for v in params.values())))
                row.append(f"n/a ({reason})" if stats is None and reason else _cell(stats))
            if base in columns:
                for impl in others:
                    value = ratio(points.get(workload.name, impl, device, **params),
                                  points.get(workload.name, base, device, **params))
                    row.append("" if value is None else f"{value:.3g}")
            out.append("| " + " | ".join(row) + " |")
    return out


def read_skips() -> dict:
    skips = {}
    if SKIPS.is_file():
        for line in SKIPS.read_text().splitlines():
            entry = json.loads(line)
            key = (entry["workload"], entry["implementation"], tuple(entry["params"].values()))
            skips[key] = entry["reason"]
    return skips


def plot(points, impls: list[str], device: str) -> list[Path]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from benchmarks import suite

    written = []
    for area, workload in suite.workloads():
        size = workload.size_key
        fig, ax = plt.subplots(figsize=(6, 4))
        drawn = False
        others = {k: v for k, v in workload.params.items() if k != size}
        fixed = [dict(zip(others, combo, strict=True)) for combo in
                 itertools.product(*others.values())]
        for impl in impls if workload.area else [None]:
            for rest in fixed:
                xs, ys, lo, hi = [], [], [], []
                for x in workload.params[size]:
                    stats = points.get(workload.name, impl, device, **rest, **{size: x})
                    if stats is not None:
                        xs.append(float(x))
                        ys.append(stats.median)
                        lo.append(stats.median - stats.min)
                        hi.append(stats.max - stats.median)
                if xs:
                    label = ", ".join([impl or "yardstick", *(f"{v}" for v in rest.values())])
                    ax.errorbar(xs, ys, yerr=[lo, hi], marker="o", capsize=2, label=label)
                    drawn = True
        if not drawn:
            plt.close(fig)
            continue
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel(size)
        ax.set_ylabel("seconds (median; bars: min – max)")
        ax.set_title(f"{area}.{workload.name}", fontsize=9)
        ax.legend(fontsize=7)
        path = PLOTS / f"{area}.{workload.name}.png"
        fig.tight_layout()
        fig.savefig(path, dpi=90)
        plt.close(fig)
        written.append(path)
    return written


def _stack() -> str:
    from conformance.versions import installed_version

    return ", ".join(f"{p} {installed_version(p)}" for p in ("torch", "torchrl", "tensordict"))


def machine_swing(points) -> str:
    """How much the machine's speed moved during the run: per point, its slowest decile of
    cycles over its fastest (the same call, the same inputs), over every point with 10 cycles."""
    swings = []
    for _, stats in points.items():
        cycles = sorted(stats.cycles)
        if len(cycles) >= 10:
            swings.append(cycles[-1 - len(cycles) // 10] / cycles[len(cycles) // 10])
    if not swings:
        return ""
    return (f"The machine's speed moved during the run: the same call's slowest tenth of cycles "
            f"over its fastest tenth was {statistics.median(swings):.2f}x (median over "
            f"{len(swings)} points; max {max(swings):.2f}x). Paired ratios cancel that; raw "
            "medians carry it.")


def write_report(command: str, seconds: float | None, previous: Path | None = None) -> Path:
    from benchmarks import suite
    from benchmarks.common import threads
    from conformance.files import atomic_write

    document, points, impls = load()
    device = next((b["extra_info"]["device"] for b in document["benchmarks"]), "cpu")
    machine = document.get("machine_info", {})
    when = document.get("datetime", "?")
    lines = [
        "# Benchmarks: side by side", "",
        f"`{command}` on {when[:19]} UTC"
        + (f", {seconds / 60:.1f} minutes" if seconds else "") + "; "
        f"{_stack()}; {device}, {threads()} torch thread(s), "
        f"{machine.get('cpu', {}).get('count', '?')} cores "
        f"({machine.get('cpu', {}).get('brand_raw', '?')}).",
        "",
        "Every implementation of a point is measured in this one process, in turns with the "
        "points it is compared with (a cycle gives each call a 10 ms slice of calibrated rounds; "
        "cycles repeat over the run's passes; pytest-benchmark records the rounds). Times are "
        + ("the process's CPU time (one thread: other processes on the machine barely change "
           "it)" if device == "cpu" else "wall time")
        + ", medians with the min – max over the rounds. A ratio of two points measured in "
        "turns is the median over cycles of their per-cycle ratio (each pair timed within "
        "milliseconds, in one state of the machine); other ratios divide medians. Absolute "
        "times on a shared machine are noise: quote ratios. Below 1: faster than the baseline.",
        "", machine_swing(points),
        "", "## Ratios", "", *ratio_table(points, impls, device),
        "", "## Targets (measured in this run, not asserted)", "",
    ]
    from conformance.areas import AREAS

    for area, targets in itertools.groupby(suite.targets(), key=lambda pair: pair[0]):
        lines += [f"**{AREAS[area]}**", ""]
        for _, target in targets:
            lines += target.lines(points, impls)
        lines.append("")
    if previous is not None:
        from benchmarks.repeatability import compare

        lines += ["## Repeatability against the previous full run", "",
                  f"`{previous.relative_to(ROOT)}` against this run: "
                  + "\n".join(compare(previous, RESULTS)), ""]
    lines += ["", "## Points", *point_tables(points, impls, device, read_skips())]
    plots = plot(points, impls, device)
    lines += ["", "## Scaling plots", ""]
    lines += [f"![{p.stem}](benchmarks/{p.name})" for p in plots]
    atomic_write(REPORT, "\n".join(lines) + "\n")
    return REPORT


def main(argv=None) -> int:
    from conformance.implementations import UnknownImplementation, resolve

    parser = argparse.ArgumentParser(prog="python -m benchmarks.run", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--impl", default=None,
                        help="implementations, as for the specs (default: reference,torchrl)")
    parser.add_argument("--device", choices=["cpu", "cuda"], default="cpu")
    parser.add_argument("-k", dest="keyword", help="pytest -k expression over the point ids")
    parser.add_argument("--max-time", type=float, default=0.25,
                        help="timed seconds per point and implementation, shared among the "
                             "passes (default 0.25)")
    parser.add_argument("--passes", type=int, default=3,
                        help="walks over the whole grid, each point's rounds pooled over them, "
                             "so that a median spans the run's slow and fast spells (default 3; "
                             "--max-time is shared among them)")
    parser.add_argument("--max-call", type=float, default=3.0,
                        help="a point whose single call takes longer is n/a (default 3 s)")
    parser.add_argument("--report-only", action="store_true",
                        help=f"rebuild the report from {RESULTS.relative_to(ROOT)}")
    args = parser.parse_args(argv)
    try:
        resolve(args.impl)  # a usage error is one line here, not a traceback per point
    except UnknownImplementation as exc:
        print(f"ERROR: {exc}", file=sys.stderr)
        return 4
    status, seconds = 0, None
    if not args.report_only:
        if RESULTS.is_file() and not args.keyword:
            RESULTS.replace(PREVIOUS)
        start = time.monotonic()
        status = run_pytest(",".join(_names(args.impl)), args.device, args.keyword, args.max_time,
                            args.max_call, args.passes)
        seconds = time.monotonic() - start
        if not RESULTS.is_file():
            print(f"ERROR: pytest-benchmark wrote no results (exit code {status})", file=sys.stderr)
            return status or 1
        merge_passes(RESULTS)
        compact(RESULTS)
    command = "nox -s bench" + (f" -- {' '.join(argv)}" if argv else "")
    print(f"report: {write_report(command, seconds, PREVIOUS if PREVIOUS.is_file() else None)}")
    return status


def _names(value: str | None) -> list[str]:
    from conformance.implementations import DEFAULT, ENV_VAR

    raw = value if value else os.environ.get(ENV_VAR) or DEFAULT
    return [n.strip() for n in raw.split(",") if n.strip()]


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
