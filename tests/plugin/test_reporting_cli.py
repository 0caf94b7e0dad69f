"""python -m conformance.reporting: one-line errors for bad results files, merging by run time."""

import json
import subprocess
import sys

import pytest

from tests.conftest import ROOT


def _row(outcome, nodeid="f.py::test_a[torchrl]"):
    return {"nodeid": nodeid, "area": "a", "spec": "test_a", "parameters": "",
            "implementation": "torchrl", "implementation_version": "1", "outcome": outcome,
            "expected": outcome == "pass", "message": outcome, "duration": 0.1}


def _document(started, *rows):
    return {"schema": 1, "started": started, "finished": started + 1, "rows": list(rows)}


def _cli(tmp_path, *args):
    return subprocess.run([sys.executable, "-m", "conformance.reporting", *map(str, args),
                           "-o", str(tmp_path / "out")], cwd=ROOT, capture_output=True,
                          text=True, timeout=300)


GOOD = json.dumps(_document(100.0, _row("pass")))
BAD = {
    "missing": (None, "no such results file"),
    "empty": ("", "empty file, not a results file (an interrupted run?)"),
    "truncated": (GOOD[: len(GOOD) // 2], "not valid JSON ("),
    "list": ("[1, 2]", "a JSON list, not a results object"),
    "other": (json.dumps({"name": "x", "rows": []}), "no 'schema' field"),
    "schema99": (json.dumps({**_document(1.0, _row("pass")), "schema": 99}),
                 "schema 99 is not supported (this version reads schemas 1, 2)"),
    "norows": (json.dumps(_document(1.0)), "no test results in it"),
    "badrow": (json.dumps(_document(1.0, {"nodeid": "x"})), "row 1 has no area"),
}


@pytest.mark.parametrize("case", sorted(BAD))
def test_bad_results_file_is_a_one_line_error(tmp_path, case):
    text, expected = BAD[case]
    path = tmp_path / f"{case}.json"
    if text is not None:
        path.write_text(text)
    proc = _cli(tmp_path, path)
    assert proc.returncode == 2
    assert proc.stdout == ""
    (line,) = proc.stderr.strip().splitlines()
    assert line.startswith(f"python -m conformance.reporting: error: {path}: ") and expected in line
    assert not (tmp_path / "out").exists()  # nothing written from bad input


def test_runs_are_merged_in_the_order_they_ran_not_the_argument_order(tmp_path):
    early = tmp_path / "early.json"
    late = tmp_path / "late.json"
    early.write_text(json.dumps(_document(100.0, _row("fail"))))
    late.write_text(json.dumps(_document(200.0, _row("pass"))))
    for order in ((late, early), (early, late)):
        proc = _cli(tmp_path, *order)
        assert proc.returncode == 0, proc.stderr
        csv = (tmp_path / "out" / "conformance.csv").read_text()
        assert ",pass," in csv and ",fail," not in csv, order
