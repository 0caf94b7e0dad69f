"""Find the first commit of pytorch/rl at which some specs change verdict.

    python -m conformance.upstream.bisect --repo PATH --good REF --bad REF NODEID [NODEID ...]
                                          [--json PATH] [runner options: --base, --work-dir]

Each step is tested as ``nox -s upstream -- git:PATH@SHA`` tests it (``runner.check_source``:
the same extraction, pairing, install, C++ trees and verdicts), restricted to the given specs.
The search walks the first-parent history from GOOD (exclusive) to BAD, halving the range:
a step whose verdicts equal GOOD's moves the good end, any other moves the bad end, so the
answer is the first commit whose verdicts differ from GOOD's (a "not tested" step counts as
different and is named as such in the answer). Output: one line per step (sha, subject,
verdicts), then the culprit: sha, subject, pull-request number and each spec's message on both
sides; ``--json PATH`` writes the same. Exit code 0 with a culprit, 1 without, 2 for bad
arguments.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

from conformance.cli import OneLineErrors
from conformance.upstream.sources import GIT_REF


class BisectError(ValueError):
    pass


@dataclass
class Commit:
    sha: str
    subject: str
    date: str = ""

    @property
    def pull_request(self) -> int | None:
        found = re.findall(r"\(#(\d+)\)", self.subject)
        return int(found[-1]) if found else None


@dataclass
class Step:
    commit: Commit
    verdicts: dict[str, str]  # nodeid -> outcome
    messages: dict[str, str] = field(default_factory=dict)
    seconds: float = 0.0


def _git(repo: str, *args: str) -> str:
    proc = subprocess.run(["git", "-C", repo, *args], capture_output=True, text=True, timeout=300)
    if proc.returncode:
        last = (proc.stderr.strip().splitlines() or ["failed"])[-1]
        raise BisectError(f"git {args[0]} in {repo}: {last}")
    return proc.stdout


def history(repo: str, good: str, bad: str) -> tuple[Commit, list[Commit]]:
    """GOOD's commit and the first-parent commits after it up to BAD, oldest first."""
    for ref in (good, bad):
        if not GIT_REF.match(ref):
            raise BisectError(f"{ref!r} is not a branch, tag or commit name")
    if repo.startswith("-") or not Path(repo).is_dir():
        raise BisectError(f"--repo {repo}: not a directory")
    fmt = "--format=%H%x00%s%x00%cs"

    def parse(line: str) -> Commit:
        sha, subject, date = line.split("\x00")
        return Commit(sha, subject, date)

    good_commit = parse(_git(repo, "log", "-1", fmt, f"{good}^{{commit}}", "--").strip())
    bad_sha = _git(repo, "rev-parse", "--verify", f"{bad}^{{commit}}").strip()
    if _git(repo, "merge-base", good_commit.sha, bad_sha).strip() != good_commit.sha:
        raise BisectError(f"{good} is not an ancestor of {bad}")
    lines = _git(repo, "log", "--first-parent", "--reverse", fmt,
                 f"{good_commit.sha}..{bad_sha}", "--").splitlines()
    commits = [parse(line) for line in lines if line]
    if not commits:
        raise BisectError(f"no commits between {good} and {bad}")
    return good_commit, commits


def search(good: Step, commits: list[Commit], evaluate, log=print) -> tuple[Step, Step, list]:
    """(last step with GOOD's verdicts, first step without, every step tested).

    ``evaluate(commit) -> Step``; the last commit is evaluated first: when it has GOOD's
    verdicts there is nothing to find (BisectError)."""
    steps = []

    def test(i: int) -> Step:
        step = evaluate(commits[i])
        steps.append(step)
        shown = ", ".join(f"{v}" for v in step.verdicts.values())
        same = "same as good" if step.verdicts == good.verdicts else "changed"
        log(f"[bisect] {step.commit.sha[:10]} {step.commit.subject[:60]}: {shown} ({same}, "
            f"{step.seconds:.0f} s)")
        return step

    last = test(len(commits) - 1)
    if last.verdicts == good.verdicts:
        raise BisectError("the verdicts at BAD equal those at GOOD: nothing changed")
    lo, hi = -1, len(commits) - 1
    known = {hi: last}
    while hi - lo > 1:
        mid = (lo + hi) // 2
        known[mid] = test(mid)
        if known[mid].verdicts == good.verdicts:
            lo = mid
        else:
            hi = mid
    return (good if lo < 0 else known[lo]), known[hi], steps


def per_spec(rows: list[dict], nodeids: list[str], text: str) -> tuple[dict, dict]:
    """(verdicts, messages) per test id: its outcome, judged against the expectations
    (``" (unexpected)"`` when it is not what they say). One entry per id, never the set of a
    prefix's outcomes: a new failure beside a known one ("fail,pass" both times) is a change."""
    verdicts, messages = {}, {}
    for nodeid in nodeids:
        hit = [r for r in rows if r["nodeid"].startswith(nodeid)]
        if not hit:
            verdicts[nodeid], messages[nodeid] = "no result", text
        for row in hit:
            verdicts[row["nodeid"]] = row["outcome"] + ("" if row["expected"] else
                                                        " (unexpected)")
            messages[row["nodeid"]] = row["message"] or "passed"
    return verdicts, messages


def runner_evaluator(repo: str, nodeids: list[str], args):
    """Test one commit through the upstream runner's pipeline (check_source), specs only."""
    from conformance.upstream import runner

    def evaluate(commit: Commit) -> Step:
        started = time.time()
        args.pytest_args = list(nodeids)
        _, _, text, results, _ = runner.check_source(f"git:{repo}@{commit.sha}", args, set())
        rows = runner._rows(results)
        return Step(commit, *per_spec(rows, nodeids, text), time.time() - started)

    return evaluate


def answer(repo, before: Step, culprit: Step, steps: list[Step], seconds: float) -> dict:
    return {
        "repo": repo,
        "culprit": {**asdict(culprit.commit), "pull_request": culprit.commit.pull_request},
        "before": asdict(before.commit),
        "specs": {n: {"before": before.verdicts.get(n, "absent"),
                      "after": culprit.verdicts.get(n, "absent"),
                      "message_before": before.messages.get(n, ""),
                      "message_after": culprit.messages.get(n, "")}
                  for n in dict.fromkeys([*before.verdicts, *culprit.verdicts])
                  if before.verdicts.get(n) != culprit.verdicts.get(n)},
        "steps": [{"sha": s.commit.sha, "subject": s.commit.subject, "verdicts": s.verdicts,
                   "seconds": round(s.seconds, 1)} for s in steps],
        "seconds": round(seconds, 1),
    }


def build_parser() -> argparse.ArgumentParser:
    from conformance.upstream.environment import WORK

    parser = OneLineErrors(prog="nox -s bisect --", description=__doc__,
                           formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repo", required=True, help="a pytorch/rl clone")
    parser.add_argument("--good", required=True, help="a ref whose verdicts are the old ones")
    parser.add_argument("--bad", required=True, help="a later ref whose verdicts differ")
    parser.add_argument("nodeids", nargs="+", metavar="NODEID", help="specs (pytest node ids)")
    parser.add_argument("--json", type=Path, help="write the answer here too")
    parser.add_argument("--base", action="append", default=[], metavar="TORCH=PYTHON")
    parser.add_argument("--work-dir", type=Path, default=WORK)
    return parser


def main(argv=None) -> int:
    from conformance.upstream import runner

    parser = build_parser()
    args = parser.parse_args(argv)
    if args.json is not None:  # checked before the bisect, not after an hour of it
        folder = args.json.parent
        if args.json.is_dir() or not folder.is_dir() or not os.access(folder, os.W_OK):
            parser.error(f"--json {args.json}: not a file in a writable folder")
        from conformance.reporting import destination

        try:
            destination.check_kind(args.json, "bisect", f"--json {args.json}")
        except destination.DestinationError as exc:
            parser.error(str(exc))
    # the runner's own option handling (--base checks), then its work folder
    run_args = runner.parse_args(["--work-dir", str(args.work_dir), "--reports-dir",
                                  str(args.work_dir / "bisect-reports"), "--only-this-run",
                                  *sum((["--base", b] for b in args.base), []), "bisect"])
    started = time.time()
    try:
        good_commit, commits = history(args.repo, args.good, args.bad)
        print(f"[bisect] {len(commits)} commits after {args.good} up to {args.bad}", flush=True)
        evaluate = runner_evaluator(str(Path(args.repo).resolve()), args.nodeids, run_args)
        good = evaluate(good_commit)
        print(f"[bisect] good {good_commit.sha[:10]}: {', '.join(good.verdicts.values())}")
        before, culprit, steps = search(good, commits, evaluate)
    except BisectError as exc:
        print(f"bisect: {exc}", file=sys.stderr)
        return 1
    result = answer(args.repo, before, culprit, [good, *steps], time.time() - started)
    c = result["culprit"]
    pr = f" (pytorch/rl#{c['pull_request']})" if c["pull_request"] else ""
    print(f"[bisect] first commit with other verdicts: {c['sha']} {c['subject']}{pr}")
    for nodeid, spec in result["specs"].items():
        print(f"  {nodeid}: {spec['before']} -> {spec['after']}")
        for side in ("before", "after"):
            first = (spec[f"message_{side}"] or "").splitlines()[:1]
            print(f"    {side}: {first[0][:200] if first else '(no message: passed)'}")
    print(f"[bisect] {len(steps) + 1} steps in {result['seconds']:.0f} s")
    if args.json:
        args.json.write_text(json.dumps(result, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
