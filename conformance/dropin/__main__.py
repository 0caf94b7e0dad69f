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


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m conformance.dropin", description=__doc__)
    parser.add_argument("path", help="a pytorch/rl checkout (its test/ directory is used)")
    parser.add_argument("--target", action="append", default=None,
                        help="a test file or node id relative to PATH (repeatable; default: "
                             + ", ".join(TARGETS) + ")")
    parser.add_argument("--out", default=str(ROOT / "reports" / "dropin.md"),
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
    out.parent.mkdir(parents=True, exist_ok=True)
    junits = {name: out.with_name(f"{out.stem}-{name}.xml") for name in ("shipped", "swapped")}
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
