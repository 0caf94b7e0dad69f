"""The nightly watch: what to do after testing the newest nightly (.github/workflows/nightly-watch.yml).

    python -m conformance.upstream.watch decide --state STATE --results NIGHTLY.json \\
        --passed true|false --repo PATH [--github-output FILE]

``--results``: the nightly's results document, whose source (``conformance.record``) gives its
label and build day as fields; ``--label nightly-YYYY.MM.DD`` instead names one by hand.

The state file (carried between scheduled runs) holds the last nightly that was conformant and
the main commit it was built from. A nightly is mapped to a commit of pytorch/rl's main by its
date: the last first-parent commit of that day (UTC) — the wheels carry no commit id. Decision:

- conformant: record it as the last green one; nothing else to do;
- not conformant, a last green one known: bisect from its commit to the new one's;
- not conformant, none known (the first run): report, nothing to bisect from.

Kept apart from the workflow so that it is tested without network (tests/upstream/test_upstream_watch.py).
"""

from __future__ import annotations

import argparse
import datetime
import json
import re
import subprocess
import sys
from pathlib import Path

from conformance.cli import OneLineErrors

NIGHTLY_LABEL = re.compile(r"nightly-\d{4}\.\d{1,2}\.\d{1,2}", re.ASCII)


def date_of(label: str) -> datetime.date:
    """``nightly-2026.10.27`` -> that date; ValueError for anything else, an impossible date
    (``nightly-2026.13.45``) included. Dates are compared as dates, never as strings."""
    if not NIGHTLY_LABEL.fullmatch(label):
        raise ValueError(f"{label!r} is not nightly-YYYY.MM.DD")
    y, m, d = (int(p) for p in label.removeprefix("nightly-").split("."))
    return datetime.date(y, m, d)


def day_of(label: str) -> str:
    """``nightly-2026.10.27`` -> ``2026-10-27``."""
    return date_of(label).isoformat()


def valid_state(state) -> dict:
    """The carried state, checked: ``{}`` or ``{"last_green": {"label": nightly-DATE, "commit":
    40-hex sha or null}}``; ValueError (one line) otherwise."""
    if not isinstance(state, dict) or set(state) - {"last_green"}:
        raise ValueError("not a watch state ({'last_green': {'label': ..., 'commit': ...}})")
    last = state.get("last_green")
    if last is None:
        return {}
    if not isinstance(last, dict) or set(last) - {"day"} != {"label", "commit"}:
        raise ValueError("last_green is not {'label': ..., 'commit': ..., 'day': ...}")
    date_of(str(last["label"]))
    if last.get("day") is not None:  # recorded since the state carried the build day
        datetime.date.fromisoformat(str(last["day"]))
    if last["commit"] is not None and not (isinstance(last["commit"], str)
                                           and re.fullmatch(r"[0-9a-f]{40}", last["commit"])):
        raise ValueError(f"last_green commit {str(last['commit'])[:60]!r} is not a commit sha")
    return state


def commit_of_day(repo: str, day: str, branch: str = "HEAD") -> str | None:
    proc = subprocess.run(["git", "-C", repo, "rev-list", "-1", "--first-parent",
                           f"--before={day}T23:59:59Z", branch, "--"],
                          capture_output=True, text=True, timeout=120)
    return proc.stdout.strip() or None if proc.returncode == 0 else None


def _day(entry: dict) -> datetime.date:
    """A last green nightly's build day: recorded, else (a state written before it was) its
    label's."""
    return (datetime.date.fromisoformat(entry["day"]) if entry.get("day")
            else date_of(entry["label"]))


def decide(state: dict, label: str, passed: bool, commit: str | None,
           day: str | None = None) -> dict:
    """The action and the next state; pure, so that it is tested on its own. ``day``: the
    nightly's build day (YYYY-MM-DD) as its results record it (None: its label's)."""
    last = state.get("last_green")
    day = day or day_of(label)
    if passed:
        if last and _day(last) > datetime.date.fromisoformat(day):  # an older nightly, run again
            return {"action": "none", "reason": f"{label} is conformant (older than the last "
                    f"green {last['label']}, which stays)", "state": state}
        return {"action": "none", "reason": f"{label} is conformant",
                "state": {"last_green": {"label": label, "commit": commit, "day": day}}}
    if not last:
        return {"action": "report", "reason": f"{label} is not conformant and no earlier nightly "
                "was seen green: nothing to bisect from", "state": state}
    if not commit or not last.get("commit"):
        return {"action": "report", "reason": f"{label} is not conformant; its commit or that of "
                f"{last['label']} is unknown", "state": state}
    return {"action": "bisect", "good": last["commit"], "bad": commit,
            "reason": f"{label} is not conformant; {last['label']} was: bisect between them",
            "state": state}


def main(argv=None) -> int:
    parser = OneLineErrors(prog="python -m conformance.upstream.watch", description=__doc__,
                           formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("command", choices=["decide"])
    parser.add_argument("--state", type=Path, required=True)
    named = parser.add_mutually_exclusive_group(required=True)
    named.add_argument("--results", type=Path, help="the nightly's results document")
    named.add_argument("--label", help="nightly-YYYY.MM.DD, named by hand")
    parser.add_argument("--passed", choices=["true", "false"], required=True)
    parser.add_argument("--repo", required=True)
    parser.add_argument("--github-output", type=Path)
    args = parser.parse_args(argv)
    if args.results is not None:  # the document says which nightly it tested, and its day
        from conformance import record
        from conformance.reporting.results_file import ResultsFileError, read

        try:
            source = read(args.results)["source"]
        except ResultsFileError as exc:
            parser.error(f"--results: {exc}")
        if not record.is_nightly(source) or not source.get("date"):
            parser.error(f"--results {args.results}: not the results of a nightly with its day "
                         f"(source kind {source['kind']!r})")
        args.label, day = str(source["label"]), source["date"]
    else:
        try:
            day = day_of(args.label)
        except ValueError:
            parser.error(f"--label {args.label!r}: expected nightly-YYYY.MM.DD")
    try:
        state = json.loads(args.state.read_text()) if args.state.is_file() else {}
        state = valid_state(state)
    except (OSError, ValueError, RecursionError) as exc:
        parser.error(f"--state {args.state}: {exc}")
    result = decide(state, args.label, args.passed == "true", commit_of_day(args.repo, day), day)
    args.state.parent.mkdir(parents=True, exist_ok=True)
    args.state.write_text(json.dumps(result["state"], indent=1))
    print(f"{result['action']}: {result['reason']}")
    if args.github_output:
        with args.github_output.open("a") as out:
            for key in ("action", "good", "bad"):
                out.write(f"{key}={result.get(key, '')}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
