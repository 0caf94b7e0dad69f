"""The matrix builder: unexpected results first, Markdown/HTML/CSV, atomic writes."""

import json
import os

import pytest

from conformance.files import atomic_write
from conformance.outcomes import UNEXPECTED
from conformance.reporting.matrix import build_matrix, load_rows, write_reports


def _row(nodeid, impl, outcome, version="1"):
    spec = nodeid.split("::")[1].split("[")[0]
    return {"nodeid": nodeid, "area": "a", "spec": spec, "parameters": "", "implementation": impl,
            "implementation_version": version, "outcome": outcome,
            "expected": outcome not in UNEXPECTED, "message": f"{outcome} message",
            "duration": 0.1}


@pytest.fixture
def results_file(tmp_path):
    rows = [
        _row("f.py::test_ok[reference]", "reference", "pass"),
        _row("f.py::test_ok[torchrl]", "torchrl", "pass"),
        _row("f.py::test_known[reference]", "reference", "pass"),
        _row("f.py::test_known[torchrl]", "torchrl", "known failure"),
        _row("f.py::test_bad[reference]", "reference", "pass"),
        _row("f.py::test_bad[torchrl]", "torchrl", "fail"),
        _row("f.py::test_na[reference]", "reference", "not applicable"),
    ]
    path = tmp_path / "results.json"
    path.write_text(json.dumps({"schema": 1, "started": 0.0, "finished": 1.0, "rows": rows}))
    return path


def test_unexpected_rows_come_first(results_file):
    matrix = build_matrix(load_rows([results_file]))
    assert list(matrix.index) == ["a :: test_bad", "a :: test_known", "a :: test_na", "a :: test_ok"]
    assert list(matrix.columns) == ["reference 1", "torchrl 1"]


def test_markdown_html_csv_are_written(results_file, tmp_path):
    paths = write_reports([results_file], tmp_path / "out")
    assert sorted(p.suffix for p in paths) == [".csv", ".html", ".md"]
    md = (tmp_path / "out" / "conformance.md").read_text()
    assert "**verdict: 1 unexpected result(s)**" in md
    assert md.index("test_bad") < md.index("test_ok")
    assert "❌ FAIL" in md and "🟡 known failure" in md and "➖ n/a" in md
    assert "f.py::test_bad[torchrl]" in md.split("### Unexpected results")[1]


def test_atomic_write_keeps_the_old_file_when_interrupted(tmp_path, monkeypatch):
    target = tmp_path / "report.md"
    target.write_text("old")

    def interrupted(*args):
        raise KeyboardInterrupt

    monkeypatch.setattr(os, "replace", interrupted)
    with pytest.raises(KeyboardInterrupt):
        atomic_write(target, "new")
    assert target.read_text() == "old"
    assert [p.name for p in tmp_path.iterdir()] == ["report.md"]  # no temporary left behind


def test_later_run_replaces_earlier_row(results_file, tmp_path):
    later = tmp_path / "later.json"
    later.write_text(json.dumps({"started": 2.0,  # ran after results_file (started 0.0)
                                 "rows": [_row("f.py::test_bad[torchrl]", "torchrl", "pass")]}))
    matrix = build_matrix(load_rows([results_file, later]))
    assert matrix.loc["a :: test_bad", "torchrl 1"] == "pass"


def test_cli_builds_from_results(results_file, tmp_path):
    from conformance.reporting.__main__ import main

    assert main([str(results_file), "-o", str(tmp_path / "cli"), "--stem", "m"]) == 0
    assert (tmp_path / "cli" / "m.md").is_file()


def test_atomic_write_follows_the_umask(tmp_path):
    old = os.umask(0o022)
    try:
        atomic_write(tmp_path / "r.md", "x")
    finally:
        os.umask(old)
    assert (tmp_path / "r.md").stat().st_mode & 0o777 == 0o644


def test_html_report_opens_with_the_verdict_and_needs_no_emoji_font(results_file, tmp_path):
    import re

    write_reports([results_file], tmp_path / "out")
    page = (tmp_path / "out" / "conformance.html").read_text()
    verdict = re.search(r"<p id='verdict' class='([^']*)'>(.*?)</p>", page)
    assert verdict and verdict.group(1) == "verdict bad"
    assert verdict.group(2) == "<strong>gate verdict:</strong> NOT CONFORMANT: 1 unexpected result(s)"
    assert page.index("id='verdict'") < page.index("<table")
    assert "<td class='s-bad'>FAIL</td>" in page and "<td class='s-known'>known failure</td>" in page
    assert not re.search("[\u2600-\u27bf\U0001f300-\U0001faff]", page), "an emoji in the HTML report"
