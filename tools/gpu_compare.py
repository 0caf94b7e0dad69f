"""The GPU call's returned files, read into ``reports/gpu/README.md`` sections.

    python tools/gpu_compare.py counts REPORTS_DIR
    python tools/gpu_compare.py write OUT_DIR [--readme reports/gpu/README.md] [--unpack DIR]
                                              [--rehearsal]

``counts``: one line per spec run found in REPORTS_DIR (results-cpu.json, results-cuda.json,
results-cuda0.json) and how many rows differ (``tools/gpu_run.sh`` prints it last).

``write``: unpacks the tarballs the device tool brought back (``specs.tgz``, ``bench.tgz``,
``asv.tgz``; into the checkout by default, so that ``reports/gpu/`` and
``reports/asv/results/gpu-*`` land where they are committed) and writes, between
``<!-- gpu-compare:NAME -->`` markers of the README (replaced when there, else appended):

- ``run``: the machine and each step's line of the call (``machine.txt``, ``summary.txt``);
- ``verdicts``: per implementation and run, the outcomes, and the rows each run lacks against
  the committed manifest (every spec id, for every implementation);
- ``differences``: EVERY row whose outcome (or expectedness) differs between cpu, cuda and
  cuda:0, or that one run lacks, with what the non-cpu runs said and an explanation: the first
  rule of ``reports/gpu/explanations.json`` that matches (a defect of TorchRL, of the reference
  or of the suite, as read off an earlier run), else **to classify**;
- ``targets``: the three GPU targets' lines with the floors of the same run, the trees' fresh
  build against the carried one, and asv's finite points.

Nothing here imports torch: it reads JSON, Markdown and tarballs only.
"""

from __future__ import annotations

import argparse
import collections
import json
import math
import re
import sys
import tarfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RUNS = (("cpu", "cpu"), ("cuda", "cuda"), ("cuda0", "cuda:0"))  # file stem, how it is named
RULES = ROOT / "reports" / "gpu" / "explanations.json"
MANIFEST = ROOT / "conformance" / "manifest.json"
OUTCOMES = ("pass", "known failure", "fail", "error", "unexpected pass", "skipped", "not applicable")


def load_runs(folder: Path) -> dict[str, dict]:
    runs = {}
    for stem, _ in RUNS:
        path = folder / f"results-{stem}.json"
        if path.is_file():
            runs[stem] = json.loads(path.read_text())
    return runs


def keyed(doc: dict) -> dict[tuple[str, str], dict]:
    return {(r["nodeid"], r["implementation"]): r for r in doc["rows"]}


def state(row: dict | None) -> str:
    if row is None:
        return "(missing)"
    return row["outcome"] + ("" if row.get("expected", True) else " (unexpected)")


def differences(runs: dict[str, dict]) -> list[tuple[tuple[str, str], dict[str, dict | None]]]:
    tables = {stem: keyed(doc) for stem, doc in runs.items()}
    keys = sorted(set().union(*(t.keys() for t in tables.values())), key=lambda k: (k[1], k[0]))
    out = []
    for key in keys:
        rows = {stem: tables[stem].get(key) for stem in tables}
        if len({state(r) for r in rows.values()}) > 1:
            out.append((key, rows))
    return out


def counts_line(stem: str, doc: dict) -> str:
    by = collections.Counter((r["implementation"], state(r)) for r in doc["rows"])
    impls = sorted({i for i, _ in by})
    parts = []
    for impl in impls:
        parts.append(f"{impl} " + ", ".join(f"{n} {s}" for (i, s), n in sorted(by.items()) if i == impl))
    partial = f", PARTIAL: {first_line(doc['partial'], 90)}" if doc.get("partial") else ""
    return f"{stem} ({doc.get('device')}{partial}): " + "; ".join(parts)


def cmd_counts(folder: Path) -> int:
    runs = load_runs(folder)
    if not runs:
        print(f"specs: no results-*.json in {folder}")
        return 1
    for stem, doc in runs.items():
        print("specs " + counts_line(stem, doc))
    if len(runs) > 1:
        diff = differences(runs)
        print(f"specs: {len(diff)} rows differ between {', '.join(runs)}")
        for (nodeid, impl), rows in diff[:12]:
            print(f"  {impl} {nodeid.split('::')[-1]}: " +
                  " / ".join(f"{s} {state(r)}" for s, r in rows.items()))
    return 0


# ------------------------------------------------------------------ explanations
def explain(impl: str, rows: dict[str, dict | None], rules: list[dict]) -> str:
    """The kind and rule number of the first matching rule, else "to classify"."""
    some = next(r for r in rows.values() if r is not None)
    messages = " ".join((r or {}).get("message") or "" for s, r in rows.items() if s != "cpu")
    fields = {"implementation": impl, "area": some.get("area", ""), "spec": some["nodeid"],
              "message": messages}
    for n, rule in enumerate(rules, 1):
        if all(re.search(rule[f], fields[f]) for f in fields if f in rule):
            return f"{rule['kind']} (rule {n})"
    if all(r is None or r["outcome"] == some["outcome"] for r in rows.values()):
        return "**to classify**: a run lacks this row (stopped at its limit? a worker lost?)"
    return "**to classify** (a defect of TorchRL, of the reference, or of the suite?)"


def first_line(text: str | None, width: int = 110) -> str:
    line = (text or "").strip().split("\n")[0]
    line = line.replace("|", "\\|")
    return line if len(line) <= width else line[: width - 1] + "…"


def manifest_ids() -> set[str]:
    data = json.loads(MANIFEST.read_text())
    ids = set()
    for area in data["areas"].values():
        specs = area.get("specs", area) if isinstance(area, dict) else area
        for spec in specs:
            ids.add(spec if isinstance(spec, str) else spec.get("id", str(spec)))
    return ids


def row_spec_id(row: dict) -> str:
    # the manifest's ids: <file>::<test>[<params without the implementation>]
    nodeid = row["nodeid"]
    impl = row["implementation"]
    return nodeid.replace(f"[{impl}-", "[").replace(f"[{impl}]", "")


# ------------------------------------------------------------------ sections
def section_run(out: Path, rehearsal: bool) -> str:
    machine = (out / "machine.txt").read_text().strip() if (out / "machine.txt").is_file() else "?"
    summary = (out / "summary.txt").read_text().strip() if (out / "summary.txt").is_file() else ""
    head = ("### The CPU rehearsal of the call (nothing here ran on a GPU)\n\n" if rehearsal else
            "### The call\n\n")
    return (head + "```\n" + machine + "\n```\n\nEach step's line, as `tools/gpu_run.sh` wrote it "
            "(`summary.txt`):\n\n```\n" + summary + "\n```\n")


def section_verdicts(runs: dict[str, dict]) -> str:
    names = dict(RUNS)
    lines = ["### Verdicts: cpu, cuda and cuda:0 on the same machine\n",
             "| implementation | run | " + " | ".join(OUTCOMES) + " | unexpected | rows | lacks |",
             "|---|---|" + "---|" * (len(OUTCOMES) + 3)]
    try:
        manifest = manifest_ids()
    except (OSError, KeyError, ValueError):
        manifest = set()
    for impl in sorted({r["implementation"] for d in runs.values() for r in d["rows"]}):
        for stem, doc in runs.items():
            rows = [r for r in doc["rows"] if r["implementation"] == impl]
            c = collections.Counter(r["outcome"] for r in rows)
            unexpected = sum(not r.get("expected", True) for r in rows)
            lacks = len(manifest - {row_spec_id(r) for r in rows}) if manifest else "?"
            shown = f"`{names[stem]}`" + (" (partial)" if doc.get("partial") else "")
            lines.append(f"| {impl} | {shown} | " + " | ".join(str(c.get(o, 0)) for o in OUTCOMES)
                         + f" | {unexpected} | {len(rows)} | {lacks} |")
    partial = [f"`{names[s]}`: {d['partial']}" for s, d in runs.items() if d.get("partial")]
    if partial:
        lines += ["", "Partial runs: " + "; ".join(partial)]
    lines += ["", f"'lacks': the manifest's spec ids ({len(manifest)}) with no row of that "
              "implementation in that run."]
    return "\n".join(lines) + "\n"


def section_differences(runs: dict[str, dict], rules: list[dict]) -> str:
    names = dict(RUNS)
    diff = differences(runs)
    stems = list(runs)
    lines = [f"### Every difference between {', '.join(f'`{names[s]}`' for s in stems)} "
             f"({len(diff)} rows)\n"]
    if not diff:
        return lines[0] + "\nNone: every row has the same outcome in every run.\n"
    a = sum(1 for _, rows in diff if "cuda" in rows and "cuda0" in rows
            and state(rows["cuda"]) != state(rows["cuda0"]))
    lines.append(f"Of these, {a} differ between `cuda` and `cuda:0` (the spellings take different "
                 "paths in TorchRL's sampler).\n")
    lines.append("| # | implementation | spec | " + " | ".join(f"`{names[s]}`" for s in stems)
                 + " | what the GPU run said | explanation |")
    lines.append("|---|---|---|" + "---|" * len(stems) + "---|---|")
    kinds = collections.Counter()
    for n, ((nodeid, impl), rows) in enumerate(diff, 1):
        said = next((first_line(r.get("message")) for s, r in rows.items()
                     if s != "cpu" and r is not None and r.get("message")), "")
        why = explain(impl, rows, rules)
        kinds[why.split(" (")[0]] += 1
        test = nodeid.split("::", 1)[-1].replace("|", "\\|")
        lines.append(f"| {n} | {impl} | `{test}` | " + " | ".join(state(rows[s]) for s in stems)
                     + f" | {said} | {why} |")
    lines += ["", "By explanation: " + "; ".join(f"{k}: {v}" for k, v in kinds.most_common()), ""]
    used = sorted({int(m) for m in re.findall(r"\(rule (\d+)\)", "\n".join(lines))})
    for n in used:
        rule = rules[n - 1]
        lines.append(f"- rule {n} ({rule['kind']}, read off the run of {rule.get('seen', '?')}; "
                     f"`reports/gpu/explanations.json`): {rule['why']}")
    return "\n".join(lines) + "\n"


def asv_points(folder: Path) -> list[str]:
    out = []
    for machine in sorted(folder.glob("*")):
        for path in sorted(machine.glob("*.json")):
            if path.name in ("machine.json", "benchmarks.json"):
                continue
            doc = json.loads(path.read_text())
            col = doc["result_columns"].index("result")
            finite = total = 0
            for entry in doc["results"].values():
                vals = entry[col] if isinstance(entry[col], list) else [entry[col]]
                total += len(vals)
                finite += sum(isinstance(v, (int, float)) and math.isfinite(v) for v in vals)
            out.append(f"- `{machine.name}/{path.name}`: {finite} finite points of {total} "
                       f"({len(doc['results'])} benchmarks, commit {doc['commit_hash'][:8]})")
    return out


def section_targets(out: Path, unpacked: Path) -> str:
    lines = ["### The GPU targets, the trees, asv\n"]
    for report in ("reports/gpu/benchmarks-partial.md", "reports/benchmarks-partial.md"):
        path = unpacked / report
        if path.is_file():
            text = path.read_text()
            # the three GPU targets' lines (batch-1 mode, mode at 1e6, PER sample/update 256)
            targets = [line for line in text.splitlines()
                       if line.startswith("- ") and "(target" in line
                       and re.search(r"batch 1|at 1e6|sample_256|update_256", line)]
            floors = [line for line in text.split("## Floors", 1)[-1].splitlines()
                      if line.startswith("- one launch+sync") or line.startswith("- copy")] \
                if "## Floors" in text else []
            lines += [f"From `{report}` (the targets' groups and the floors, one run):", ""]
            lines += targets or ["(no target line)"]
            if floors:
                lines += ["", "Floors of the same run:", ""] + floors[:6]
            break
    else:
        lines.append("No targets' report came back.")
    trees = out / "trees.txt"
    lines += ["", "TorchRL's trees, the carried build against the fresh one (`trees.txt`):", "",
              "```", trees.read_text().strip() if trees.is_file() else "(none)", "```", ""]
    points = asv_points(unpacked / "reports" / "asv" / "results")
    lines += ["asv (`reports/asv/results`):", ""] + (points or ["- no asv results came back"])
    return "\n".join(lines) + "\n"


def put_section(readme: Path, name: str, body: str) -> None:
    begin, end = f"<!-- gpu-compare:{name} -->", f"<!-- /gpu-compare:{name} -->"
    text = readme.read_text() if readme.is_file() else ""
    block = f"{begin}\n{body.rstrip()}\n{end}"
    pattern = re.compile(re.escape(begin) + ".*?" + re.escape(end), re.S)
    if pattern.search(text):
        text = pattern.sub(lambda _: block, text)
    else:
        text = text.rstrip() + "\n\n" + block + "\n"
    readme.write_text(text)


def unpack(out: Path, dest: Path) -> list[str]:
    names = []
    for name in ("specs.tgz", "bench.tgz", "asv.tgz"):
        path = out / name
        if path.is_file():
            with tarfile.open(path) as tar:
                members = [m for m in tar.getmembers() if m.isfile() or m.isdir()]
                for m in members:  # relative paths inside the tree only
                    if m.name.startswith("/") or ".." in Path(m.name).parts:
                        raise SystemExit(f"{name}: refusing the member {m.name!r}")
                tar.extractall(dest, members=members, filter="data")
            names.append(name)
    return names


def cmd_write(out: Path, readme: Path, dest: Path, rehearsal: bool) -> int:
    if not out.is_dir():
        print(f"ERROR: {out}: no such folder (the device tool's files_at)", file=sys.stderr)
        return 2
    got = unpack(out, dest)
    print(f"unpacked {', '.join(got) or 'nothing'} into {dest}")
    runs = load_runs(dest / "reports" / "gpu")
    rules = json.loads(RULES.read_text())["rules"] if RULES.is_file() else []
    put_section(readme, "run", section_run(out, rehearsal))
    if runs:
        put_section(readme, "verdicts", section_verdicts(runs))
        put_section(readme, "differences", section_differences(runs, rules))
    put_section(readme, "targets", section_targets(out, dest))
    print(f"wrote the sections run, verdicts, differences, targets into {readme}")
    for stem, doc in runs.items():
        print("  " + counts_line(stem, doc))
    print(f"  differing rows: {len(differences(runs)) if len(runs) > 1 else 'n/a'}")
    return 0


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python tools/gpu_compare.py", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="command", required=True)
    c = sub.add_parser("counts")
    c.add_argument("folder", type=Path)
    w = sub.add_parser("write")
    w.add_argument("out", type=Path, help="the folder of the returned files (files_at)")
    w.add_argument("--readme", type=Path, default=ROOT / "reports" / "gpu" / "README.md")
    w.add_argument("--unpack", type=Path, default=ROOT, help="where the tarballs go (the checkout)")
    w.add_argument("--rehearsal", action="store_true", help="say the files come from a CPU rehearsal")
    args = p.parse_args(argv)
    if args.command == "counts":
        return cmd_counts(args.folder)
    return cmd_write(args.out, args.readme, args.unpack, args.rehearsal)


if __name__ == "__main__":
    sys.exit(main())
