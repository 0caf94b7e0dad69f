"""The dashboard without a browser: spec keys, flips, verdicts and the CLI (the history store's
own tests: tests/history/)."""

from __future__ import annotations

import json
import re
import subprocess
import sys

from conformance.dashboard import flips
from conformance.dashboard.build import build
from conformance.dashboard.data import Source, spec_key
from conformance.paths import ROOT

EMOJI = re.compile("[\u2600-\u27bf\U0001f300-\U0001faff]")


def _row(test: str, outcome: str, label: str, expected: bool = True, message: str = "") -> dict:
    area = "prioritized_replay"
    return {"nodeid": f"conformance/test_{area}.py::{test}[torchrl-a=1]", "area": area, "spec": test,
            "parameters": "a=1", "implementation": "torchrl", "implementation_version": label,
            "outcome": outcome, "expected": expected, "message": message}


def _results(folder, label, rows, partial=None, started=1_790_000_000.0):
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{label}.json"
    path.write_text(json.dumps({"schema": 1, "started": started, "finished": started + 5,
                                "partial": partial, "rows": rows}), encoding="utf-8")
    return path


def test_spec_key_drops_the_implementation_only():
    assert spec_key("conformance/test_x.py::test_y[torchrl-a=1-b=2]", "torchrl") == \
        "test_x.py::test_y[a=1-b=2]"
    assert spec_key("conformance/test_x.py::test_y[torchrl]", "torchrl") == "test_x.py::test_y"
    assert spec_key("conformance/test_x.py::test_y", "torchrl") == "test_x.py::test_y"
    assert spec_key("conformance/test_x.py::test_y[sb3-a=1]", "sb3") == "test_x.py::test_y[a=1]"


def _source(label, cells):
    """A nightly as its record describes it: kind and build day are fields, not read from the
    label."""
    y, m, d = (int(p) for p in label.removeprefix("nightly-").split("."))
    return Source(label, "nightly", cells, set(), {}, None, "history", day=f"{y:04d}-{m:02d}-{d:02d}")


def test_a_flip_sits_on_the_first_source_that_shows_it():
    ordered = [_source("nightly-2026.7.6", {"s1": "pass", "s2": "known failure"}),
               _source("nightly-2026.7.7", {"s1": "pass", "s2": "known failure"}),
               _source("nightly-2026.7.9", {"s1": "pass", "s2": "pass", "s3": "fail"}),
               _source("nightly-2026.7.10", {"s1": "fail", "s2": "pass", "s3": "fail"})]
    found = flips.find(ordered)
    assert [(f["at"], f["after"], f["days"], f["exact"], [c["spec"] for c in f["specs"]])
            for f in found] == [("nightly-2026.7.9", "nightly-2026.7.7", 2, False, ["s2"]),
                                ("nightly-2026.7.10", "nightly-2026.7.9", 1, True, ["s1"])]
    assert found[0]["commit"] is None and "not bisected" in found[0]["commit_note"]


def test_a_cached_bisect_answer_names_the_culprit(tmp_path):
    (tmp_path / "nightly-2026.7.9.json").write_text(json.dumps(
        {"culprit": {"sha": "1234567890ab", "subject": "fix", "pull_request": 4014},
         "specs": {"s": {"before": "fail", "after": "pass"}}, "steps": [{}, {}], "seconds": 60}))
    ordered = [_source("nightly-2026.7.8", {"s": "fail"}), _source("nightly-2026.7.9", {"s": "pass"})]
    (flip,) = flips.find(ordered, tmp_path)
    assert (flip["commit"], flip["pull_request"]) == ("1234567890ab", 4014)
    assert "fail -> pass in 2 steps" in flip["commit_note"]


def test_a_bisect_that_ended_on_an_untested_commit_names_no_culprit(tmp_path):
    (tmp_path / "nightly-2026.7.9.json").write_text(json.dumps(
        {"culprit": {"sha": "1234567890ab", "subject": "x", "pull_request": None},
         "specs": {"s": {"before": "fail", "after": "not tested"}}}))
    ordered = [_source("nightly-2026.7.8", {"s": "fail"}), _source("nightly-2026.7.9", {"s": "pass"})]
    (flip,) = flips.find(ordered, tmp_path)
    assert flip["commit"] is None and "could not be tested" in flip["commit_note"]


def test_verdict_is_read_from_the_cells_and_the_site_has_no_emoji(tmp_path):
    reports = tmp_path / "reports"
    _results(reports / "upstream", "0.13.3", [_row("test_a", "pass", "0.13.3")])
    _results(reports / "upstream", "0.14.1", [_row("test_a", "fail", "0.14.1", False, "boom")])
    summary = build(reports, tmp_path / "site")
    index = (tmp_path / "site" / "index.html").read_text(encoding="utf-8")
    verdict = re.search(r"<div id='verdict'[^>]*>(.*?)</div>", index).group(1)
    assert "1 of 2 sources NOT conformant" in verdict and "0.14.1 (1 unexpected)" in verdict
    assert index.index("id='verdict'") < index.index("class='heatmap'")
    assert summary["sources"] == 2 and len(summary["flips"]) == 1
    for page in (tmp_path / "site").glob("*.html"):
        assert not EMOJI.search(page.read_text(encoding="utf-8")), page.name


def _cli(*args):
    return subprocess.run([sys.executable, "-m", "conformance.dashboard", *map(str, args)], cwd=ROOT,
                          capture_output=True, text=True, timeout=300)


def test_cli_never_empties_a_folder_it_did_not_build(tmp_path):
    precious = tmp_path / "mine"
    precious.mkdir()
    (precious / "notes.txt").write_text("keep")
    proc = _cli("-o", precious)
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1, proc.stderr
    assert "not a site built by this command" in proc.stderr
    assert (precious / "notes.txt").read_text() == "keep"


def test_cli_builds_the_checked_in_reports_within_budget(tmp_path):
    proc = _cli("-o", tmp_path / "site")
    assert proc.returncode == 0, proc.stderr
    size = sum(p.stat().st_size for p in (tmp_path / "site").rglob("*") if p.is_file())
    assert size <= 5 * 1024 * 1024
    assert _cli("-o", tmp_path / "site").returncode == 0  # its own site: rebuilt in place


def test_an_unreadable_history_file_is_named_not_silently_dropped(tmp_path):
    reports = tmp_path / "reports"
    _results(reports / "upstream", "0.14.1", [_row("test_a", "pass", "0.14.1")])
    (reports / "history").mkdir()
    (reports / "history" / "nightly-2026.7.8@x.json").write_text('{"kind": "conformance-hist')
    proc = _cli("-o", tmp_path / "site", "--reports", reports)
    assert proc.returncode == 0, proc.stderr
    assert "history file left out: nightly-2026.7.8@x.json: unreadable" in proc.stderr
    assert "History files left out" in (tmp_path / "site" / "index.html").read_text()
