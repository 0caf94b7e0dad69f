"""Flips: where a spec's verdict changed from one source to the next of the same series.

Two series, each in its own order: the releases by version, and the nightlies by date (a
nightly column that was not tested in full is left out, never read as a change). A spec
*flips* at the first source of a series whose outcome (pass, known failure, fail, ...) differs
from the previous one's: a flip is placed on that source, with the previous source beside it, so the
change lies in between; ``exact`` says whether the two are consecutive days (nightlies).

A flip's culprit commit is read from a cached ``nox -s bisect -- --json`` answer named after
the nightly that first shows it (``reports/history/bisect/<label>.json``); without one the flip
says why none is named.
"""

from __future__ import annotations

import datetime
import json
from pathlib import Path

from conformance import outcomes, record
from conformance.dashboard.data import Source, area_of

NO_BISECT = ("not bisected: no cached `nox -s bisect -- --json` answer for it "
             "(bisect needs a pytorch/rl clone, which this run had not)")


def series(sources: list[Source], kind: str) -> list[Source]:
    """The complete sources of one kind in their order (sources are already sorted)."""
    return [s for s in sources if record.of_kind(s, kind) and s.verdict != "NOT TESTED"]


def _days(a: Source, b: Source) -> int | None:
    """Days between two nightlies' builds (None: not two nightlies with their day)."""
    if not (record.is_nightly(a) and record.is_nightly(b) and a.day and b.day):
        return None
    return (datetime.date.fromisoformat(b.day) - datetime.date.fromisoformat(a.day)).days


def find(ordered: list[Source], bisect_dir: Path | None = None) -> list[dict]:
    """The flips of one series, oldest first."""
    found = []
    for before, after in zip(ordered, ordered[1:], strict=False):
        changed = []
        for key in sorted(set(before.cells) & set(after.cells)):
            a, b = before.cells[key], after.cells[key]
            if a != b:  # any change of verdict: pass, known failure, fail, error, ...
                changed.append({"spec": key, "area": area_of(key), "before": a, "after": b})
        if not changed:
            continue
        days = _days(before, after)
        flip = {
            "at": after.label, "after": before.label, "days": days, "series": after.kind,
            "exact": days == 1, "specs": changed,
            "areas": sorted({c["area"] for c in changed}),
            "to_pass": sum(c["after"] == outcomes.PASS and c["before"] != outcomes.PASS for c in changed),
            "to_fail": sum(c["before"] == outcomes.PASS and c["after"] != outcomes.PASS for c in changed),
        }
        flip.update(culprit(after.label, bisect_dir))
        found.append(flip)
    return found


def culprit(label: str, bisect_dir: Path | None) -> dict:
    """The commit a cached bisect names for the flip first shown by ``label``, or why none."""
    path = Path(bisect_dir) / f"{label}.json" if bisect_dir else None
    if path is None or not path.is_file():
        return {"commit": None, "commit_note": NO_BISECT}
    try:
        answer = json.loads(path.read_text(encoding="utf-8"))
        commit = answer["culprit"]
    except (OSError, ValueError, KeyError, TypeError):
        return {"commit": None, "commit_note": f"{path.name}: not a bisect answer"}
    pr = commit.get("pull_request")
    changes = sorted({f"{spec.get('before')} -> {spec.get('after')}"
                      for spec in (answer.get("specs") or {}).values()})
    if any("not tested" in change.split(" -> ")[1] or "no result" in change for change in changes):
        # a step that could not be tested differs from GOOD without showing the flip
        return {"commit": None, "commit_note": f"bisect ended on {str(commit.get('sha'))[:10]}, "
                f"which could not be tested ({'; '.join(changes)}): no culprit named"}
    return {"commit": commit.get("sha"), "commit_subject": commit.get("subject", ""),
            "pull_request": pr, "commit_note": "named by nox -s bisect (cached): "
            + "; ".join(changes) + f" in {len(answer.get('steps') or [])} steps, "
            f"{answer.get('seconds', 0):.0f} s"}
