"""Run the conformance suite against several TorchRL sources and build the version matrix.

Orchestration only: what a source is (``sources.py``; git refs ``git_source.py``, nightlies
``nightly.py``), what it is paired with (the release rule in ``sources.py``, the rule chains of
``nightly.py`` and ``pairing.py``), where it runs (``environment.py``), its C++ trees
(``extension.py``), and the reports (``report.py``) live in their own modules.

    python -m conformance.upstream.runner SOURCE [SOURCE ...] [--base TORCH=PYTHON]
                                          [--expectations FILE] [--pytest-args "ARGS"]

Each source is installed (``pip install --no-deps --target``, a few MB) into
``.nox/_upstream/<label>`` next to the tensordict its pairing chose, and run with a shared base
environment per torch version (``.nox/_upstream-base-torch<version>``: torch plus the suite's
dependencies), selected with PYTHONPATH. Where the source's shipped C++ trees
(``torchrl._torchrl``) do not load next to that torch, or it has none, ``extension.py`` builds them
from the source's own ``torchrl/csrc`` (or the tag of ``--torchrl-git``) and loads them in their
place. A source that cannot be resolved, installed or imported still gets a column, every cell "not tested" with the reason, and fails the run: the verdict of
each source is "NOT TESTED: <reason>", "N unexpected result(s)" or "conformant to expectations",
read from the rows' ``expected`` field and pytest's exit code. Column labels are unique: a git
ref is labelled by its resolved commit (``0.14.1+git.1a2b3c4``). Results:
``reports/upstream/<label>.json`` (and ``sources/<label>.json``: where its trees came from,
times); matrix: ``reports/upstream.{md,html,csv}`` (releases across, specs down; the columns of earlier
runs still in ``reports/upstream/`` are kept, marked with their date, unless ``--only-this-run``), with the sources
and the timeline of known bugs (``report.py``, ``timeline.py``). Exit code: 0 when every source is conformant to its expectations, 1 otherwise, 2 for
bad arguments, 3 when a source's run was partial (``--pytest-args`` narrowed it or stopped it
early: no verdict).
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import subprocess
import sys
import time
from pathlib import Path

from conformance import history, outcomes, paths
from conformance import record as record_shape
from conformance.admission import not_a_run
from conformance.cli import OneLineErrors
from conformance.plugin.completeness import PARTIAL_EXIT, flag, rows_reason
from conformance.reporting.results_file import ResultsFileError
from conformance.reporting.results_file import read as read_results
from conformance.upstream import extension, nightly, not_tested, passthrough, replay_gate, report

# base_python and install are also used through this module by benchmarks/history.py
from conformance.upstream.environment import (  # noqa: F401
    WORK,
    base_python,
    install,
    install_paired,
)
from conformance.upstream.sources import Source, SourceError, parse, shown
from conformance.upstream.text import safe
from conformance.verdict import Status, Verdict

ROOT = paths.ROOT
REPORTS = paths.REPORTS
RUNNER_PARTIAL_EXIT = 3  # a source's run was partial (--pytest-args narrowed it): never a verdict
NIGHTLY_TORCHES = ["2.14.1"]  # tried after the --base ones: a base env is built on demand
NIGHTLY_EXPECTATIONS = ROOT / "conformance" / "expectations" / "torchrl_nightly.txt"
#: where a run that is not complete (partial, unresolved) writes: beside the stored columns,
#: matrix and bug reports, never over them
PARTIAL_FOLDER = "partial"
PARTIAL_STEM = "upstream-partial"
#: environment variables that would hand pytest arguments or plug-ins behind the runner's back
PYTEST_ENV = ("PYTEST_ADDOPTS", "PYTEST_PLUGINS", "PYTEST_DISABLE_PLUGIN_AUTOLOAD",
              "TORCHRL_CONFORMANCE_IMPL")


def log(message: str) -> None:
    print(f"[upstream] {message}", flush=True)


def run_source(source: Source, label: str, python: str, path: str, expectations: list[str],
               pytest_args: list[str], results: Path, trees_problem: str | None = None,
               described: dict | None = None) -> int:
    """Run the suite on one installed source; pytest's exit code. ``described``: what the
    results document records of the source (``conformance.record``)."""
    env = {**os.environ, "PYTHONPATH": path, "PYTHONHASHSEED": "0",
           "TORCHRL_CONFORMANCE_VERSION_LABEL": label}
    env.pop(record_shape.SOURCE_ENV, None)  # never a description handed down from elsewhere
    if described is not None:
        env[record_shape.SOURCE_ENV] = json.dumps(described)
    for name in PYTEST_ENV:
        env.pop(name, None)
    # spec paths or node ids among the pytest arguments replace the whole suite (bisect)
    whole = [] if any(a.startswith("conformance/") for a in pytest_args) else ["conformance"]
    args = [python, "-m", "pytest", *whole, "--impl", "torchrl", "--results", str(results),
            "--no-report", "-p", "no:cacheprovider", "-q", "--tb=no", "-rN", "--require-complete",
            "-c", str(ROOT / "pyproject.toml"), "--rootdir", str(ROOT)]
    for file in expectations:
        args += ["--expectations", f"torchrl={file}"]
    if trees_problem:  # the replay specs say why the C++ trees are missing (extension.py)
        env[replay_gate.PROBLEM_ENV] = trees_problem
        args += ["-p", "conformance.upstream.replay_gate"]
    return subprocess.run([*args, *pytest_args], cwd=ROOT, env=env).returncode


def verdict(rows: list[dict], returncode: int | None) -> Verdict:
    """The verdict of one source (a status and its sentence; it unpacks as ``passed, text``),
    from its rows' ``expected`` field and pytest's exit code."""
    if returncode == PARTIAL_EXIT:  # narrowed or stopped early: no verdict, whatever the rows say
        return Verdict(Status.PARTIAL,
                       "PARTIAL RUN: not a conformance verdict (see the pytest output above)")
    if not rows:
        return Verdict(Status.NOT_TESTED, "NOT TESTED: the run left no results")
    impls = sorted({str(r.get("implementation")) for r in rows})
    if impls != ["torchrl"]:  # the column is torchrl's: rows of anything else are no verdict
        return Verdict(Status.NOT_TESTED, f"NOT TESTED: the rows are of {', '.join(impls)}, not "
                       "of the torchrl under test")
    missing = next((r for r in rows if r["outcome"] == outcomes.NOT_TESTED), None)
    if missing is not None:
        reason = (missing["message"] or "").splitlines()[0] if missing["message"] else ""
        # the message of a "not tested" row may already say so (not_tested.py writes it)
        return Verdict(Status.NOT_TESTED, reason if reason.startswith("NOT TESTED")
                       else f"NOT TESTED: {reason}")
    short = complete_reason(rows)
    if short:  # judged from what ran, whatever the arguments, ini files or plug-ins did
        return Verdict(Status.PARTIAL, f"PARTIAL RUN: not a conformance verdict ({short})")
    unexpected = sum(1 for r in rows if r["expected"] is not True)
    if unexpected:
        return Verdict(Status.UNEXPECTED, f"{unexpected} unexpected result(s)")
    if returncode not in (0, None):
        return Verdict(Status.PYTEST_FAILED, f"pytest exited with code {returncode}")
    return Verdict(Status.CONFORMANT, "conformant to expectations")


def complete_reason(rows: list[dict]) -> str | None:
    """Why a source's rows are not a complete run (None: they are), from the rows alone."""
    devices = sorted({str(r.get("device", "cpu")) for r in rows})
    return rows_reason(rows, ["torchrl"], devices[0] if len(devices) == 1 else "cpu")


def counts(rows: list[dict]) -> str:
    tally: dict[str, int] = {}
    for row in rows:
        tally[row["outcome"]] = tally.get(row["outcome"], 0) + 1
    return ", ".join(f"{n} {outcome}" for outcome, n in sorted(tally.items())) or "no results"


def _rows(results: Path) -> list[dict]:
    try:
        return read_results(results)["rows"]
    except ResultsFileError:
        return []


def unresolved_label(argument: str) -> str:
    """A column for a source that was never resolved: never a release's label (``typo/0.13.3``
    must not replace the stored 0.13.3 column), never longer than a file name may be."""
    name = safe(Path(argument.rstrip("/")).name or argument)[:60]
    return f"unresolved-{name}"


def resolve(argument: str, args) -> Source:
    """A source argument pinned down: parsed, a git ref extracted, a nightly paired."""
    torches = list(dict.fromkeys([*args.base, *NIGHTLY_TORCHES]))  # a nightly's pairing
    return parse(argument).resolve(args.work_dir, torches)


def build_parser() -> argparse.ArgumentParser:
    parser = OneLineErrors(prog="nox -s upstream --", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("sources", nargs="+", help="releases, wheel files, checkouts, git:REPO@REF")
    parser.add_argument("--base", action="append", default=[], metavar="TORCH=PYTHON",
                        help="reuse an existing python that has this torch version")
    parser.add_argument("--only-this-run", action="store_true",
                        help="build the matrix from this run's sources only (default: also the "
                             "columns of earlier runs still in REPORTS_DIR/upstream, marked so)")
    parser.add_argument("--expectations", action="append", default=[], metavar="FILE",
                        help="expectations for every source (default: the release's own file)")
    parser.add_argument("--pytest-args", default="", help="extra pytest arguments, quoted as in a shell")
    parser.add_argument("--reports-dir", type=Path, default=REPORTS,
                        help="where results and the matrix go (default: reports/)")
    parser.add_argument("--history-dir", type=Path, default=None,
                        help="where complete runs are recorded (default: REPORTS_DIR/history; "
                             "the workflows cache reports/history)")
    parser.add_argument("--work-dir", type=Path, default=WORK,
                        help="where sources are installed and extracted (default: .nox/_upstream)")
    parser.add_argument(extension.GIT_OPTION, dest="torchrl_git", metavar="PATH_OR_URL",
                        default=os.environ.get(extension.GIT_ENV) or None,
                        help="a TorchRL git repository (clone or URL) whose tags v<version> give "
                             "the C++ sources of releases whose wheel has none (0.4 to 0.9); "
                             f"default: ${extension.GIT_ENV}")
    return parser


def parse_args(argv=None) -> argparse.Namespace:
    """The arguments, or a one-line usage error (exit code 2) for a malformed one."""
    parser = build_parser()
    args = parser.parse_args(argv)
    args.work_dir = args.work_dir.resolve()
    try:
        args.pytest_args = shlex.split(args.pytest_args)
    except ValueError as exc:
        parser.error(f"--pytest-args {args.pytest_args!r}: {exc}")
    try:
        passthrough.check(args.pytest_args, ROOT)
    except passthrough.PassThroughError as exc:
        parser.error(str(exc))
    given = {}
    for item in args.base:
        torch, sep, python = item.partition("=")
        if not sep or not torch or not python:
            parser.error(f"--base {item!r}: expected TORCH=PYTHON, e.g. 2.14.1=/usr/bin/python3")
        if not (Path(python).is_file() and os.access(python, os.X_OK)):
            parser.error(f"--base {item!r}: {python} is not an executable python")
        given[torch] = python
    args.base = given
    for file in args.expectations:
        if file != "none" and not Path(file).is_file():
            parser.error(f"--expectations {file}: no such file")
    for name, folder in (("--reports-dir", args.reports_dir), ("--history-dir", args.history_dir)):
        if folder is not None and folder.exists() and not folder.is_dir():
            parser.error(f"{name} {folder}: not a directory")
    if args.history_dir is not None:  # records are added there: never a folder of the project
        where = args.history_dir.resolve()
        inside = where.relative_to(ROOT).parts if where.is_relative_to(ROOT) else None
        work = bool(inside) and inside[0].startswith(".") and inside[0] not in (".github", ".ci", ".git")
        if inside is not None and not where.is_relative_to(REPORTS) and not work:
            parser.error(f"--history-dir {args.history_dir}: a folder of the project; use "
                         f"{history.FOLDER.relative_to(ROOT)} or a folder of your own")
    from conformance.reporting import destination

    try:  # checked before anything is installed: never a file of the project or a foreign one
        destination.check_outputs([args.reports_dir / f"{stem}{suffix}"
                                   for stem in ("upstream", PARTIAL_STEM)
                                   for suffix in (".md", ".html", ".csv")],
                                  f"--reports-dir {args.reports_dir}", "upstream")
    except (destination.DestinationError, OSError) as exc:
        parser.error(str(exc))
    return args


def default_expectations(source: Source) -> list[str]:
    """The source's own default (``Source.default_expectations``): a nightly's file; for a git
    ref or a checkout (a development tree), its release's file when there is one, else the
    nightly's; none for the rest (pytest picks a release's own file by its version)."""
    return source.default_expectations(ROOT / "conformance" / "expectations", NIGHTLY_EXPECTATIONS)


def check_source(argument: str, args, taken: set[str]) -> tuple[str, Verdict, Path, dict]:
    """Resolve, install and run one source: (label, verdict, results file, record of where its
    C++ trees came from and how long each step took)."""
    reason, source = None, None
    try:
        source = resolve(argument, args)
    except (SourceError, nightly.NightlyError, subprocess.SubprocessError, OSError) as exc:
        source, reason = None, f"cannot resolve {shown(argument)}: {exc}"
    label = base = source.label if source else unresolved_label(argument)
    number = 1
    while label in taken:  # two sources of one version in one run: both columns kept
        number += 1
        label = f"{base}.{number}"
    taken.add(label)
    # written beside the stored column first: it replaces it only once it is complete
    results = args.reports_dir / "upstream" / PARTIAL_FOLDER / f"{label}.json"
    results.unlink(missing_ok=True)  # never judge a source by an earlier run's results
    record = {"label": label, "argument": argument, "kind": source.kind if source else "unknown",
              "torch": source.torch if source else None,
              "tensordict": source.tensordict if source else None,
              "pairing": source.pairing if source else [], "install_s": None, "trees_s": None,
              "trees": "not looked at (the source is not tested)", "trees_problem": None}
    python, path, trees = None, "", None
    if source is not None:
        log(f"torchrl {label} ({source.tensordict}, torch {source.torch})")
        try:
            python = base_python(source.torch, args.base)
            t_install = time.time()
            target, path, reason = install_paired(source, python, args.work_dir, log)
            record["install_s"] = time.time() - t_install
            record.update(tensordict=source.tensordict, pairing=source.pairing)
            if not reason:  # the C++ trees: shipped, or built from the source's own csrc
                trees = extension.prepare(source, python, path, args.work_dir, args.torchrl_git,
                                           log)
                path = trees.pythonpath(path)
                record.update(trees=trees.origin, trees_problem=trees.problem,
                              trees_s=trees.seconds)
                log(f"    C++ trees: {trees.origin}" + (f" — replay specs cannot be tested "
                    f"here: {trees.problem}" if trees.problem else ""))
        except (SourceError, subprocess.SubprocessError, OSError, ValueError) as exc:
            reason = reason or f"install failed: {exc}"
    if reason:
        results.parent.mkdir(parents=True, exist_ok=True)
        not_tested.write(results, label, reason, args.pytest_args,
                         source.describe(label) if source else None)
        judged = verdict(_rows(results), None)
        # nothing ran: never a column of the matrix. It stays beside the stored columns (it
        # never hides one that was tested, offline say), and the run writes upstream-partial.*,
        # so neither the matrix nor the bug reports take a verdict from what did not run (a
        # checkout whose torchrl does not import, run with --only-this-run, replaced both)
        return label, judged, results, record
    t_tests = time.time()
    # a git ref of main is judged like a nightly (bisect and the watch compare verdicts against
    # the expectations, not raw outcomes)
    expectations = args.expectations or default_expectations(source)
    returncode = run_source(source, label, python, path, expectations, args.pytest_args,
                            results, trees.problem if trees else None, source.describe(label))
    record["tests_s"] = time.time() - t_tests
    rows = _rows(results)
    if not rows:  # pytest stopped before writing results (a usage error, a crash)
        not_tested.write(results, label, f"pytest exited with code {returncode} before writing "
                         "results (see its output above)", args.pytest_args, source.describe(label))
        rows = _rows(results)
    judged = verdict(rows, returncode)
    return label, judged, _promote(results, admissible(rows, returncode)), record


def admissible(rows: list[dict], returncode: int | None) -> bool:
    """Whether a source's rows may replace its stored column (and its sources record, the
    matrix, the bug reports): a complete run in which every spec ran. Rows written for a pytest
    that died (NOT TESTED, every one) are complete by count and still nothing that ran."""
    if returncode == PARTIAL_EXIT or complete_reason(rows):
        return False
    return not_a_run({"rows": rows}) is None


def _promote(results: Path, complete: bool) -> Path:
    """A complete run's results take the stored column's place; any other stays beside it."""
    if not complete or not results.is_file():
        return results
    final = results.parent.parent / results.name
    os.replace(results, final)
    return final


def source_order(results: Path) -> tuple:
    """Where a results file's column goes: the order of the source its document describes
    (``conformance.record.source_order``); one that cannot be read goes last, by name."""
    try:
        return (0, record_shape.source_order(read_results(results)["source"]), results.stem)
    except ResultsFileError:
        return (1, (), results.stem)


def earlier_results(reports_dir: Path, this_run: list[Path]) -> list[tuple[Path, dict]]:
    """Results of other sources left in ``reports_dir/upstream`` by earlier runs (with their
    sources record), so that re-testing one release does not drop the other columns."""
    mine = {p.resolve() for p in this_run}
    found = []
    for path in sorted((reports_dir / "upstream").glob("*.json"), key=source_order):
        record = report.record_path(path)
        if path.resolve() in mine or not record.is_file():
            continue
        entry = json.loads(record.read_text(encoding="utf-8"))
        started = json.loads(path.read_text(encoding="utf-8")).get("started")
        entry["run"] = (time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime(started))
                        if started is not None else "date unknown")
        found.append((path, entry))
    return found


def main(argv=None) -> int:
    args = parse_args(argv)
    started = time.time()
    table: list[tuple[str, str, str]] = []
    result_files, records = [], []
    failed = 0
    taken: set[str] = set()
    this_run: list[tuple[str, Verdict]] = []
    for number, argument in enumerate(args.sources, 1):
        t0 = time.time()
        log(f"[{number}/{len(args.sources)}] {argument}")
        label, judged, results, record = check_source(argument, args, taken)
        text = judged.text
        failed += not judged.passed
        summary = counts(_rows(results))
        record.update(status=text, verdict=judged.status.value, outcomes=summary,
                      total_s=time.time() - t0)
        times = ", ".join(f"{name} {record[key]:.0f} s" for name, key in (
            ("install", "install_s"), ("C++ trees", "trees_s"), ("tests", "tests_s"))
            if record.get(key) is not None)
        log(f"    {text}: {summary} ({times + '; ' if times else ''}total {record['total_s']:.0f} s)")
        table.append((label, text, summary))
        this_run.append((label, judged))
        if results.is_file():
            result_files.append(results)
            records.append(report.write_record(results, record))
            # complete runs only: a source whose results went to upstream/partial/ is not one
            if results.parent.name != PARTIAL_FOLDER and judged.complete:
                history.record_quietly(results, record,
                                       args.history_dir or args.reports_dir / "history", log)
    this_files = list(result_files)  # the verdict block is of this run's sources only
    disk = report.disk_lines([args.work_dir, *sorted(args.work_dir.parent.glob("_upstream-base-torch*")),
                              *(Path(p).parent.parent for p in args.base.values())])
    for line in filter(None, disk):
        log(line.lstrip("- "))
    # a run with any source partial or unresolved is not complete: its matrix goes beside the
    # stored one (upstream-partial.*), and neither the matrix nor the bug reports are touched
    complete_run = bool(result_files) and all(p.parent.name != PARTIAL_FOLDER
                                              for p in result_files)
    stem = "upstream" if complete_run else PARTIAL_STEM
    if not complete_run:
        log(f"not a complete run: the matrix goes to {stem}.* beside the stored one, results to "
            f"upstream/{PARTIAL_FOLDER}/; stored columns, matrix and bug reports are kept")
    earlier = [] if args.only_this_run or not complete_run else earlier_results(
        args.reports_dir, result_files)
    for path, record in earlier:
        log(f"earlier run kept in the matrix: torchrl {path.stem} ({record.get('status', '?')}, "
            f"run {record['run']})")
        table.append((path.stem, f"earlier run ({record['run']}): {record.get('status', '?')}",
                      record.get("outcomes", "")))
        result_files.append(path)
        records.append(report.record_path(path))
    if earlier:  # one order for this run's columns and the kept ones: their sources'
        order = {path.stem: source_order(path) for path in result_files}
        table.sort(key=lambda row: order.get(row[0], (9,)))
        pairs = sorted(zip(result_files, records, strict=True), key=lambda p: order[p[0].stem])
        result_files, records = [p[0] for p in pairs], [p[1] for p in pairs]
    if result_files:
        from conformance.reporting.matrix import md, write_reports

        preface = ["| source | verdict | outcomes |", "|---|---|---|",
                   *(f"| torchrl {md(label)} | {md(text.replace('|', '/'))} | {md(summary)} |"
                     for label, text, summary in table), "",
                   *report.preface(result_files, [json.loads(p.read_text()) for p in records],
                                   extra=disk)]
        title = "TorchRL conformance by release" + ("" if complete_run else " (PARTIAL RUN)")
        for path in write_reports(result_files, args.reports_dir, stem=stem, title=title,
                                  preface=preface):
            log(f"wrote {path}")
        if complete_run:
            _refresh_bug_reports(args.reports_dir)
    log(f"total wall time {time.time() - started:.0f} s")
    print_verdict_block(this_files, args.reports_dir / f"{stem}.md")
    for label, judged in this_run:
        if not judged.passed:
            print(f"torchrl {label}: {judged.text}", file=sys.stderr)
        if judged.status is Status.PARTIAL:  # for .ci/gate.sh, through nox (see completeness)
            flag(f"torchrl {label}: {judged.text}")
    if any(judged.status is Status.PARTIAL for _, judged in this_run):
        return RUNNER_PARTIAL_EXIT
    return 1 if failed else 0


def print_verdict_block(result_files: list[Path], where: Path) -> None:
    """The verdict block of this run's sources (``conformance.reporting.verdict``), last: a
    TorchRL's defects are listed when one source was checked (with several, each column's
    known defects are in the matrix, ``where``)."""
    from conformance.reporting.verdict import block

    documents = []
    for path in result_files:
        try:
            documents.append(json.loads(path.read_text(encoding="utf-8")))
        except (OSError, ValueError):
            continue
    if not documents:
        return
    print("=" * 30 + " conformance verdict " + "=" * 30, flush=True)
    for line in block(documents, where=str(where), defects=len(documents) == 1):
        print(line, flush=True)


def _refresh_bug_reports(reports_dir: Path) -> None:
    """The upstream bug reports' generated parts (releases, specs, environment) follow the
    matrix they are read from: the default one only, and only once it has the pinned column."""
    from conformance.upstream import bugs

    if Path(reports_dir).resolve() != REPORTS.resolve():
        return
    if not (bugs.RESULTS / f"{bugs.PINNED}.json").is_file():
        log(f"upstream bug reports not refreshed: the matrix has no {bugs.PINNED} column")
        return
    status = bugs.main([])
    log("refreshed reports/upstream-bugs/" if status == 0
        else f"upstream bug reports not refreshed (exit code {status}, see above)")


if __name__ == "__main__":
    sys.exit(main())
