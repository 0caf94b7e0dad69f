"""End-to-end training, reference / TorchRL, paired in turns: ``examples/dropin_training.py``
(SAC with prioritized replay, PPO with value clipping) run with ``--impl torchrl`` and
``--impl reference`` alternately in one process, the same arguments and seeds, the process's CPU
time of each run (one torch thread). The ratio is the median over pairs, with its spread.

    python -m benchtools.end_to_end [--env mock|Pendulum-v1] [--pairs 5] [--frames 1000]
                                    [--impl reference|reference-fused] [--report PATH]

Pendulum-v1 needs gymnasium; ``mock`` is TorchRL's own continuous test environment (nothing
beyond torchrl). Prints one line per algorithm; ``--report PATH`` also appends them to a
markdown file under a heading with the date, the command, the stack and the load average.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime
import importlib.util
import io
import os
import statistics
import sys
import time
from pathlib import Path

from conformance.paths import ROOT


def _run(main, algo: str, impl: str, env: str, frames: int) -> float:
    """CPU seconds of one training run (its printed returns swallowed)."""
    start = time.process_time()
    with contextlib.redirect_stdout(io.StringIO()):
        main(["--algo", algo, "--impl", impl, "--env", env, "--frames", str(frames)])
    return time.process_time() - start


def paired(main, algo: str, env: str, frames: int, pairs: int,
           candidate: str = "reference") -> list[float]:
    """candidate / torchrl per pair, the first of a pair alternating (after one warm-up run of
    each, not kept)."""
    for impl in ("torchrl", candidate):
        _run(main, algo, impl, env, frames)
    ratios = []
    for n in range(pairs):
        order = ("torchrl", candidate) if n % 2 == 0 else (candidate, "torchrl")
        seconds = {impl: _run(main, algo, impl, env, frames) for impl in order}
        ratios.append(seconds[candidate] / seconds["torchrl"])
    return ratios


def line(algo: str, env: str, frames: int, impl: str, ratios: list[float]) -> str:
    """The verdict of one algorithm: the median over pairs, its spread, the target."""
    median = statistics.median(ratios)
    return (f"{algo} on {env}, {frames} frames: {impl} / torchrl = {median:.3f} (median of "
            f"{len(ratios)} pairs in turns, spread {min(ratios):.3f} – {max(ratios):.3f}; "
            f"target <= 1.0: {'met' if median <= 1.0 else 'NOT met'})")


def _heading(argv: list[str]) -> str:
    from benchtools.report import _stack

    load = " / ".join(f"{x:.2f}" for x in os.getloadavg())
    when = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    return (f"## {when}: `python -m benchtools.end_to_end {' '.join(argv)}`\n\n{_stack()}; one "
            f"torch thread, {os.cpu_count()} cores, CPU time of each run; load average at the "
            f"start {load}.\n")


def main(argv=None) -> None:
    p = argparse.ArgumentParser(prog="python -m benchtools.end_to_end", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--env", default="mock")
    p.add_argument("--pairs", type=int, default=5)
    p.add_argument("--frames", type=int, default=1000)
    p.add_argument("--algo", nargs="+", default=["sac", "ppo"], choices=["sac", "ppo"])
    p.add_argument("--impl", default="reference", choices=["reference", "reference-fused"],
                   help="what is compared with torchrl (reference-fused: the reference with "
                        "its prioritized sampler's tree walks in C)")
    p.add_argument("--report", type=Path, help="append the lines to this markdown file")
    args = p.parse_args(argv)
    if args.env != "mock" and not any(importlib.util.find_spec(m) for m in ("gymnasium", "gym")):
        p.error(f"--env {args.env} needs gymnasium (pip install gymnasium), which the stack does "
                "not hold; --env mock needs nothing beyond torchrl")
    import torch

    torch.set_num_threads(1)
    sys.path.insert(0, str(ROOT / "examples"))
    from dropin_training import main as train

    given = sys.argv[1:] if argv is None else list(argv)
    heading = _heading(given) if args.report else ""
    lines = []
    for algo in args.algo:
        ratios = paired(train, algo, args.env, args.frames, args.pairs, args.impl)
        lines.append(line(algo, args.env, args.frames, args.impl, ratios))
        print(lines[-1], flush=True)
    if args.report:  # written once every algorithm ran: an interrupted run appends nothing
        with args.report.open("a") as out:
            out.write("\n" + heading + "\n" + "".join(f"- {x}\n" for x in lines))
        print(f"report: {args.report}")


if __name__ == "__main__":
    main()
