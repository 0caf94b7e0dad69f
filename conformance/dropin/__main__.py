"""``python -m conformance.dropin PATH``: TorchRL's tests, as shipped and with impls swapped in.

PATH is a pytorch/rl checkout (or an extracted ``test/`` tree with its ``pytest.ini``). Both
runs use the installed torchrl; the report goes to ``reports/dropin.md`` and the exit status is
1 when the swap breaks a test that ``conformance/dropin/differences.py`` does not document.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

from conformance.dropin import rerun
from conformance.dropin.compare import compare, read_junit, render
from conformance.paths import ROOT

# TorchRL's tests of the classes impls replaces (paths as in pytorch/rl 0.14)
TARGETS = [
    "test/test_distributions.py::TestTanhNormal",
    "test/objectives/test_sac.py",
    "test/objectives/test_ppo.py",
    "test/rb/test_rb_core.py",
]


DEFAULT_OUT = str(ROOT / "reports" / "dropin.md")


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m conformance.dropin", description=__doc__)
    parser.add_argument("path", help="a pytorch/rl checkout (its test/ directory is used)")
    parser.add_argument("--target", action="append", default=None,
                        help="a test file or node id relative to PATH (repeatable; default: "
                             + ", ".join(TARGETS) + ")")
    parser.add_argument("--out", default=DEFAULT_OUT,
                        help="markdown report (junit files are written next to it)")
    parser.add_argument("--sequential", action="store_true",
                        help="run the two passes one after the other (default: side by side)")
    parser.add_argument("--reruns", type=int, default=rerun.RERUNS,
                        help="reruns, each way, of a test the swap seems to break before it "
                             "counts as broken (a flaky upstream test passes on one); 0: none")
    parser.add_argument("pytest_args", nargs="*", help="extra pytest arguments (after --)")
    return parser


def _command(targets, junit: Path, swapped: bool, extra) -> list[str]:
    command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-o", "addopts=",
               f"--junitxml={junit}", *targets, *extra]
    if swapped:
        command[3:3] = ["-p", "conformance.dropin.swap"]
    return command


def main(argv=None) -> int:
    args = _parser().parse_args(argv)
    path = Path(args.path).resolve()
    targets = args.target or TARGETS
    if not path.is_dir():
        print(f"ERROR: {args.path} is not a directory (give a pytorch/rl checkout)",
              file=sys.stderr)
        return 2
    absent = [t for t in targets if not (path / t.split("::")[0]).is_file()]
    if absent:
        print(f"ERROR: {path} has no {absent[0]} (give a pytorch/rl checkout of the installed "
              "torchrl's version)", file=sys.stderr)
        return 2
    out = Path(args.out).resolve()
    narrowed = bool(args.pytest_args or args.target)
    if narrowed and out == Path(DEFAULT_OUT).resolve():
        # a narrowed run writes beside the full report, never over it
        out = out.with_name("dropin-partial.md")
        print(f"[dropin] PARTIAL RUN (targets or pytest arguments given): report {out}",
              flush=True)
    junits = {name: out.with_name(f"{out.stem}-{name}.xml") for name in ("shipped", "swapped")}
    from conformance.reporting import destination

    try:  # before both runs: never a file of the project (README.md) or a foreign one
        if out.suffix != ".md":
            raise destination.DestinationError(f"--out {args.out}: must name a .md file")
        destination.check_outputs([out], f"--out {args.out}", "dropin")
        for junit in junits.values():
            destination.check_kind(junit, "dropin", f"--out {args.out}")
            destination.check_kind(junit.with_suffix(".log"), "dropin", f"--out {args.out}")
    except (destination.DestinationError, OSError) as exc:
        print(f"ERROR: {exc}", file=sys.stderr)
        return 2
    out.parent.mkdir(parents=True, exist_ok=True)
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    env.setdefault("OMP_NUM_THREADS", "1")
    logs = {name: junits[name].with_suffix(".log") for name in junits}
    start = time.monotonic()
    processes = {}
    for name in ("shipped", "swapped"):
        junits[name].unlink(missing_ok=True)
        command = _command(targets, junits[name], name == "swapped", args.pytest_args)
        print(f"[dropin] {name}: {' '.join(command[1:])} (log: {logs[name]})", flush=True)
        with open(logs[name], "w") as log:
            processes[name] = subprocess.Popen(command, cwd=path, env=env, stdout=log,
                                               stderr=subprocess.STDOUT)
        if args.sequential:
            processes[name].wait()
    for process in processes.values():
        process.wait()
    missing = [name for name, junit in junits.items() if not junit.is_file()]
    if missing:
        print(f"ERROR: the {missing[0]} run wrote no results; see {logs[missing[0]]}",
              file=sys.stderr)
        return 2
    shipped, swapped = read_junit(junits["shipped"]), read_junit(junits["swapped"])
    if not shipped or not swapped or set(shipped) != set(swapped):
        # -k nothing, a target that collects nothing, a run that stopped: no comparison at all
        print(f"ERROR: no verdict: the shipped run ran {len(shipped)} test(s), the swapped run "
              f"{len(swapped)}, {len(set(shipped) ^ set(swapped))} not in both; see "
              f"{logs['shipped']}", file=sys.stderr)
        return 2
    comparison = compare(shipped, swapped)
    suspects = [t for ids in comparison.broken.values() for t in ids]
    if suspects and args.reruns:
        print(f"[dropin] rerunning the {len(suspects)} test(s) the swap seems to break, "
              f"{args.reruns} time(s) each way", flush=True)
        comparison.flaky = rerun.flaky(
            suspects, path, lambda t, j, s: _command(t, j, s, args.pytest_args), env,
            out.parent, args.reruns)
        comparison.broken = {sig: kept for sig, ids in comparison.broken.items()
                             if (kept := [t for t in ids if t not in comparison.flaky])}
    out.write_text(render(comparison, shipped, swapped, f"{path}: {', '.join(targets)}"))
    undocumented = sum(map(len, comparison.broken.values()))
    deliberate = sum(map(len, comparison.deliberate.values()))
    print(f"[dropin] {len(shipped)} tests in {time.monotonic() - start:.0f} s; broken by the "
          f"swap: {undocumented} undocumented, {deliberate} documented; flaky upstream (passed "
          f"on rerun): {len(comparison.flaky)}; report: {out}")
    for sig, ids in sorted(comparison.broken.items(), key=lambda kv: -len(kv[1])):
        print(f"  {len(ids):4d} x {sig}")
    return 1 if undocumented else 0


if __name__ == "__main__":
    sys.exit(main())
