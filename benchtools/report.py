"""``reports/benchmarks.md`` from a side-by-side run: ratio tables, per-point medians with their
spread, per-area targets met or not, the machine's speed swing, repeatability against the run
before, and log-log scaling plots."""

from __future__ import annotations

import itertools
import re
import statistics
from pathlib import Path

from benchtools import floors, groups, turns
from benchtools.registry import BASELINE, threads
from benchtools.repeatability import compare
from benchtools.results import Run
from benchtools.targets import ratio
from conformance.areas import AREAS
from conformance.files import atomic_write


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


def provides(impl: str, area: str) -> bool:
    """Whether an implementation has an area (its adapter gives one for it): a replay-only
    implementation such as ``reference-fused`` gets no lines for the other areas' workloads and
    targets, rather than a column of "not measured". Anything unsure counts as provided."""
    from conformance.implementations import UnknownImplementation, resolve

    try:
        adapter = resolve(impl)[0].obj
        return getattr(adapter, area, None) is not None
    except UnknownImplementation:
        return True
    except Exception:  # noqa: BLE001 - an area that does not load is shown, as n/a, not dropped
        return True


def ratio_table(points, impls: list[str], device: str) -> list[str]:
    """Per workload: <impl> / baseline over the grid (min, median, max)."""
    base = BASELINE if BASELINE in impls else (impls or [None])[0]  # a yardsticks-only run: none
    lines = [f"| workload | implementation / {base} | points | min | median | max |",
             "|---|---|---|---|---|---|"]
    for area, workload in groups.workloads():
        if workload.area is None or not list(workload.points(device)):
            continue
        for impl in (i for i in impls if i != base and provides(i, area)):
            ratios = []
            for params in workload.points(device):
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


def _floor_cell(floor: floors.Floor, seconds: float | None) -> str:
    parts = [f"{floor.launches} launch+sync"] + ([f"copy {floor.bytes:,} B"] if floor.bytes
                                                  else [])
    return f"{_seconds(seconds)} ({' + '.join(parts)})"


def point_tables(points, impls: list[str], device: str, skips: dict) -> list[str]:
    """Every point: median (min – max, rounds) per implementation, the ratio, the point's
    floor on the device and each implementation's median over it (``benchtools.floors``)."""
    base = BASELINE if BASELINE in impls else (impls or [None])[0]  # a yardsticks-only run: none
    out = []
    for area, workload in groups.workloads():
        if not list(workload.points(device)):
            continue
        columns = impls if workload.area else [None]
        out += ["", f"### `{area}.{workload.name}`: {workload.doc}", ""]
        header = [*workload.params, *(c or "time" for c in columns)]
        others = [i for i in columns if i and i != base]
        header += [f"{i} / {base}" for i in others if base in columns]
        header += ["floor", *(f"{c or 'time'} / floor" for c in columns)]
        out += ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
        for params in workload.points(device):
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
            floor = floors.of(workload, params)
            floor_seconds = floors.seconds(points, device, floor)
            row.append(_floor_cell(floor, floor_seconds))
            for impl in columns:
                median = points.median(workload.name, impl, device, **params)
                row.append("" if median is None or not floor_seconds
                           else f"{median / floor_seconds:.3g}")
            out.append("| " + " | ".join(row) + " |")
    return out


def floor_summary(points, device: str) -> list[str]:
    """The device's two yardsticks, as measured in this run."""
    launch = points.median("launch_sync", None, device, numel=1)
    lines = [f"- one launch+sync (`{floors.LAUNCH.doc}`): {_seconds(launch)}"]
    for params in floors.COPY.points(device):
        copy = points.median("copy", None, device, **params)
        rate = "" if not copy else f", {params['bytes'] / copy / 1e9:.3g} GB/s"
        lines.append(f"- copy of {params['bytes']:,} bytes: {_seconds(copy)}{rate}")
    return lines


def plot(points, impls: list[str], device: str, folder: Path) -> list[Path]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    written = []
    for area, workload in groups.workloads():
        size = workload.size_key
        fig, ax = plt.subplots(figsize=(6, 4))
        drawn = False
        grid = workload.grid(device)
        others = {k: v for k, v in grid.items() if k != size}
        fixed = [dict(zip(others, combo, strict=True)) for combo in
                 itertools.product(*others.values())]
        for impl in impls if workload.area else [None]:
            for rest in fixed:
                xs, ys, lo, hi = [], [], [], []
                for x in grid[size]:
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
        path = folder / f"{area}.{workload.name}.png"
        fig.tight_layout()
        fig.savefig(path, dpi=90)
        plt.close(fig)
        written.append(path)
    return written


def _stack() -> str:
    from conformance.versions import installed_version

    return ", ".join(f"{p} {installed_version(p)}" for p in ("torch", "torchrl", "tensordict"))


def _load_note(machine: dict) -> str:
    """The machine's load average (1, 5, 15 min) at the start and end of the run, when the
    results have it: on a shared machine it says how busy the cores were while timing."""
    load = machine.get("load") or {}
    if not load.get("start") and not load.get("end"):
        return ""
    shown = {k: " / ".join(f"{x:g}" for x in v) if v else "?" for k, v in load.items()}
    return (f" Load average (1 / 5 / 15 min): {shown.get('start', '?')} at the start, "
            f"{shown.get('end', '?')} at the end: the machine was shared, which is why only "
            "paired ratios are quoted.")


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




def target_summary(report: Path) -> list[str]:
    """The terminal's last word on a run, read back from the report it wrote: how many target
    lines are met, NOT met, not measured, and how many accounts (lines with no target), then
    every NOT met line (its text up to the value, and the verdict)."""
    text = report.read_text()
    start = text.find("## Targets")
    end = text.find("\n## ", start + 1)
    lines = [x[2:] for x in text[start:end].splitlines() if x.startswith("- ")]
    missed = [x for x in lines if x.endswith("NOT met)")]
    counts = {"met": sum(x.endswith(": met)") for x in lines), "NOT met": len(missed),
              "not measured": sum(": not measured" in x for x in lines),
              "accounts": sum("; no target: " in x for x in lines)}
    out = ["targets: " + ", ".join(f"{n} {what}" for what, n in counts.items())]
    for x in missed:
        value = re.search(r"= \*\*([^*]+)\*\*", x)
        goal = re.search(r"target ([^:]+): NOT met\)$", x)
        out.append(f"  NOT met: {x.split(' = **')[0]} = {value.group(1) if value else '?'} "
                   f"(target {goal.group(1) if goal else '?'})")
    return out


def write(run: Run, path: Path, *, command: str, seconds: float | None, skips: dict,
          previous: Run | None, plots: Path) -> Path:
    """Write the report of ``run`` to ``path`` (plots into ``plots``)."""
    points, impls, device = run.points, run.implementations, run.device
    machine = run.document.get("machine_info", {})
    when = run.document.get("datetime", "?")
    lines = [
        "# Benchmarks: side by side", "",
        f"`{command}` on {when[:19]} UTC"
        + (f", {seconds / 60:.1f} minutes" if seconds else "") + "; "
        f"{_stack()}; {device}, {threads()} torch thread(s), "
        f"{machine.get('cpu', {}).get('count', '?')} cores "
        f"({machine.get('cpu', {}).get('brand_raw', '?')})." + _load_note(machine),
        "",
        "Every implementation of a point is measured in this one process, in turns with the "
        "points it is compared with (a cycle gives each call a 10 ms slice of calibrated rounds; "
        "pytest-benchmark times the cycles; cycles repeat over the run's passes). Times are "
        + ("the process's CPU time (one thread: other processes on the machine barely change "
           "it)" if device == "cpu" else "wall time")
        + ": a point's median is over its cycles' medians, with the min – max over its rounds. "
        "A ratio of two points measured in turns is the median over cycles of their per-cycle "
        "ratio (each pair timed within milliseconds, in one state of the machine); other ratios "
        "divide medians. Absolute times on a shared machine are noise: quote ratios. Below 1: "
        "faster than the baseline.",
        "", machine_swing(points),
        "", "## Ratios", "", *ratio_table(points, impls, device),
        "", "## Targets (measured in this run, not asserted)", "",
        f"A target is met when its median is. A paired ratio (two points measured in turns, "
        f"at least {turns.MIN_PAIRS} cycles) gives its spread: its lowest and highest pair "
        "(for a maximum over points, those of the point that gives it); where the goal lies "
        "within the spread, some pairs meet it and some do not, and the line says so. A ratio "
        "of points timed apart is marked unpaired.", "",
    ]
    for area, targets in itertools.groupby(groups.targets(), key=lambda pair: pair[0]):
        lines += [f"**{AREAS[area]}**", ""]
        for _, target in targets:
            lines += target.lines(points, [i for i in impls if provides(i, area)])
        lines.append("")
    lines += ["## Floors of this device (measured in this run)", "",
              "Each point's floor is what its device cannot go below: the kernel launches "
              "(each with its synchronisation) it cannot avoid, times one launch+sync, plus a "
              "same-device copy of the bytes it must read (`benchtools/floors.py`; each "
              "workload says what its floor is made of). The point tables below give each "
              "median over its floor (a ratio of medians of this run: the yardsticks are timed "
              "in their own groups).", "", *floor_summary(points, device), ""]
    if previous is not None:
        lines += ["## Repeatability against the previous full run", "",
                  "\n".join(compare(previous.points, points)), ""]
    lines += ["", "## Points", *point_tables(points, impls, device, skips)]
    written = plot(points, impls, device, plots)
    lines += ["", "## Scaling plots", ""]
    lines += [f"![{p.stem}]({plots.name}/{p.name})" for p in written]
    atomic_write(path, "\n".join(lines) + "\n")
    return path
