"""Mutation testing of the reference (``impls/``) by mutmut 3, area by area: ``nox -s mutation``.

A mutant is *killed* when a spec of its area fails on ``--impl reference`` with the mutant
switched on. mutmut does the test selection itself: a first run of the area's specs records which
specs reach which function of ``impls/`` (its "stats"), and each mutant then runs only the specs
that reach its function, with ``-x`` (the first failure ends the run), fastest specs first. A
mutant whose function no spec reaches is *not reached* (mutmut: "no tests"): code outside the
interface.

Each area runs in its own staging copy of the project (``.nox/mutation/<area>``: ``impls/``,
``conformance/``, ``pyproject.toml`` and a generated ``setup.cfg`` holding mutmut's settings), so
nothing of the working tree changes. Each run starts afresh (mutmut would keep a result while its
own function is unchanged, even when what it calls or the specs changed); ``--resume`` continues
a stopped run instead.

Every surviving or unreached mutant is looked up in ``tests/mutants/classified/<area>.json``
(key: file, function and the edit itself, not mutmut's running number, so that the key survives
edits elsewhere in the file): *equivalent* (with the probe, a committed self-test that shows no
observable difference) or *outside* (with the reason). ``reports/mutation.md`` and ``.json`` list
every one of them, classified or not.

Usage: ``python -m tests.mutants.mutation [--area AREA ...] [--max-children N] [--resume]
[--report-only]``
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

from conformance.areas import ORDER
from conformance.paths import ROOT

#: each area's reference files, as conformance/areas.py declares them (the one list of areas)
AREAS = {area.name: list(area.impls) for area in ORDER}
STAGE = ROOT / ".nox" / "mutation"
#: the classifications, one file per area (``classified/<area>.json``) so that work on one area
#: never conflicts with another's
CLASSIFIED = Path(__file__).with_name("classified")


def classified() -> dict:
    """Every area's classifications, in one mapping (keys name their file, so they never clash)."""
    out: dict = {}
    for path in sorted(CLASSIFIED.glob("*.json")):
        out.update(json.loads(path.read_text()))
    return out
REPORT_MD, REPORT_JSON = ROOT / "reports" / "mutation.md", ROOT / "reports" / "mutation.json"
SPEC_TIMEOUT = 60  # seconds per spec under a mutant (a mutant that loops is killed by it)

#: mutmut's exit-code classes (mutmut.stats.status_by_exit_code), folded into ours
KILLED, SURVIVED, NOT_REACHED, TIMEOUT, NOT_RUN = ("killed", "survived", "not reached",
                                                   "timeout", "not run")


def specs_of(area: str) -> list[str]:
    """The area's spec files (``conformance/test_<area>*.py``): the seed bug's first (it holds
    the most specs that fail fast), then the others by name."""
    others = sorted(p.name for p in (ROOT / "conformance").glob(f"test_{area}_*.py"))
    return [f"conformance/test_{area}.py"] + [f"conformance/{name}" for name in others]


def stage(area: str, root: Path = STAGE) -> Path:
    """A staging copy for ``area`` under ``root`` (refreshed from the working tree; mutmut's
    results kept)."""
    where = root / area
    where.mkdir(parents=True, exist_ok=True)
    for name in ("impls", "conformance"):
        target = where / name
        if target.exists():
            shutil.rmtree(target)
        shutil.copytree(ROOT / name, target, ignore=shutil.ignore_patterns("__pycache__"))
    # pyproject.toml and noxfile.py make the copy a checkout (conformance.paths.CHECKOUT), so
    # the specs' reports go to its own reports/ as in the working tree
    for name in ("pyproject.toml", "noxfile.py"):
        shutil.copy2(ROOT / name, where / name)
    lines = ["[mutmut]", "source_paths=impls", "only_mutate="]
    lines += [f"    {path}" for path in AREAS[area]]
    lines += ["also_copy=", "    conformance", "    noxfile.py", "pytest_add_cli_args_test_selection="]
    lines += [f"    {spec}" for spec in specs_of(area)]
    lines += ["pytest_add_cli_args=", "    --impl", "    reference", "    -p",
              "    no:cacheprovider", "    -n", "    0", "    --spec-timeout",
              f"    {SPEC_TIMEOUT}", ""]
    (where / "setup.cfg").write_text("\n".join(lines))
    return where


def run_area(area: str, max_children: int, resume: bool = False,
             only: list[str] | None = None) -> float:
    """Run mutmut over ``area``; its progress line goes to the terminal. Returns seconds.

    Fresh by default: mutmut keeps a mutant's result while the source of *its own function* is
    unchanged, so a result kept across edits can be stale (a mutant of a helper whose caller
    changed, a spec added since). ``resume`` keeps them: for a run that was stopped, with
    nothing edited since. ``only``: mutmut's mutant-name patterns (``impls.m.xǁCǁf__mutmut_*``),
    to run a part of the area while working on it; the rest is reported as not run."""
    if not resume:
        shutil.rmtree(STAGE / area / "mutants", ignore_errors=True)
    where = stage(area)
    env = dict(os.environ, PYTHONHASHSEED="0", OMP_NUM_THREADS="1")
    env.pop("PYTHONPATH", None)  # the staging copy, not the working tree, must be imported
    print(f"mutation: {area}: mutmut run in {where.relative_to(ROOT)}", flush=True)
    start = time.monotonic()
    proc = subprocess.run([sys.executable, "-m", "mutmut", "run", "--max-children",
                           str(max_children), *(only or [])], cwd=where, env=env)
    seconds = time.monotonic() - start
    if proc.returncode not in (0, 1):
        raise SystemExit(f"mutation: mutmut failed on {area} (exit {proc.returncode})")
    return seconds


# ------------------------------------------------------------------------------ results
def _status(exit_code) -> str:
    from mutmut.stats import status_by_exit_code

    status = status_by_exit_code[exit_code]
    return {"killed": KILLED, "survived": SURVIVED, "no tests": NOT_REACHED,
            "timeout": TIMEOUT, "segfault": KILLED, "not checked": NOT_RUN}.get(status, status)


def edit_of(diff: str) -> str:
    """The edit alone: the removed and added lines of a unified diff, stripped."""
    return "\n".join(line[0] + line[1:].strip() for line in diff.splitlines()
                     if line[:1] in "+-" and not line.startswith(("+++", "---")))


def key_of(path: str, mutant: str, diff: str) -> str:
    """A key that names the function and the edit, not mutmut's running number."""
    mangled = mutant.split(".", 2)[-1].rsplit("__mutmut_", 1)[0]
    # mutmut's names: xǁClassǁmethod for a method, x_function for a module-level function
    function = (mangled[2:].replace("ǁ", ".") if mangled.startswith("xǁ")
                else mangled.removeprefix("x_"))
    digest = hashlib.sha1(edit_of(diff).encode()).hexdigest()[:12]
    return f"{path}:{function}:{digest}"


def diffs(source: str, path: str, mutants) -> dict[str, str]:
    """mutmut's diff of each mutant (as ``mutmut show`` prints it), the module parsed once."""
    from difflib import unified_diff

    import libcst as cst
    from mutmut.mutation.diff_apply import read_mutant_function, read_original_function

    module = cst.parse_module(source)
    out = {}
    for mutant in mutants:
        orig, mutated = (cst.Module([f]).code.strip() for f in (
            read_original_function(module, mutant), read_mutant_function(module, mutant)))
        out[mutant] = "\n".join(unified_diff(orig.split("\n"), mutated.split("\n"),
                                             fromfile=path, tofile=path, lineterm=""))
    return out


def results_of(area: str, root: Path = STAGE) -> list[dict]:
    """Every mutant of ``area`` with its status, key and diff, from its staging copy."""
    where = root / area
    rows = []
    for path in AREAS[area]:
        meta = where / "mutants" / (path + ".meta")
        if not meta.exists():
            continue
        codes = json.loads(meta.read_text())["exit_code_by_key"]
        diff_of = diffs((where / "mutants" / path).read_text(), path, codes)
        for mutant, code in codes.items():
            diff = diff_of[mutant]
            rows.append({"area": area, "file": path, "mutant": mutant, "status": _status(code),
                         "key": key_of(path, mutant, diff), "diff": diff})
    return rows


def lookup(row: dict, classified: dict) -> dict | None:
    """The classification of a survivor: its own entry. A mutant that no spec reaches may also
    be classified with its whole function (``file:function:*``) or file (``file:*``): no spec
    reaching a function is a fact about the function, not about the edit."""
    entry = classified.get(row["key"])
    if entry is None and row["status"] == NOT_REACHED:
        file, function, _ = row["key"].split(":")
        entry = classified.get(f"{file}:{function}:*") or classified.get(f"{file}:*")
    return entry


def classify(rows: list[dict], classified: dict) -> None:
    for row in rows:
        if row["status"] in (SURVIVED, NOT_REACHED):
            entry = lookup(row, classified)
            row["class"] = entry["class"] if entry else "unclassified"
            row["why"] = (entry.get("probe") or entry.get("reason", "")) if entry else ""
            row["whole_function"] = bool(entry) and row["key"] not in classified


def summary(rows: list[dict]) -> dict:
    counts = {s: sum(r["status"] == s for r in rows)
              for s in (KILLED, SURVIVED, NOT_REACHED, TIMEOUT, NOT_RUN)}
    equivalent = sum(r.get("class") == "equivalent" for r in rows)
    run = len(rows) - counts[NOT_RUN]
    killed = counts[KILLED] + counts[TIMEOUT]  # a mutant that hangs a spec is caught by it
    denominator = run - equivalent
    counts.update(sites=len(rows), equivalent=equivalent,
                  outside=sum(r.get("class") == "outside" for r in rows),
                  unclassified=sum(r.get("class") == "unclassified" for r in rows),
                  score=round(100.0 * killed / denominator, 1) if denominator else None,
                  reached_score=round(100.0 * killed / (denominator - counts[NOT_REACHED]), 1)
                  if denominator - counts[NOT_REACHED] > 0 else None)
    return counts


def _last_areas() -> dict:
    """The areas of the last report (empty when there is none, or it cannot be read)."""
    try:
        return json.loads(REPORT_JSON.read_text())["areas"]
    except (OSError, ValueError, KeyError):
        return {}


def _kept_seconds(seconds: dict[str, float]) -> dict[str, float]:
    """This run's seconds per area, over those the last report recorded: a run of one area
    keeps the time of the others, whose results it also keeps (None: unknown, a partial run)."""
    kept = {a: d.get("seconds") for a, d in _last_areas().items() if d.get("seconds") is not None}
    return {**kept, **seconds}


def write_report(areas: list[str], seconds: dict[str, float]) -> dict:
    """The report of ``areas`` from their staging copies; every other area keeps what the last
    report holds for it (its staging copy, where one is left, may hold an older impls/: on a
    fresh machine there is none, and a run of one area must not turn the others into "not
    run")."""
    table = classified()
    seconds = _kept_seconds(seconds)
    last = _last_areas()
    report = {"tool": _mutmut_version(), "areas": {}}
    for area in AREAS:
        if area not in areas and area in last:
            report["areas"][area] = last[area]
            continue
        rows = results_of(area)
        classify(rows, table)
        counts = summary(rows)
        # listed: what no spec caught (killed and not-run mutants are counted only); the edit
        # is kept unless the whole function is classified
        rows = [r for r in rows if r["status"] in (SURVIVED, NOT_REACHED)]
        for row in rows:
            if row.get("whole_function"):
                del row["diff"]
        report["areas"][area] = {"summary": counts, "seconds": seconds.get(area),
                                 "mutants": rows}
    REPORT_JSON.write_text(json.dumps(report, indent=1, ensure_ascii=False) + "\n")
    REPORT_MD.write_text(_markdown(report))
    return report


def _mutmut_version() -> str:
    from importlib.metadata import version

    return f"mutmut {version('mutmut')}"


def _markdown(report: dict) -> str:
    out = ["# Mutation testing of impls/ (`nox -s mutation`)", "",
           f"Tool: {report['tool']}; a mutant is killed when a spec of its area fails on "
           "`--impl reference` (mutmut's per-function test selection, `-x`). Score: "
           "(killed + timeout) / (run - equivalent); 'reached' leaves out the mutants no spec "
           "reaches (code outside the interface). 'not run': mutants a stopped run did not "
           "reach (``--resume`` continues them). Generated by tests/mutants/mutation.py.", "",
           "| area | sites | killed | timeout | survived | not reached | not run | equivalent "
           "| outside | unclassified | score | reached score |",
           "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for area, data in report["areas"].items():
        s = data["summary"]
        if not s["sites"]:
            out.append(f"| {area} | not run | | | | | | | | | | |")
            continue
        out.append(f"| {area} | {s['sites']} | {s['killed']} | {s['timeout']} | "
                   f"{s['survived']} | {s['not reached']} | {s['not run']} | {s['equivalent']} | "
                   f"{s['outside']} | {s['unclassified']} | {s['score']} % | "
                   f"{s['reached_score']} % |")
    for area, data in report["areas"].items():
        left = [r for r in data["mutants"] if r["status"] in (SURVIVED, NOT_REACHED)]
        if not left:
            continue
        out += ["", f"## {area}: {len(left)} survivors and unreached mutants", ""]
        wholesale: dict[str, list[dict]] = {}
        for r in left:
            if r.get("whole_function"):
                wholesale.setdefault(r["key"].rsplit(":", 1)[0], []).append(r)
        for function, group in wholesale.items():
            out.append(f"- `{function}`: {len(group)} mutants no spec reaches ({group[0]['class']}"
                       f": {group[0]['why']})")
        for r in left:
            if r.get("whole_function"):
                continue
            why = f": {r['why']}" if r["why"] else ""
            out.append(f"- `{r['key']}` ({r['status']}, {r['class']}{why})")
            out += ["  ```diff"] + [f"  {line}" for line in edit_of(r["diff"]).splitlines()] + [
                "  ```"]
    return "\n".join(out) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.mutants.mutation",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("--area", action="append", choices=sorted(AREAS),
                        help="an area to run (repeatable; default: every area)")
    parser.add_argument("--max-children", type=int, default=max(1, (os.cpu_count() or 2) - 1))
    parser.add_argument("--resume", action="store_true",
                        help="keep the results of a stopped run (only if nothing was edited since)")
    parser.add_argument("--report-only", action="store_true",
                        help="write the report from the staging copies' results, run nothing")
    parser.add_argument("--only", action="append", metavar="PATTERN",
                        help="run only the mutants whose mutmut name matches (repeatable, '*' "
                             "wildcards, e.g. 'impls.prioritized_replay.xǁPrioritizedSamplerǁ"
                             "_unique__mutmut_*'); with one --area")
    args = parser.parse_args(argv)
    areas = args.area or list(AREAS)
    if args.only and len(areas) != 1:
        parser.error("--only needs exactly one --area")
    seconds = {}
    if not args.report_only:
        for area in areas:
            seconds[area] = run_area(area, args.max_children, args.resume, args.only)
        if args.only:  # a partial run's time is not the area's, nor is the last full run's
            seconds = {area: None for area in areas}
    report = write_report(areas, seconds)
    unclassified = sum(report["areas"][a]["summary"]["unclassified"] for a in areas)
    scores = {a: report["areas"][a]["summary"]["score"] for a in areas}
    print(f"mutation: {REPORT_MD.relative_to(ROOT)}: " + "; ".join(
        f"{a} {'not run' if score is None else f'{score} %'}" for a, score in scores.items())
        + f"; {unclassified} unclassified survivors")
    return 1 if unclassified else 0


if __name__ == "__main__":
    sys.exit(main())
