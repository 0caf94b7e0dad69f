"""Do two side-by-side runs agree? Per point measured in both, the ratio of the medians, and
whether every point above 100 µs is within 20% (the project's acceptance bar for benchmarks).

    python -m benchtools.repeatability FIRST.json SECOND.json
"""

from __future__ import annotations

import statistics
from pathlib import Path

from benchtools.targets import Points, ratio

FLOOR = 100e-6  # seconds: below this, timer and scheduler noise dominate a shared machine
TOLERANCE = 0.20


def compare(a: Points, b: Points) -> list[str]:
    """The points of run ``a`` against those of run ``b``."""
    theirs = dict(b.items())
    ratios, outside = [], []
    for key, stats in a.items():
        other = theirs.get(key)
        if other is None or max(stats.median, other.median) < FLOOR:
            continue
        r = other.median / stats.median
        ratios.append(r)
        if abs(r - 1) > TOLERANCE:
            workload, impl, device, params = key
            outside.append(f"  - `{workload}` {impl or 'yardstick'} "
                           f"{', '.join(f'{k}={v}' for k, v in params)}: {r:.2f}")
    if not ratios:
        return ["no point above 100 µs was measured in both runs"]
    lines = [f"{len(ratios)} points above 100 µs measured in both runs; second / first median: "
             f"min {min(ratios):.2f}, median {statistics.median(ratios):.2f}, "
             f"max {max(ratios):.2f}; {len(outside)} outside ±{TOLERANCE:.0%}"]
    return lines + outside + ratio_lines(a, b)


def ratio_lines(a, b, baseline: str = "torchrl") -> list[str]:
    """The same check on what the report quotes: each implementation / baseline ratio of a point,
    second run over first. A ratio is measured within seconds, so a drift of the whole machine's
    speed between runs (which moves every median) cancels out of it."""
    first, second = dict(a.items()), dict(b.items())
    moves = []
    for key, stats in first.items():
        workload, impl, device, params = key
        base = (workload, baseline, device, params)
        if impl in (None, baseline) or base not in first or key not in second \
                or base not in second or max(stats.median, first[base].median) < FLOOR:
            continue
        moves.append(ratio(second[key], second[base]) / ratio(stats, first[base]))
    if not moves:
        return []
    off = sum(abs(m - 1) > TOLERANCE for m in moves)
    return [f"{len(moves)} implementation / {baseline} ratios above 100 µs: second / first "
            f"min {min(moves):.2f}, median {statistics.median(moves):.2f}, "
            f"max {max(moves):.2f}; {off} outside ±{TOLERANCE:.0%}"]


if __name__ == "__main__":
    import argparse

    cli = argparse.ArgumentParser(prog="python -m benchtools.repeatability", description=__doc__,
                                  formatter_class=argparse.RawDescriptionHelpFormatter)
    cli.add_argument("first", type=Path, help="side_by_side.json of the earlier run")
    cli.add_argument("second", type=Path, help="side_by_side.json of the later run")
    args = cli.parse_args()
    for path in (args.first, args.second):
        if not path.is_file():
            cli.error(f"no such results file: {path}")
    from benchtools.results import load

    print("\n".join(compare(load(args.first).points, load(args.second).points)))
