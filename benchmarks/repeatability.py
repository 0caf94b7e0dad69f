"""Do two side-by-side runs agree? Per point measured in both, the ratio of the medians, and
whether every point above 100 µs is within 20% (the project's acceptance bar for benchmarks).

    python -m benchmarks.repeatability FIRST.json SECOND.json
"""

from __future__ import annotations

import statistics
import sys
from pathlib import Path

FLOOR = 100e-6  # seconds: below this, timer and scheduler noise dominate a shared machine
TOLERANCE = 0.20


def compare(first: Path, second: Path) -> list[str]:
    from benchmarks.run import load

    _, a, _ = load(first)
    _, b, _ = load(second)
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
    return lines + outside


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit("usage: python -m benchmarks.repeatability FIRST.json SECOND.json")
    print("\n".join(compare(Path(sys.argv[1]), Path(sys.argv[2]))))
