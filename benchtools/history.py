"""asv results across TorchRL releases, reusing the suite's environments instead of building a
5.7 GB one per release:

    python -m benchtools.history [RELEASE ...] [--bench REGEX] [--quick]
    (default releases: 0.6.0 0.8.1 0.13.3 0.14.1)

0.14 runs in the stack environment (this python); older releases run on one shared torch 2.13.0
base (``.nox/_upstream-base-torch2.13.0``, a CPU build, made by the upstream runner), with
torchrl and the tensordict of its minor installed without dependencies into
``.nox/_upstream/<release>`` (the upstream runner's folders, shared with ``nox -s upstream``).
Each release gets a small environment ``.asv/history/torchrl-<release>`` (no packages of its
own: a ``.pth`` puts the release folder and the base's site-packages on its path), which asv
runs as an existing environment, so its results carry the release in their environment name.
The benchmarks are asv's, from this checkout; results are recorded under the current commit.

Old releases ship C++ replay trees built for another torch. Where they do not load, the trees
are built from the release's own ``torchrl/csrc`` against the base torch, exactly as
``nox -s upstream`` does (``conformance/upstream/extension.py``, same cache): from the wheel from
0.10 on, from the tag of the TorchRL git repository named by $TORCHRL_CONFORMANCE_GIT before.
Without one (or without a compiler) the replay points are n/a ("cannot run prioritized_replay
here", with the reason printed), never a number.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
from pathlib import Path

from conformance.paths import ROOT
from conformance.stack import pins

HISTORY = ROOT / ".asv" / "history"
RELEASES = ["0.6.0", "0.8.1", "0.13.3", "0.14.1"]


def _site_packages(python: str) -> str:
    return subprocess.run([python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                          capture_output=True, text=True, check=True).stdout.strip()


def _runner_copy() -> Path:
    """asv's benchmark runner (pure Python), copied from this environment, for the releases'
    environments, which hold no packages of their own."""
    import asv_runner

    target = HISTORY / "_runner"
    if not (target / "asv_runner").is_dir():
        shutil.copytree(Path(asv_runner.__file__).parent, target / "asv_runner")
    return target


def environment(release: str) -> Path:
    """The python of ``.asv/history/torchrl-<release>``, created once."""
    from conformance.upstream import runner, sources

    source = sources.parse(release)
    overlay = None
    if source.torch == pins()["torch"]:
        base, folder = sys.executable, None  # the stack environment holds torchrl 0.14.1
    else:
        base = runner.base_python(source.torch, {})
        folder = runner.install(source, base)
        overlay = _trees(source, base, folder)
    env = HISTORY / f"torchrl-{release}"
    python = env / "bin" / "python"
    if not python.is_file():
        subprocess.run([base, "-m", "venv", "--without-pip", str(env)], check=True)
    # the overlay's sitecustomize (imported after the .pth files) loads the trees built here
    paths = [str(p) for p in (overlay, folder, _runner_copy()) if p]
    purelib = Path(_site_packages(str(python)))
    # `import site` lines run: addsitedir also reads the base's own .pth files
    (purelib / "_history.pth").write_text(
        "".join(f"{p}\n" for p in paths)
        + f"import site; site.addsitedir({_site_packages(base)!r})\n")
    return python


def _trees(source, base: str, folder: Path) -> Path | None:
    """The overlay that loads the release's C++ trees, built from its sources when the shipped
    ones do not load next to the base torch; None when the shipped ones load or none can be
    built (the reason is printed)."""
    from conformance.upstream import extension, runner

    trees = extension.prepare(source, base, str(folder), runner.WORK,
                              os.environ.get(extension.GIT_ENV) or None,
                              log=lambda line: print(f"[history] {line.strip()}", flush=True))
    if trees.problem:
        print(f"[history] torchrl {source.version}: replay points will be n/a: {trees.problem}",
              flush=True)
    else:
        print(f"[history] torchrl {source.version}: C++ trees {trees.origin}", flush=True)
    return trees.overlay


def drop_cuda_points(path: Path) -> list[str]:
    """On a machine without CUDA, a cuda point can only be "n/a". asv has been seen to record a
    number for one anyway (two torchrl cuda points of a 0.6.0 run, where every setup raises
    NotImplementedError("no CUDA device")): such numbers are removed, each named, never kept as
    a cuda measurement."""
    import itertools
    import json

    document = json.loads(path.read_text())
    columns = document.get("result_columns", [])
    dropped = []
    for name, entry in document.get("results", {}).items():
        record = dict(zip(columns, entry, strict=False))
        if not record.get("params") or not isinstance(record.get("result"), list):
            continue
        for i, combo in enumerate(itertools.product(*record["params"])):
            value = record["result"][i]
            if "'cuda'" in combo and value is not None and value == value:
                dropped.append(f"{name}{list(combo)}: {value:.3g} s")
                for key, values in record.items():
                    if key not in ("params", "version", "started_at", "duration") and \
                            isinstance(values, list) and len(values) > i:
                        values[i] = None
        document["results"][name] = [record.get(c) for c in columns]
    if dropped:
        path.write_text(json.dumps(document))
    return dropped


def _latest_result(release: str) -> Path | None:
    results = ROOT / "reports" / "asv" / "results"
    found = sorted(results.glob(f"*/*asv_history_torchrl-{release}_bin_python.json"),
                   key=lambda p: p.stat().st_mtime)
    return found[-1] if found else None


def head_commit() -> str:
    return subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True,
                          text=True, check=True).stdout.strip()


def run(release: str, bench: str | None, quick: bool, commit: str) -> int:
    python = environment(release)
    cmd = [sys.executable, "-m", "asv", "run", "--environment", f"existing:{python}",
           "--set-commit-hash", commit, "--show-stderr", "--record-samples"]
    if quick:
        cmd.append("--quick")
    if bench:
        cmd += ["--bench", bench]
    print(f"+ [torchrl {release}]", " ".join(cmd), flush=True)
    status = subprocess.run(cmd, cwd=ROOT).returncode
    import torch

    from benchtools.asv_results import stabilise

    stabilise()
    latest = _latest_result(release)
    if latest is not None and not torch.cuda.is_available():
        for point in drop_cuda_points(latest):
            print(f"[history] torchrl {release}: dropped a cuda number recorded without CUDA: "
                  f"{point}", flush=True)
    return status


def table(benchmark: str, results_dir: Path | None = None, device: str = "cpu") -> list[str]:
    """A markdown table of ``benchmark``'s medians on ``device`` by release, read from asv's
    results of this checkout's history environments (newest result file per release)."""
    import itertools
    import json

    results_dir = results_dir or ROOT / "reports" / "asv" / "results"
    by_release: dict[str, dict] = {}
    for path in sorted(results_dir.glob("*/*.json"), key=lambda p: p.stat().st_mtime):
        marker = "asv_history_torchrl-"
        if marker not in path.name:
            continue
        release = path.name.split(marker)[1].split("_bin_python")[0]
        document = json.loads(path.read_text())
        entry = document["results"].get(benchmark)
        if entry is not None:
            record = dict(zip(document["result_columns"], entry, strict=False))
            by_release[release] = record
    if not by_release:
        return [f"no history results for {benchmark}"]
    points: list[tuple] = []  # the union of the releases' grids (a grid may have grown)
    for record in by_release.values():
        grids = [[v.strip("'") for v in axis] for axis in record["params"]]
        points += [c for c in itertools.product(*grids)
                   if device in c and c not in points]
    points.sort(key=lambda combo: tuple(int(v) if v.isdigit() else v for v in combo))
    releases = sorted(by_release, key=lambda r: tuple(int(x) for x in r.split(".")))
    lines = ["| parameters | " + " | ".join(f"torchrl {r}" for r in releases) + " |",
             "|---|" + "---|" * len(releases)]
    for combo in points:
        cells = []
        for release in releases:
            record = by_release[release]
            index = list(itertools.product(*[[v.strip("'") for v in a] for a in record["params"]]))
            value = record["result"][index.index(combo)] if combo in index else None
            cells.append("n/a" if value is None or value != value else f"{value * 1e3:.3g} ms")
        lines.append(f"| {', '.join(combo)} | " + " | ".join(cells) + " |")
    return lines


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchtools.history", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("releases", nargs="*", default=RELEASES)
    parser.add_argument("--bench", help="regex of benchmarks (asv --bench)")
    parser.add_argument("--quick", action="store_true", help="one sample a point (asv --quick)")
    parser.add_argument("--table", metavar="BENCHMARK",
                        help="print the recorded history of BENCHMARK (e.g. bench_prioritized_"
                             "replay.ExtendOverMax.time_extend_over_max) and run nothing")
    parser.add_argument("--device", choices=["cpu", "cuda"], default="cpu",
                        help="the points --table shows (default cpu)")
    args = parser.parse_args(argv)
    if args.table:
        print("\n".join(table(args.table, device=args.device)))
        return 0
    from conformance.upstream.sources import SourceError

    subprocess.run([sys.executable, "-m", "asv", "machine", "--yes"], cwd=ROOT, check=True,
                   capture_output=True)
    status = 0
    commit = head_commit()  # one commit for every release of this run, wherever HEAD moves
    for release in args.releases:
        try:
            status |= run(release, args.bench, args.quick, commit)
        except SourceError as exc:
            print(f"ERROR: torchrl {release}: {exc}", file=sys.stderr)
            status = 1
    return status


if __name__ == "__main__":
    sys.exit(main())
