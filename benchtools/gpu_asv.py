"""asv on a GPU machine: record the cuda points of the asv benchmarks for one commit.

    python -m benchtools.gpu_asv --commit HASH [--bench REGEX] [--quick] [--machine NAME]

Runs ``asv run --python=same`` with ``TORCHRL_CONFORMANCE_BENCH_DEVICES=cuda`` (the cuda points
only: asv spawns a process per point, and the CPU points belong to the CPU's history), then
names the result files without the checkout's path (``benchtools.asv_results``). They land in
``reports/asv/results/<machine>/`` (default machine name: ``gpu-<the device's name>``).

asv records a commit of a git repository. The GPU machine gets a copy of the working tree without
its history: where the checkout is no git repository, a throwaway one is made of the tree (one
commit), asv records under its hash, and the result files are then rewritten to ``HASH``, the
commit the tree was copied from (``git rev-parse HEAD`` where you sent it from). Without CUDA
(or without git where a repository is needed) it stops with one line, exit code 4.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
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


def run(commit: str, bench: str | None, quick: bool, machine: str | None) -> int:
    from benchtools.asv_results import stabilise
    from benchtools.clock import cuda_available
    from benchtools.registry import DEVICES_VAR

    if not cuda_available():
        raise Refused("no CUDA device is available to this torch: the cuda points cannot be "
                      "recorded here")
    machine = machine or machine_name()
    recorded = recorded_commit(commit)
    env = {**os.environ, DEVICES_VAR: "cuda",
           "PYTHONPATH": os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH"))
                                         if p)}
    asv = [sys.executable, "-m", "asv"]
    subprocess.run([*asv, "machine", "--yes", "--machine", machine], cwd=ROOT, env=env,
                   check=True, capture_output=True)
    cmd = [*asv, "run", "--python=same", "--set-commit-hash", recorded, "--machine", machine,
           "--show-stderr", "--record-samples", *(["--quick"] if quick else []),
           *(["--bench", bench] if bench else [])]
    print("+", " ".join(cmd), flush=True)
    status = subprocess.run(cmd, cwd=ROOT, env=env).returncode
    stabilise()
    for path in recommit(RESULTS / machine, recorded, commit):
        print(f"recorded for {commit[:8]}: {path.relative_to(ROOT)}")
    return status


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchtools.gpu_asv", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--commit", type=_commit, required=True,
                        help="the commit the tree was copied from (git rev-parse HEAD)")
    parser.add_argument("--bench", help="regex of benchmarks (asv --bench)")
    parser.add_argument("--quick", action="store_true", help="one sample a point (asv --quick)")
    parser.add_argument("--machine", help="asv's machine name (default: gpu-<device name>)")
    args = parser.parse_args(argv)
    try:
        return run(args.commit, args.bench, args.quick, args.machine)
    except Refused as exc:
        print(f"ERROR: {exc}", file=sys.stderr)
        return 4
    except KeyboardInterrupt:
        print("interrupted: asv's results so far are where asv wrote them", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
