"""asv on a GPU machine: record the cuda points of the asv benchmarks for one commit.

    python -m benchtools.gpu_asv --commit HASH [--bench REGEX]... [--seconds S] [--quick]
                                 [--machine NAME] [--rehearse]

Runs ``asv run --python=same`` with ``TORCHRL_CONFORMANCE_BENCH_DEVICES=cuda`` (the cuda points
only: asv spawns a process per point, and the CPU points belong to the CPU's history), then
names the result files without the checkout's path (``benchtools.asv_results``). They land in
``reports/asv/results/<machine>/`` (default machine name: ``gpu-<the device's name>``). asv
saves a run's results only when the run ends, so each ``--bench`` is its own asv run, in the
order given, merged into the commit's file; none starts after ``--seconds``.

The environment of asv's processes is explicit: asv drops ``PYTHONPATH`` from every process it
starts (benchmark discovery and each point) unless ``ASV_PYTHONPATH`` is set, which it hands
over as their ``PYTHONPATH``. On the H200 (2026-11-27) every point failed with "No module named
'torchrl'": the carried wheels sat in a folder on ``PYTHONPATH`` alone. So ``ASV_PYTHONPATH``
is set here to the checkout followed by this process's ``PYTHONPATH`` (carried wheels, the CUDA
trees' overlay), and the run ends by counting the finite points asv recorded: none is a failure
(exit 5), whatever asv's own exit status says.

``--rehearse`` (a CPU machine): the same steps on the cpu points, under the machine name
``rehearse-cpu`` unless ``--machine`` names one, so that the environment is proven before a
device call. Its results are not for committing.

asv records a commit of a git repository. The GPU machine gets a copy of the working tree without
its history: where the checkout is no git repository, a throwaway one is made of the tree (one
commit), asv records under its hash, and the result files are then rewritten to ``HASH``, the
commit the tree was copied from (``git rev-parse HEAD`` where you sent it from). Without CUDA
(or without git where a repository is needed) it stops with one line, exit code 4.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import subprocess
import sys
import time
from pathlib import Path

from conformance.paths import ROOT

RESULTS = ROOT / "reports" / "asv" / "results"


class Refused(Exception):
    pass


def _commit(text: str) -> str:
    if not re.fullmatch(r"[0-9a-f]{40}", text):
        raise argparse.ArgumentTypeError(f"not a full commit hash (40 hex digits): {text!r}")
    return text


def machine_name() -> str:
    import torch

    return "gpu-" + re.sub(r"[^a-z0-9]+", "-", torch.cuda.get_device_name(0).lower()).strip("-")


def _git(*args: str, check: bool = True) -> subprocess.CompletedProcess:
    return subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True, check=check)


def recorded_commit(commit: str) -> str:
    """The commit asv will record the tree under: this repository's HEAD, or a throwaway
    repository's single commit of the tree where the checkout has no history."""
    try:
        head = _git("rev-parse", "--verify", "HEAD", check=False)
    except FileNotFoundError:
        raise Refused("asv needs git to record a commit, and git is not installed") from None
    if head.returncode == 0 and (ROOT / ".git").exists():
        return head.stdout.strip()
    _git("init", "-q")
    _git("symbolic-ref", "HEAD", "refs/heads/main")  # the branch asv.conf.json names
    _git("add", "-A")
    _git("-c", "user.name=benchtools", "-c", "user.email=benchtools@localhost", "commit", "-q",
         "--no-verify", "-m", f"the tree of {commit} (throwaway, for asv)")
    return _git("rev-parse", "HEAD").stdout.strip()


def recommit(folder: Path, old: str, new: str) -> list[Path]:
    """Rewrite asv's result files of commit ``old`` in ``folder`` as results of ``new``: the
    file name's hash prefix and every occurrence of the full hash inside."""
    if old == new:
        return []
    done = []
    for path in sorted(folder.glob(f"{old[:8]}-*.json")):
        target = path.with_name(new[:8] + path.name[8:])
        target.write_text(path.read_text().replace(old, new))
        if target != path:
            path.unlink()
        done.append(target)
    return done


def environment(device: str, environ=None) -> dict[str, str]:
    """What asv and every process it starts see: the devices of the points, and the same module
    path, both as ``PYTHONPATH`` (asv's own process) and ``ASV_PYTHONPATH`` (asv hands that, and
    only that, to the benchmark processes as their ``PYTHONPATH``)."""
    from benchtools.registry import DEVICES_VAR

    environ = dict(os.environ if environ is None else environ)
    entries = [str(ROOT)]
    for raw in (environ.get("PYTHONPATH", ""), environ.get("ASV_PYTHONPATH", "")):
        entries += [p for p in raw.split(os.pathsep) if p and p not in entries]
    path = os.pathsep.join(entries)
    return {**environ, DEVICES_VAR: device, "PYTHONPATH": path, "ASV_PYTHONPATH": path}


def finite_points(folder: Path, commit: str) -> dict[str, int]:
    """Per result file of ``commit`` in ``folder``: how many points hold a finite number (a point
    whose process failed, or that is n/a on the device, holds null or NaN)."""
    counts = {}
    for path in sorted(folder.glob(f"{commit[:8]}-*.json")):
        data = json.loads(path.read_text())
        column = data.get("result_columns", ["result"]).index("result")
        n = 0
        for entry in data.get("results", {}).values():
            values = entry[column] if isinstance(entry, list) else entry.get("result")
            for v in values if isinstance(values, list) else [values]:
                n += isinstance(v, (int, float)) and math.isfinite(v)
        counts[path.name] = n
    return counts


def run(commit: str, bench: list[str] | str | None, quick: bool, machine: str | None,
        rehearse: bool = False, until: float | None = None) -> int:
    from benchtools.asv_results import stabilise
    from benchtools.clock import cuda_available

    if rehearse:
        device, machine = "cpu", machine or "rehearse-cpu"
    else:
        if not cuda_available():
            raise Refused("no CUDA device is available to this torch: the cuda points cannot be "
                          "recorded here")
        device, machine = "cuda", machine or machine_name()
    recorded = recorded_commit(commit)
    env = environment(device)
    print(f"asv's processes get PYTHONPATH={env['ASV_PYTHONPATH']} (as ASV_PYTHONPATH)", flush=True)
    asv = [sys.executable, "-m", "asv"]
    subprocess.run([*asv, "machine", "--yes", "--machine", machine], cwd=ROOT, env=env,
                   check=True, capture_output=True)
    cmd = [*asv, "run", "--python=same", "--set-commit-hash", recorded, "--machine", machine,
           "--show-stderr", "--record-samples", *(["--quick"] if quick else [])]
    # asv saves a run's results only when the run ends: one asv run per regex, in the order
    # given, each merged into the commit's file (asv loads it first), none started past `until`
    groups = [bench] if isinstance(bench, str) else list(bench or [None])
    status = 0
    try:
        for n, regex in enumerate(groups):
            if until is not None and time.time() > until:
                print(f"asv: no time left for {len(groups) - n} group(s), from {regex!r} on",
                      flush=True)
                break
            one = [*cmd, *(["--bench", regex] if regex else [])]
            print("+", " ".join(one), flush=True)
            status = subprocess.run(one, cwd=ROOT, env=env).returncode or status
    finally:  # stopped at a time limit too: what asv saved so far is kept, named as always
        stabilise()
        for path in recommit(RESULTS / machine, recorded, commit):
            print(f"recorded for {commit[:8]}: {path.relative_to(ROOT)}")
        counts = finite_points(RESULTS / machine, commit)
        for name, n in counts.items():
            print(f"asv {device} points with a finite result: {n} in {machine}/{name}", flush=True)
    if not any(counts.values()):
        print(f"ERROR: asv recorded no finite {device} point for {commit[:8]} in "
              f"{RESULTS.relative_to(ROOT) / machine}", file=sys.stderr)
        return 5
    return status


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchtools.gpu_asv", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--commit", type=_commit, required=True,
                        help="the commit the tree was copied from (git rev-parse HEAD)")
    parser.add_argument("--bench", action="append",
                        help="regex of benchmarks (asv --bench); repeatable: one asv run each, "
                             "in this order")
    parser.add_argument("--seconds", type=float,
                        help="start no asv run after this many seconds (a running one ends)")
    parser.add_argument("--quick", action="store_true", help="one sample a point (asv --quick)")
    parser.add_argument("--machine", help="asv's machine name (default: gpu-<device name>)")
    parser.add_argument("--rehearse", action="store_true",
                        help="on a CPU machine: the cpu points, machine rehearse-cpu")
    args = parser.parse_args(argv)
    try:
        until = None if args.seconds is None else time.time() + args.seconds
        return run(args.commit, args.bench, args.quick, args.machine, args.rehearse, until)
    except Refused as exc:
        print(f"ERROR: {exc}", file=sys.stderr)
        return 4
    except KeyboardInterrupt:
        print("interrupted: asv's results so far are where asv wrote them", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
