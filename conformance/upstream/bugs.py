"""Upstream bug reports: one standalone reproducer and one issue body per TorchRL defect.

The known failures of the pinned TorchRL (its expectations file) collapse to a few distinct
defects, listed below by hand with the expectation entries each explains. A defect's folder
``reports/upstream-bugs/`` holds ``<slug>.py`` (a reproducer written by hand: torch, torchrl,
tensordict and numpy/scipy only; exit 1 while the defect is present) and ``<slug>.md`` (an issue
body in TorchRL's bug-report shape). The parts of the ``.md`` that come from the matrix are
generated between ``<!-- generated: NAME -->`` and ``<!-- end generated: NAME -->``: the
releases that have the defect and the one that fixed it, the git and nightly columns, the specs
that check it, the environment and the reproducer's code; so is the index ``README.md``.

    python -m conformance.upstream.bugs            # rewrite the generated parts from the matrix
    python -m conformance.upstream.bugs --check    # exit 1 if one was edited by hand, or is stale
    python -m conformance.upstream.bugs --verify PATCHED.json BASELINE.json SLUG [SLUG ...]
    python -m conformance.upstream.bugs --reproduce [SLUG ...]   # run the reproducers here

``--reproduce`` runs each reproducer copied alone into an empty folder with this Python and
this PYTHONPATH minus the project (as the upstream runner can do for each source) and prints
"present" (exit code 1), "fixed" (0) or what else happened.
``--verify`` judges a fix: two results files of one source with and without a patch (e.g.
``nox -s upstream -- /tmp/rl-fix --reports-dir /tmp/fix``); exit 0 when every spec of the
named defects fails in the baseline and passes with the patch, and no other verdict moves.

A release "has" a defect when its column holds a known failure carrying one of the defect's
entries (same test-id prefix, reason and link): a defect hidden by an earlier one in the same
spec (the max-slot overwrite behind the double-transformed default before 0.13.3) is not seen.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

from conformance import paths, record
from conformance.defects import (  # noqa: F401 - the catalogue, read through this module too
    BY_SLUG,
    DEFECTS,
    KINDS,
    NOT_REPORTED,
    PINNED,
    REPOSITORIES,
    SEARCH_LOG,
    CatalogueError,
    Defect,
    defect_for,
    owners,
)
from conformance.files import atomic_write
from conformance.plugin import catalogue
from conformance.plugin.expectation_file import Entry, ExpectationsError
from conformance.reporting.results_file import ResultsFileError
from conformance.reporting.results_file import read as read_results
from conformance.upstream import timeline

ROOT = paths.ROOT
RESULTS = ROOT / "reports" / "upstream"
BUGS = ROOT / "reports" / "upstream-bugs"
EXPECTATIONS = ROOT / "conformance" / "expectations"
FAILING = {"known failure", "fail", "error"}
COMMAND = "python -m conformance.upstream.bugs"


class BugsError(Exception):
    """Bad or inconsistent input: one line, exit code 2."""


def pinned_entries() -> list[Entry]:
    """The pinned release's expectation entries (its own lines and the shared ones it includes)."""
    try:
        return catalogue.pinned_entries()
    except ExpectationsError as exc:
        raise BugsError(str(exc)) from None


def entry_defects(entries: list[Entry]) -> dict[str, Defect]:
    """Entry prefix -> its defect; every prefix a defect names must be an entry of the release."""
    try:
        return owners(entries)
    except CatalogueError as exc:
        raise BugsError(str(exc)) from None


def defect_of(row: dict, entries: list[Entry], owner: dict[str, Defect]):
    """The defect a known-failure cell shows: its test's entry, with the reason and link the
    row carries (the same spec failing for another, older reason is not this defect)."""
    return defect_for(row["nodeid"], row.get("reason"), row.get("link"), entries, owner)


@dataclass
class Matrix:
    columns: list[str]  # every column, in the order of the sources its documents describe
    rows: list[dict]
    stack: dict  # the pinned release's python, torch, tensordict
    kinds: dict[str, str]  # column -> the kind of source its document describes

    @classmethod
    def load(cls, results_dir: Path) -> Matrix:
        files = sorted(Path(results_dir).glob("*.json"))
        if not files:
            raise BugsError(f"no per-source results in {results_dir}: run nox -s upstream first")
        rows, stack, order, kinds = [], {}, {}, {}
        for path in files:
            try:  # the versioned reader: rows of every schema carry reason and link as fields
                doc = read_results(path)
            except ResultsFileError as exc:
                raise BugsError(str(exc)) from None
            if doc.get("partial"):  # a narrowed or interrupted run is no column of the matrix
                raise BugsError(f"{path} is a partial run ({str(doc['partial'])[:200]}): the bug "
                                "reports are not rewritten from it")
            torchrl = [r for r in doc["rows"] if r["implementation"] == "torchrl"]
            rows += torchrl
            for row in torchrl:
                order.setdefault(row["implementation_version"], record.source_order(doc["source"]))
                kinds.setdefault(row["implementation_version"], doc["source"]["kind"])
            if path.stem == PINNED:
                stack = {"python": doc.get("python", "?"), **doc.get("stack", {})}
        if not stack:
            raise BugsError(f"{results_dir} has no column for the pinned torchrl {PINNED}")
        columns = sorted(order, key=lambda c: (order[c], c))
        return cls(columns, rows, stack, kinds)

    def of_kind(self, column: str, kind: str) -> bool:
        """Whether ``column``'s document describes a source of ``kind``."""
        return record.of_kind(self.kinds.get(column), kind)


@dataclass
class History:
    releases: str  # "0.7.2–0.14.1"
    fixed_in: str
    others: list[str]  # git and checkout columns: "<column>: has it" / "passes"
    nightly: str
    specs: list[str]  # the pinned release's tests that fail from it
    seen_on: str = "cpu"  # "cuda": specs are the ones that check it on a CUDA run


def histories(matrix: Matrix, entries: list[Entry]) -> dict[str, History]:
    owner = entry_defects(entries)
    cells: dict[str, dict[str, set]] = defaultdict(lambda: defaultdict(set))
    outcome: dict[str, dict[str, str]] = defaultdict(dict)
    for row in matrix.rows:
        column, test = row["implementation_version"], timeline._test(row)
        outcome[column][test] = row["outcome"]
        if row["outcome"] != "known failure":
            continue
        defect = defect_of(row, entries, owner)
        if defect is not None:
            cells[defect.slug][column].add(test)
    releases = [c for c in matrix.columns if matrix.of_kind(c, "release")]
    out = {}
    for defect in DEFECTS:
        having = cells[defect.slug]
        if defect.seen_on != "cpu":  # the matrix runs on the CPU, where its specs are untestable
            out[defect.slug] = History(
                f"{defect.releases or '?'} (read from the source; not in the version matrix, "
                f"which runs on the CPU)", f"not fixed (read from the source of {PINNED})", [],
                f"nightly: not run on {defect.seen_on}", device_specs(defect), defect.seen_on)
            continue
        if PINNED not in having:
            raise BugsError(f"the matrix shows no known failure of {defect.slug} on {PINNED}: "
                            "re-run nox -s upstream, or remove the defect")
        bug = timeline.Bug(defect.slug, defect.area)
        for column in releases:
            if column in having:
                bug.cells[column] = having[column]
        others, nightly = [], "nightly: not yet tested (the matrix has no nightly column)"
        for column in matrix.columns:
            if matrix.of_kind(column, "release"):
                continue
            tests = [outcome[column].get(t) for t in sorted(having[PINNED])]
            verdict = ("has it" if column in having else
                       "passes its specs" if all(t == "pass" for t in tests) else
                       "not tested or failing for another reason")
            if matrix.of_kind(column, "nightly"):
                nightly = f"nightly {column}: {verdict}"
            else:
                others.append(f"{column}: {verdict}")
        out[defect.slug] = History(
            timeline._ranges(releases, [c for c in releases if c in having]),
            timeline.fixed_in(bug, releases, outcome), others, nightly,
            sorted(having[PINNED]))
    return out


def device_specs(defect: Defect) -> list[str]:
    """The manifest's spec ids that a device-only defect names (its prefixes hold torchrl)."""
    from conformance import manifest

    wanted = tuple(manifest.spec_id(p, "torchrl") for p in defect.prefixes)
    return sorted(s for s in manifest.spec_ids() if s.startswith(wanted))


def unexplained(matrix: Matrix, entries: list[Entry]) -> list[str]:
    """Known failures of the pinned release that no defect explains."""
    owner = entry_defects(entries)
    return sorted(timeline._test(r) for r in matrix.rows
                  if r["implementation_version"] == PINNED and r["outcome"] == "known failure"
                  and defect_of(r, entries, owner) is None)


# ------------------------------------------------------------------ the generated parts


def _upstream(defect: Defect) -> str:
    if defect.upstream != NOT_REPORTED:
        return f"reported: {defect.upstream}"
    if defect.threads:
        return (f"{NOT_REPORTED}: no thread reports this defect; the search ([{SEARCH_LOG}]"
                f"({SEARCH_LOG})) found the related threads below")
    return (f"{NOT_REPORTED}: the search ([{SEARCH_LOG}]({SEARCH_LOG})) found no thread (the "
            f"expectations link {defect.related})")


def block_status(defect: Defect, history: History) -> list[str]:
    where = " (known failures in the matrix)" if history.seen_on == "cpu" else ""
    lines = [f"- **Releases that have it**{where}: {history.releases}",
             f"- **Fixed in**: {history.fixed_in}",
             *[f"- **Source {o.split(': ', 1)[0]}**: {o.split(': ', 1)[1]}"
               for o in history.others],
             f"- **{history.nightly.split(':')[0].capitalize()}**: "
             f"{history.nightly.split(': ', 1)[1]}",
             f"- **Classification**: {KINDS[defect.kind]}",
             f"- **Repository**: {defect.repository} (the code to change is there)",
             f"- **Upstream**: {_upstream(defect)}"]
    lines += [f"  - {t.url}: {t.note}" for t in defect.threads]
    if defect.documentation:
        lines.append(f"- **Documentation**: {defect.documentation}")
    return lines


def block_specs(history: History) -> list[str]:
    if history.seen_on != "cpu":
        return [f"{len(history.specs)} spec(s) of [torchrl-conformance](../../README.md) check it "
                f"on a {history.seen_on} run (on the CPU, where TorchRL's trees report no device, "
                "they pass; no expectation entry lists the failure: expectations are not per "
                "device):", "",
                *[f"- `{test}`" for test in history.specs]]
    return [f"{len(history.specs)} known failure(s) of torchrl {PINNED} in "
            "[torchrl-conformance](../../README.md):", "",
            *[f"- `{test}`" for test in history.specs]]


def block_environment(matrix: Matrix) -> list[str]:
    s = matrix.stack
    return ["```", f"torchrl {PINNED}", f"torch {s.get('torch', '?')}",
            f"tensordict {s.get('tensordict', '?')}", f"python {s.get('python', '?')}", "```",
            f"(from the results of the torchrl {PINNED} column of the matrix, which do not record "
            "the OS; seen on Linux x86_64, CPU)"]


def block_reproducer(defect: Defect, bugs_dir: Path) -> list[str]:
    code = (bugs_dir / f"{defect.slug}.py").read_text(encoding="utf-8").rstrip("\n")
    return [f"Save as `{defect.slug}.py` and run `python {defect.slug}.py` (exit code 1 while the "
            "bug is present, 0 once fixed):", "", "```python", code, "```"]


def block_index(histories_: dict[str, History]) -> list[str]:
    lines = ["| defect | area | kind | repository | releases that have it | fixed in | upstream | "
             f"known failures of {PINNED} it explains |", "|---|---|---|---|---|---|---|---|"]
    for d in DEFECTS:
        h = histories_[d.slug]
        up = ("not reported" if d.upstream == NOT_REPORTED else f"[reported]({d.upstream})")
        if d.upstream == NOT_REPORTED and d.threads:
            up += f" ({len(d.threads)} related)"
        count = (str(len(h.specs)) if d.seen_on == "cpu" else
                 f"0 on the CPU ({len(h.specs)} specs on {d.seen_on})")
        lines.append(f"| [{d.slug}]({d.slug}.md) ([reproducer]({d.slug}.py)): {d.summary} | "
                     f"{d.area} | {KINDS[d.kind]} | {d.repository} | {h.releases} | "
                     f"{h.fixed_in} | {up} | {count} |")
    total = sum(len(histories_[d.slug].specs) for d in DEFECTS if d.seen_on == "cpu")
    kinds = ", ".join(f"{sum(d.kind == k for d in DEFECTS)} {KINDS[k]}" for k in KINDS)
    reported = sum(d.upstream != NOT_REPORTED for d in DEFECTS)
    return [*lines, f"| **all** | | | | | | | **{total}** |", "",
            f"{len(DEFECTS)} entries: {kinds}; {reported} reported upstream before this "
            f"record, {len(DEFECTS) - reported} not (the search: [{SEARCH_LOG}]({SEARCH_LOG}))."]


MARK = re.compile(r"<!-- generated: (?P<name>[\w-]+) -->\n(?P<body>.*?)<!-- end generated: "
                  r"(?P=name) -->", re.S)


def fill(text: str, blocks: dict[str, list[str]], where: str) -> str:
    """``text`` with each generated block replaced; every block must be marked in it."""
    missing = set(blocks) - {m["name"] for m in MARK.finditer(text)}
    if missing:
        raise BugsError(f"{where}: no '<!-- generated: {sorted(missing)[0]} -->' ... "
                        f"'<!-- end generated: {sorted(missing)[0]} -->' part")
    return MARK.sub(lambda m: (f"<!-- generated: {m['name']} -->\n"
                               + "\n".join(blocks.get(m["name"], m["body"].splitlines()))
                               + f"\n<!-- end generated: {m['name']} -->"), text)


def generate(results_dir: Path = RESULTS, bugs_dir: Path = BUGS) -> dict[Path, str]:
    """Every file of the folder whose generated parts changed or not: path -> new text."""
    entries = pinned_entries()
    matrix = Matrix.load(results_dir)
    left = unexplained(matrix, entries)
    if left:
        raise BugsError(f"{len(left)} known failure(s) of {PINNED} explained by no defect, "
                        f"e.g. {left[0]}: add them to a defect in {__name__}")
    hist = histories(matrix, entries)
    out = {}
    for defect in DEFECTS:
        for suffix in (".py", ".md"):
            if not (bugs_dir / f"{defect.slug}{suffix}").is_file():
                raise BugsError(f"{bugs_dir / defect.slug}{suffix} is missing (written by hand)")
        md = bugs_dir / f"{defect.slug}.md"
        out[md] = fill(md.read_text(encoding="utf-8"),
                       {"status": block_status(defect, hist[defect.slug]),
                        "specs": block_specs(hist[defect.slug]),
                        "environment": block_environment(matrix),
                        "reproducer": block_reproducer(defect, bugs_dir)}, str(md))
    index = bugs_dir / "README.md"
    out[index] = fill(index.read_text(encoding="utf-8"), {"index": block_index(hist)}, str(index))
    return out


def run(check: bool, results_dir: Path = RESULTS, bugs_dir: Path = BUGS) -> int:
    """Write (or, with ``check``, compare) the generated parts; the exit code."""
    stale = []
    for path, text in generate(results_dir, bugs_dir).items():
        if path.read_text(encoding="utf-8") == text:
            continue
        if check:
            old = MARK.finditer(path.read_text(encoding="utf-8"))
            names = [m["name"] for m, n in zip(old, MARK.finditer(text), strict=True)
                     if m["body"] != n["body"]]
            stale.append(f"{path}: generated part {', '.join(names)} differs from the matrix")
        else:
            atomic_write(path, text)
            print(f"updated {path}")
    for line in stale:
        print(line, file=sys.stderr)
    if stale:
        print(f"edited by hand or stale: run {COMMAND} (it rewrites these parts from the "
              "matrix; edit the text outside them)", file=sys.stderr)
    return 1 if stale else 0


PASSING = {"pass", "unexpected pass"}  # an unexpected pass is a known failure that passed


def _verdicts(path: Path) -> dict[str, str]:
    import json

    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise BugsError(f"cannot read {path}: {exc.strerror}") from None
    try:
        rows = json.loads(text)["rows"]
    except (ValueError, KeyError, TypeError):
        raise BugsError(f"{path}: not a results file of this suite") from None
    if not isinstance(rows, list) or not all(isinstance(r, dict) for r in rows):
        raise BugsError(f"{path}: not a results file of this suite")
    # a narrowed run (-k, a node id, an ini file that collects less) is no judge of a patch:
    # completeness from the rows, against the committed manifest, as the gate decides it
    from conformance.plugin.completeness import rows_reason

    devices = {r.get("device", "cpu") for r in rows}
    short = rows_reason(rows, ["torchrl"], next(iter(devices)) if len(devices) == 1 else "cpu")
    if short:
        raise BugsError(f"{path}: a partial run cannot verify a fix ({short})")
    return {r["nodeid"]: "pass" if r["outcome"] in PASSING else
            "fail" if r["outcome"] in FAILING else r["outcome"]
            for r in rows if r.get("implementation") == "torchrl"}


def verify(patched: Path, baseline: Path, slugs: list[str]) -> int:
    """Print what a patch changed; 0 when exactly the named defects' specs turned to pass."""
    unknown = [s for s in slugs if s not in BY_SLUG]
    if unknown:
        raise BugsError(f"unknown defect {unknown[0]!r}; one of: {', '.join(BY_SLUG)}")
    before, after = _verdicts(baseline), _verdicts(patched)
    prefixes = tuple(p for s in slugs for p in BY_SLUG[s].prefixes)
    targets = sorted(n for n in before if n.startswith(prefixes))
    problems = [f"{n}: {before[n]} -> {after.get(n, 'absent')} (a spec of the defect)"
                for n in targets if before[n] != "fail" or after.get(n) != "pass"]
    problems += [f"{n}: {before[n]} -> {after.get(n, 'absent')} (moved, not a spec of the defect)"
                 for n in sorted(before) if n not in targets and after.get(n) != before[n]]
    problems += [f"{n}: only in the patched run" for n in sorted(set(after) - set(before))]
    print(f"{len(targets)} spec(s) of {', '.join(slugs)}: "
          f"{sum(after.get(n) == 'pass' for n in targets)} pass with the patch "
          f"(all failed before: {all(before[n] == 'fail' for n in targets)}); "
          f"{len(before) - len(targets)} other verdict(s) compared")
    for line in problems:
        print(f"  {line}")
    print("verified: the defect's specs turn pass, no other verdict moves" if not problems
          else f"NOT verified: {len(problems)} problem(s)")
    return 1 if problems or not targets else 0


def reproduce(slugs=None, python: str = sys.executable, workers: int = 2,
              timeout: float = 300) -> dict[str, subprocess.CompletedProcess]:
    """Each reproducer run alone in an empty temporary folder, nothing of the project on the
    path; slug -> the finished process (a timeout is returncode None)."""
    from concurrent.futures import ThreadPoolExecutor

    unknown = [s for s in slugs or () if s not in BY_SLUG]
    if unknown:
        raise BugsError(f"unknown defect {unknown[0]!r}; one of: {', '.join(BY_SLUG)}")
    path = [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep)
            if p and Path(p).resolve() != ROOT]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(path)}

    def one(slug: str) -> subprocess.CompletedProcess:
        with tempfile.TemporaryDirectory(prefix=f"{slug}-") as folder:
            shutil.copy(BUGS / f"{slug}.py", folder)
            try:
                return subprocess.run([python, f"{slug}.py"], cwd=folder, env=env, text=True,
                                      capture_output=True, timeout=timeout)
            except subprocess.TimeoutExpired as exc:
                return subprocess.CompletedProcess(exc.cmd, None, exc.stdout or "",
                                                   f"timed out after {timeout:g} s")

    with ThreadPoolExecutor(workers) as pool:
        return dict(zip(slugs or BY_SLUG, pool.map(one, slugs or BY_SLUG), strict=True))


def reproduce_verdict(run: subprocess.CompletedProcess) -> str:
    if run.returncode in (0, 1):
        return ("fixed", "present")[run.returncode]
    last = (run.stderr or run.stdout or "").strip().splitlines()
    return f"error (exit code {run.returncode}): {last[-1][:200] if last else ''}"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog=COMMAND, description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--check", action="store_true",
                        help="only compare: exit 1 if a generated part differs")
    parser.add_argument("--results", type=Path, default=RESULTS,
                        help="the per-source results of the matrix (default: reports/upstream)")
    parser.add_argument("--bugs", type=Path, default=BUGS,
                        help="the reports folder (default: reports/upstream-bugs)")
    parser.add_argument("--reproduce", nargs="*", metavar="SLUG",
                        help="run the reproducers (all, or these) alone with this Python")
    parser.add_argument("--verify", nargs="+", metavar="PATCHED.json BASELINE.json SLUG",
                        help="judge a fix (see above) instead of writing")
    args = parser.parse_args(argv)
    try:
        if args.reproduce is not None:
            runs = reproduce(args.reproduce)
            for slug, process in runs.items():
                print(f"{slug}: {reproduce_verdict(process)}")
            return 0 if all(r.returncode in (0, 1) for r in runs.values()) else 1
        if args.verify:
            if len(args.verify) < 3:
                parser.error("--verify needs PATCHED.json BASELINE.json and at least one SLUG")
            return verify(Path(args.verify[0]), Path(args.verify[1]), args.verify[2:])
        return run(args.check, args.results, args.bugs)
    except BugsError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
