"""A parent reads the verdict: run the specs in a child ``pytest`` and judge from the results
file that child wrote, never from its exit code alone.

An implementation under test runs inside the child: it can ``os._exit(0)`` at import or
mid-run, and a pytest that exits 0 without writing results would otherwise be green. The
parent's verdict (:func:`judge`) is 0 only when the child wrote results in this run (its
``started`` is after the child was started), the run is complete (every spec of the committed
manifest for every implementation it names, ``partial`` empty) and every row is expected.
Anything else is one line on stderr and a non-zero code:

- no results file written by this run: 1 ("no results: ...");
- a partial run: :data:`~conformance.plugin.completeness.PARTIAL_EXIT` (6);
- an unexpected row or a failing child: 1 (or the child's own non-zero code).

Which commands are verdicts (parents) and which are plain pytest: docs/gating.md, "Verdicts
and plain pytest".

    python -m conformance.parent [--results PATH] -- PYTEST_ARGS...   # what nox -s conformance runs
"""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
import time
from pathlib import Path

from conformance import outcomes
from conformance.plugin.completeness import PARTIAL_EXIT, flag, rows_reason

DROPPED_ENV = ("PYTEST_ADDOPTS", "PYTEST_PLUGINS")
#: where ``pytest conformance`` writes its results when not told (the plug-in's default)
DEFAULT_RESULTS = Path("reports") / "results.json"
PARTIAL_DIR = "partial"


def results_option(args: list[str]) -> Path | None:
    """The value of ``--results`` among pytest arguments (the last one wins, as in argparse)."""
    found = None
    for i, arg in enumerate(args):
        if arg == "--results" and i + 1 < len(args):
            found = Path(args[i + 1])
        elif arg.startswith("--results="):
            found = Path(arg.split("=", 1)[1])
    return found


def candidates(results: Path) -> list[Path]:
    """Where a run told to write ``results`` may have written them: there, or beside it in
    ``partial/`` (a partial run never replaces a complete one)."""
    return [results, results.parent / PARTIAL_DIR / results.name]


def _read_fresh(paths: list[Path], since: float) -> tuple[Path | None, dict | None]:
    """The newest results document among ``paths`` written by a run started after ``since``."""
    best = (None, None)
    for path in paths:
        try:
            document = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError, RecursionError):
            continue
        started = document.get("started") if isinstance(document, dict) else None
        if not isinstance(started, (int, float)) or not math.isfinite(started) or started < since:
            continue  # an earlier run's file: never this run's verdict
        if best[1] is None or started > best[1]["started"]:
            best = (path, document)
    return best


def judge(paths: list[Path], since: float, returncode: int) -> tuple[int, str]:
    """(exit code, one line) of a child run from the results it wrote after ``since``."""
    path, document = _read_fresh(paths, since)
    if document is None:
        return (returncode or 1), (
            f"NO VERDICT: the run wrote no results file ({paths[0]}; pytest exit code "
            f"{returncode}): the specs did not all run (a process that exited early, a crash, "
            "a usage error)")
    rows = document.get("rows")
    if not isinstance(rows, list) or not rows:
        return (returncode or 1), f"NO VERDICT: {path} holds no rows"
    not_tested = sum(1 for r in rows if r.get("outcome") == outcomes.NOT_TESTED)
    unexpected = sum(1 for r in rows if r.get("expected") is not True)
    partial = document.get("partial")
    if not partial:
        impls = list((document.get("implementations") or {}).keys())
        devices = sorted({str(r.get("device", "cpu")) for r in rows if isinstance(r, dict)})
        partial = rows_reason(rows, impls, devices[0] if len(devices) == 1 else "cpu")
    if partial and unexpected:
        # a failure seen is red whatever did not run: the narrowed run a user makes to check one
        # area (-k ppo) must not read as "no verdict" when a spec of that area failed
        # (1, not the child's code: under --require-complete pytest exits 6 for any partial run)
        return 1, (f"NOT CONFORMANT: {unexpected} unexpected result(s) in a "
                                   f"PARTIAL RUN ({partial}; {path})")
    if partial:
        return PARTIAL_EXIT, f"PARTIAL RUN: not a conformance verdict ({partial})"
    if unexpected:
        what = f", {not_tested} NOT TESTED" if not_tested else ""
        return (returncode or 1), f"NOT CONFORMANT: {unexpected} unexpected result(s){what} ({path})"
    if returncode != 0:
        return returncode, f"NO VERDICT: pytest exited with code {returncode} ({path})"
    return 0, f"conformant to expectations: no unexpected result ({len(rows)} rows, {path})"


def run(command: list[str], results: Path, env: dict | None = None, cwd=None,
        prog: str = "conformance") -> int:
    """Run ``command`` (a child pytest told to write ``results``), then judge it; the code."""
    return run_judged(command, candidates(results), env, cwd, prog)


def run_judged(command: list[str], where: list[Path], env: dict | None = None, cwd=None,
               prog: str = "conformance") -> int:
    """Run ``command``, then judge the results it wrote in one of ``where``; the code. A file
    left there by an earlier run is kept, and never this run's verdict (its ``started``)."""
    # a verdict's pytest arguments and plug-ins are its own: none from the environment
    # (PYTEST_ADDOPTS="--results x.json" or "--log-file=README.md" would reach the child)
    env = {k: v for k, v in (os.environ if env is None else env).items() if k not in DROPPED_ENV}
    from conformance.reporting.verdict import BY_PARENT

    env[BY_PARENT] = "1"  # the block comes from this parent's judgement, below
    since = time.time()
    try:
        returncode = subprocess.run(command, env=env, cwd=cwd).returncode
    except KeyboardInterrupt:
        returncode = 2  # the child had the interrupt too; what it wrote is judged below
    code, line = judge(where, since, returncode)
    print_block(where, since, line)
    print(f"{prog}: {line}", file=sys.stderr if code else sys.stdout, flush=True)
    if code == PARTIAL_EXIT:
        flag(f"{prog}: {line}")  # .ci/gate.sh learns it through nox
    return code


def print_block(where: list[Path], since: float, judged: str) -> None:
    """The verdict block of the results this parent judged, its gate line the parent's own
    (``conformance.reporting.verdict``); nothing where the child wrote none."""
    from conformance.reporting.verdict import block

    path, document = _read_fresh(where, since)
    if document is None or not isinstance(document.get("rows"), list):
        return
    report = path.with_name("conformance.md" if path.name == "results.json" else path.stem + ".md")
    print("=" * 30 + " conformance verdict " + "=" * 30, flush=True)
    for line in block([document], where=str(report), gate=judged):
        print(line, flush=True)


def main(argv=None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if args[:1] == ["--"]:
        args = args[1:]
    from conformance import paths

    results = results_option(args) or paths.REPORTS / DEFAULT_RESULTS.name
    return run([sys.executable, "-m", "pytest", *args], results, prog="nox -s conformance")


if __name__ == "__main__":
    sys.exit(main())
