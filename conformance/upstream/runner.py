"""Run the conformance suite against several TorchRL sources and build the version matrix.

    python -m conformance.upstream.runner SOURCE [SOURCE ...] [--base TORCH=PYTHON]
                                          [--expectations FILE] [-- PYTEST ARGS]

Each source is installed (``pip install --no-deps --target``, a few MB) into
``.nox/_upstream/<label>`` next to the tensordict of its minor, and run with a shared base
environment per torch version (``.nox/_upstream-base-torch<version>``: torch plus the suite's
dependencies), selected with PYTHONPATH. Where the source's shipped C++ trees (``torchrl._torchrl``) do not load
next to that torch, or it has none, ``extension.py`` builds them from the source's own
``torchrl/csrc`` (or the tag of ``--torchrl-git``) and loads them in their place. A source that
cannot be installed or imported still gets a column, every cell "cannot be tested here:
<reason>". Results: ``reports/upstream/<label>.json`` (and ``sources/<label>.json``: where its
trees came from, times); matrix: ``reports/upstream.{md,html,csv}`` (releases across, specs
down), with the sources and the timeline of known bugs (``report.py``, ``timeline.py``).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

from conformance.upstream import extension, replay_gate, report
from conformance.upstream.sources import Source, SourceError, extras_for, parse

ROOT = Path(__file__).resolve().parents[2]
WORK = ROOT / ".nox" / "_upstream"
REPORTS = ROOT / "reports"
BASE_REQUIREMENTS = ["numpy", "scipy", "pandas", "hypothesis", "pytest", "pytest-timeout",
                     "cloudpickle", "packaging", "orjson", "importlib_metadata"]


def log(message: str) -> None:
    print(f"[upstream] {message}", flush=True)


def _last_line(text: str) -> str:
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    return lines[-1][:300] if lines else "no output"


def base_python(torch: str, given: dict[str, str]) -> str:
    """A python with torch==<torch> and the suite's dependencies (created once)."""
    if torch in given:
        return given[torch]
    env = ROOT / ".nox" / f"_upstream-base-torch{torch}"
    python = env / "bin" / "python"
    stamp = env / "ready"
    if not stamp.is_file():
        log(f"creating base environment {env.relative_to(ROOT)} with torch {torch}")
        subprocess.run([sys.executable, "-m", "venv", str(env)], check=True)
        proc = subprocess.run([str(python), "-m", "pip", "install", "-q", "--progress-bar", "off",
                               f"torch=={torch}", *BASE_REQUIREMENTS, *extension.base_extras(torch)],
                              capture_output=True, text=True)
        if proc.returncode:
            raise SourceError(f"cannot build a torch {torch} environment: {_last_line(proc.stderr)}")
        stamp.write_text(torch)
    return str(python)


def materialize_git(source: Source) -> Source:
    """Check a git ref out into a folder and treat it as a local checkout."""
    safe = re.sub(r"[^\w.-]+", "_", f"{source.path.name}-{source.ref}")
    target = WORK / "src" / safe
    if not target.is_dir():
        target.parent.mkdir(parents=True, exist_ok=True)
        repo = str(source.path)
        if Path(repo).exists():
            archive = subprocess.run(["git", "-C", repo, "archive", "--format=tar", source.ref],
                                     capture_output=True)
            if archive.returncode:
                raise SourceError(f"git archive {source.ref}: {_last_line(archive.stderr.decode())}")
            target.mkdir()
            subprocess.run(["tar", "-x", "-C", str(target)], input=archive.stdout, check=True)
        else:
            clone = subprocess.run(["git", "clone", "--depth", "1", "--branch", source.ref, repo,
                                    str(target)], capture_output=True, text=True)
            if clone.returncode:
                shutil.rmtree(target, ignore_errors=True)
                raise SourceError(f"git clone {repo}@{source.ref}: {_last_line(clone.stderr)}")
    resolved = parse(str(target))
    resolved.argument, resolved.kind = source.argument, "git"
    return resolved


def install(source: Source, python: str) -> Path:
    """The folder to put on PYTHONPATH, installed once: torchrl (unless the source is a checkout,
    which brings its own), the tensordict of its minor and the pinned helpers."""
    target = WORK / (source.label if source.install else f"{source.label}-deps")
    stamp = target / ".installed"
    if stamp.is_file():
        return target
    shutil.rmtree(target, ignore_errors=True)
    requirements = [*source.install, source.tensordict, *extras_for(source.version)]
    proc = subprocess.run([python, "-m", "pip", "install", "-q", "--no-deps", "--progress-bar",
                           "off", "--target", str(target), *requirements],
                          capture_output=True, text=True)
    if proc.returncode:
        raise SourceError(f"pip install {' '.join(requirements)} failed: {_last_line(proc.stderr)}")
    stamp.write_text(" ".join(requirements))
    return target


def pythonpath(source: Source, target: Path | None) -> str:
    parts = [str(p) for p in (source.path if source.kind in ("checkout", "git") else None,
                              target) if p]
    return os.pathsep.join([*parts, str(ROOT)])


def import_problem(python: str, path: str) -> str | None:
    proc = subprocess.run([python, "-c", "import torchrl, tensordict"], capture_output=True,
                          text=True, env={**os.environ, "PYTHONPATH": path}, timeout=300)
    return None if proc.returncode == 0 else f"import torchrl failed: {_last_line(proc.stderr)}"


def run_source(source: Source, python: str, path: str, untestable: str | None,
               expectations: list[str], pytest_args: list[str], reports: Path,
               trees_problem: str | None = None) -> Path:
    results = reports / "upstream" / f"{source.label}.json"
    env = {**os.environ, "PYTHONPATH": path, "PYTHONHASHSEED": "0",
           "TORCHRL_CONFORMANCE_VERSION_LABEL": source.label}
    env.pop("TORCHRL_CONFORMANCE_IMPL", None)
    if untestable:
        env["TORCHRL_CONFORMANCE_UNTESTABLE"] = untestable
    args = [python, "-m", "pytest", "conformance", "--impl", "torchrl", "--results", str(results),
            "--no-report", "-p", "no:cacheprovider", "-q", "--tb=no", "-rN"]
    for file in expectations:
        args += ["--expectations", f"torchrl={file}"]
    if untestable:
        args += ["--expectations", "none"]
    elif trees_problem:  # the replay specs say why the C++ trees are missing (extension.py)
        env[replay_gate.PROBLEM_ENV] = trees_problem
        args += ["-p", "conformance.upstream.replay_gate"]
    subprocess.run([*args, *pytest_args], cwd=ROOT, env=env)
    return results


def summarize(results: Path) -> tuple[str, int]:
    """('12 pass, 3 known failure', number of unexpected results) of one run."""
    if not results.is_file():
        return "no results (the run crashed)", 1
    rows = json.loads(results.read_text())["rows"]
    counts: dict[str, int] = {}
    for row in rows:
        counts[row["outcome"]] = counts.get(row["outcome"], 0) + 1
    text = ", ".join(f"{n} {outcome}" for outcome, n in sorted(counts.items()))
    return text, sum(1 for row in rows if not row["expected"])


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="nox -s upstream --", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("sources", nargs="+", help="releases, wheel files, checkouts, git:REPO@REF")
    parser.add_argument("--base", action="append", default=[], metavar="TORCH=PYTHON",
                        help="reuse an existing python that has this torch version")
    parser.add_argument("--expectations", action="append", default=[], metavar="FILE",
                        help="expectations for every source (default: the release's own file)")
    parser.add_argument("--pytest-args", default="", help="extra pytest arguments, quoted")
    parser.add_argument("--reports-dir", type=Path, default=REPORTS,
                        help="where results and the matrix go (default: reports/)")
    parser.add_argument(extension.GIT_OPTION, dest="torchrl_git", metavar="PATH_OR_URL",
                        default=os.environ.get(extension.GIT_ENV) or None,
                        help="a TorchRL git repository (clone or URL) whose tags v<version> give "
                             "the C++ sources of releases whose wheel has none (0.4 to 0.9); "
                             f"default: ${extension.GIT_ENV}")
    return parser


def main(argv=None) -> int:
    args = build_parser().parse_args(argv)
    given = dict(item.split("=", 1) for item in args.base)
    started = time.time()
    outcomes: list[tuple[str, str, str]] = []
    unexpected_total = 0
    result_files = []
    records: list[dict] = []
    for number, argument in enumerate(args.sources, 1):
        t0 = time.time()
        untestable, python, path, trees, install_s = None, None, str(ROOT), None, None
        try:
            source = parse(argument)
            if source.kind == "git":
                source = materialize_git(source)
        except SourceError as exc:
            source = Source(argument, "release", re.sub(r"[^\w.]+", "_", argument))
            untestable = f"cannot resolve source: {exc}"
        log(f"[{number}/{len(args.sources)}] torchrl {source.label} ({source.tensordict}, "
            f"torch {source.torch})")
        try:
            python = base_python(source.torch, given)
            if not untestable:
                t_install = time.time()
                path = pythonpath(source, install(source, python))
                install_s = time.time() - t_install
                untestable = import_problem(python, path)
            if not untestable:  # the C++ trees: shipped, or built from the source's own csrc
                trees = extension.prepare(source, python, path, WORK, args.torchrl_git, log)
                path = trees.pythonpath(path)
                log(f"    C++ trees: {trees.origin}" + (f" — replay specs cannot be tested "
                    f"here: {trees.problem}" if trees.problem else ""))
        except (SourceError, subprocess.CalledProcessError) as exc:
            untestable = untestable or f"install failed: {exc}"
        if untestable:
            log(f"    cannot be tested here: {untestable}")
        python = python or sys.executable
        t_tests = time.time()
        results = run_source(source, python, path, untestable, args.expectations,
                             args.pytest_args.split(), args.reports_dir,
                             trees.problem if trees else None)
        tests_s, total_s = time.time() - t_tests, time.time() - t0
        summary, n_unexpected = summarize(results)
        unexpected_total += n_unexpected
        times = ", ".join(f"{name} {value:.0f} s" for name, value in (
            ("install", install_s), ("C++ trees", trees.seconds if trees else None),
            ("tests", tests_s)) if value is not None)
        log(f"    {summary} ({times}; total {total_s:.0f} s)")
        outcomes.append((source.label, "cannot be tested here: " + untestable if untestable
                         else "tested", summary))
        if results.is_file():
            result_files.append(results)
            records.append(report.write_record(results, {
                "label": source.label, "argument": argument, "kind": source.kind,
                "status": outcomes[-1][1], "torch": source.torch,
                "trees": trees.origin if trees else "not looked at (the source is untestable)",
                "trees_problem": trees.problem if trees else None, "outcomes": summary,
                "install_s": install_s, "trees_s": trees.seconds if trees else None,
                "tests_s": tests_s, "total_s": total_s}))
    disk = report.disk_lines([WORK, *sorted(WORK.parent.glob("_upstream-base-torch*")),
                              *(Path(p).parent.parent for p in given.values())])
    for line in filter(None, disk):
        log(line.lstrip("- "))
    if result_files:
        from conformance.reporting.matrix import write_reports

        preface = report.preface(result_files, [json.loads(p.read_text()) for p in records],
                                 extra=disk)
        for path in write_reports(result_files, args.reports_dir, stem="upstream",
                                  title="TorchRL conformance by release", preface=preface):
            log(f"wrote {path}")
    log(f"total wall time {time.time() - started:.0f} s")
    return 1 if unexpected_total else 0


if __name__ == "__main__":
    sys.exit(main())
