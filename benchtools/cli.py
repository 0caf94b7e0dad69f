"""``nox -s bench``: every workload on every selected implementation, side by side in one process
(pytest-benchmark over ``benchtools/side_by_side.py``), then ``reports/benchmarks.md`` and its
scaling plots in ``reports/benchmarks/``.

    python -m benchtools [--impl reference,torchrl] [--device cpu|cuda] [-k EXPR]
                         [--passes N] [--max-time SECONDS] [--max-call SECONDS] [--report-only]

The arguments are checked before anything is touched. A run writes into new files and replaces
the previous results only once it has finished (the results before that are kept, for the
repeatability check, as ``side_by_side.previous.json``); an interrupted or failed run leaves the
results as they were. A run narrowed with ``-k`` is partial: it writes
``reports/benchmarks-partial.md`` (and ``reports/benchmarks-partial/``), never the full report.
A ``--device cuda`` run writes the same files under ``reports/gpu/`` (the CPU's report stays).
asv (history across commits and releases) reads the same workloads; see docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from conformance.paths import REPORTS, ROOT, shown


@dataclass(frozen=True)
class Output:
    """Where one kind of run (full or partial) keeps its report, results and plots."""

    report: Path
    folder: Path

    @property
    def results(self) -> Path:
        return self.folder / "side_by_side.json"

    @property
    def skips(self) -> Path:
        return self.folder / "side_by_side_skips.jsonl"

    @property
    def previous(self) -> Path:
        return self.folder / "side_by_side.previous.json"


#: what `nox -s bench` compares by default: the eager reference, its replay with the fused tree
#: walks (issue #45: the replay targets against TorchRL's C++ trees; replay area only, the other
#: workloads are n/a for it) and the installed TorchRL
BENCH_DEFAULT = "reference,reference-fused,torchrl"
FULL = Output(REPORTS / "benchmarks.md", REPORTS / "benchmarks")
PARTIAL = Output(REPORTS / "benchmarks-partial.md", REPORTS / "benchmarks-partial")
GPU = REPORTS / "gpu"  #: where a cuda run's report, results and plots go
GPU_FULL = Output(GPU / "benchmarks.md", GPU / "benchmarks")
GPU_PARTIAL = Output(GPU / "benchmarks-partial.md", GPU / "benchmarks-partial")


class UsageError(Exception):
    pass


def _positive(kind):
    def parse(text: str):
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
        if not value > 0:
            raise argparse.ArgumentTypeError(f"must be > 0, got {text}")
        return value
    return parse


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m benchtools", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--impl", default=None,
                   help=f"implementations, as for the specs (default: {BENCH_DEFAULT})")
    p.add_argument("--device", choices=["cpu", "cuda"], default="cpu")
    p.add_argument("-k", dest="keyword", help="pytest -k expression over the group ids (a "
                                               "partial run: reports/benchmarks-partial.md)")
    p.add_argument("--max-time", type=_positive(float), default=0.25,
                   help="timed seconds per call, shared among the passes (default 0.25)")
    p.add_argument("--passes", type=_positive(int), default=3,
                   help="walks over the whole grid, each point's cycles pooled over them, so "
                        "that a median spans the run's slow and fast spells (default 3)")
    p.add_argument("--max-call", type=_positive(float), default=3.0,
                   help="a point whose single call takes longer is n/a (default 3 s)")
    p.add_argument("--report-only", action="store_true",
                   help="rebuild the report from the last finished run's results")
    return p


def check(args) -> list[str]:
    """The implementation names, or UsageError: nothing is touched before this passed."""
    from conformance.implementations import ENV_VAR, UnknownImplementation, resolve

    raw = args.impl if args.impl else os.environ.get(ENV_VAR) or BENCH_DEFAULT
    names = [n.strip() for n in raw.split(",") if n.strip()]
    try:
        resolve(",".join(names))
    except UnknownImplementation as exc:
        raise UsageError(str(exc)) from None
    if args.device == "cuda" and not args.report_only:  # a cuda run's report: anywhere
        # the suite's own check and words (conformance/device.py), not a second copy of them
        from conformance.device import DeviceError, check_available, parse

        try:
            check_available(parse(args.device))
        except DeviceError as exc:
            raise UsageError(str(exc)) from None
    if args.report_only and not _output(args).results.is_file():
        raise UsageError(f"--report-only: no results to report from "
                         f"({shown(_output(args).results)}); run without it first")
    return names


def _output(args) -> Output:
    if args.device == "cuda":
        return GPU_PARTIAL if args.keyword else GPU_FULL
    return PARTIAL if args.keyword else FULL


def pytest_command(args, names: list[str], results: Path, skips: Path) -> list[str]:
    timer = "time.process_time" if args.device == "cpu" else "time.perf_counter"
    cmd = [sys.executable, "-m", "pytest", str(ROOT / "benchtools" / "side_by_side.py"),
           "-p", "no:cacheprovider", "-q", "-rs", f"--benchmark-json={results}",
           f"--benchmark-timer={timer}", "--benchmark-disable-gc",
           "--benchmark-group-by=param:group", "--benchmark-sort=name",
           "--benchmark-columns=min,median,max,rounds",
           f"--bench-impl={','.join(names)}", f"--bench-device={args.device}",
           f"--bench-passes={args.passes}", f"--bench-max-time={args.max_time / args.passes}",
           f"--bench-max-call={args.max_call}", f"--bench-skips={skips}"]
    return cmd + (["-k", args.keyword] if args.keyword else [])


def child_environment() -> dict[str, str]:
    """The environment of the side-by-side pytest run: the checkout first on PYTHONPATH (a
    PYTHONPATH already set stays: the GPU machine's carried wheels), hash seed fixed, and no
    ``PYTEST_XDIST_*``: pytest-benchmark turns itself off when it reads those, which it would
    when the driver is started from a pytest-xdist worker (the self-tests under ``-n``)."""
    path = os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH")) if p)
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_XDIST_")}
    return {**env, "PYTHONPATH": path, "PYTHONHASHSEED": "0"}


def measure(args, names: list[str], out: Output) -> tuple[int, float]:
    """Run pytest into new files; replace ``out``'s results only when it finished. Returns the
    exit status and the seconds it took."""
    out.folder.mkdir(parents=True, exist_ok=True)
    new_results, new_skips = (out.folder / ".new.json"), (out.folder / ".new_skips.jsonl")
    for path in (new_results, new_skips):
        path.unlink(missing_ok=True)
    cmd = pytest_command(args, names, new_results, new_skips)
    env = child_environment()
    print("+", " ".join(cmd), flush=True)
    start = time.monotonic()
    try:
        status = subprocess.run(cmd, cwd=ROOT, env=env).returncode
        if status != 0 or not new_results.is_file():
            return status or 1, time.monotonic() - start
        if out.results.is_file():
            out.results.replace(out.previous)
        new_results.replace(out.results)
        if new_skips.is_file():
            new_skips.replace(out.skips)
        else:
            out.skips.unlink(missing_ok=True)
        return 0, time.monotonic() - start
    finally:
        for path in (new_results, new_skips):
            path.unlink(missing_ok=True)


def main(argv=None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    args = parser().parse_args(argv)
    try:
        names = check(args)
    except UsageError as exc:
        print(f"ERROR: {exc}", file=sys.stderr)
        return 4
    out, seconds = _output(args), None
    if not args.report_only:
        try:
            status, seconds = measure(args, names, out)
        except KeyboardInterrupt:
            print("interrupted: the results of the last finished run are kept", file=sys.stderr)
            return 130
        if status:
            print(f"ERROR: the benchmark run failed (pytest exit code {status}); the results "
                  "of the last finished run are kept", file=sys.stderr)
            return status
    from benchtools import report
    from benchtools.results import load, read_skips

    previous = (load(out.previous) if out.previous.is_file() and out in (FULL, GPU_FULL)
                else None)
    command = "nox -s bench" + (f" -- {' '.join(argv)}" if argv else "")
    path = report.write(load(out.results), out.report, command=command, seconds=seconds,
                        skips=read_skips(out.skips), previous=previous, plots=out.folder)
    print("\n".join(report.target_summary(path)))
    print(f"report: {path}")
    return 0
