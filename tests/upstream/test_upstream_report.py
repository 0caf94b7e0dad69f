"""nox -s upstream: the timeline computed from the matrix, the per-source records, and the merge
of per-source results from several machines (the fan-out workflow's merge job, run as is)."""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
from pathlib import Path

import yaml

from conformance import record
from conformance.paths import ROOT
from conformance.upstream import report, timeline

WORKFLOW = ROOT / ".github" / "workflows" / "upstream-matrix.yml"
SPEC = "conformance/test_prioritized_replay.py"
DOUBLE = ("double transform of the default priority", "https://github.com/pytorch/rl/pull/3925")
RESET = ("max slot overwrite falls back to 1.0", "https://github.com/pytorch/rl/pull/2215")


def _row(version, spec, outcome, bug=None, params=""):
    message = "AssertionError: x" if outcome != "pass" else ""
    nodeid = f"{SPEC}::{spec}[torchrl{'-' + params if params else ''}]"
    # a known failure's expectation is a pair of fields of its row (results schema 2)
    return {"nodeid": nodeid, "area": "prioritized_replay", "spec": spec, "parameters": params,
            "implementation": "torchrl", "implementation_version": version, "outcome": outcome,
            "expected": outcome != "fail", "message": message, "duration": 0.1,
            "reason": bug[0] if bug else None, "link": bug[1] if bug else None, "defect": None}


def _matrix():
    """Three releases: the double transform in 0.5.0 and 0.12.0, fixed in 0.13.3; the reset in
    every release; 0.4.0 cannot test the replay specs."""
    columns = {
        "0.4.0": [_row("0.4.0", "test_tree_holds_the_transformed_priority_once", "untestable", params="alpha=0.3"),
                  _row("0.4.0", "test_default_after_overwrite", "untestable")],
        "0.5.0": [_row("0.5.0", "test_tree_holds_the_transformed_priority_once", "known failure", DOUBLE, "alpha=0.3"),
                  _row("0.5.0", "test_default_after_overwrite", "known failure", RESET)],
        "0.12.0": [_row("0.12.0", "test_tree_holds_the_transformed_priority_once", "known failure", DOUBLE, "alpha=0.3"),
                   _row("0.12.0", "test_default_after_overwrite", "known failure", RESET)],
        "0.13.3": [_row("0.13.3", "test_tree_holds_the_transformed_priority_once", "pass", params="alpha=0.3"),
                   _row("0.13.3", "test_default_after_overwrite", "known failure", RESET),
                   _row("0.13.3", "test_new_spec", "fail")],
    }
    return columns


def _order(*labels: str) -> dict[str, tuple]:
    """The column order of releases, as their documents' source descriptions give it."""
    return {label: record.source_order(record.describe("release", label, label)) for label in labels}


def test_timeline_gives_first_and_last_release_and_the_fix():
    rows = [r for column in _matrix().values() for r in column]
    order = _order("0.4.0", "0.5.0", "0.12.0", "0.13.3")
    columns, bugs, _ = timeline.compute(list(reversed(rows)), order)  # order: the versions'
    assert columns == ["0.4.0", "0.5.0", "0.12.0", "0.13.3"]
    text = "\n".join(timeline.render(rows, order))
    assert (f"| {DOUBLE[0]} | prioritized_replay | 1 | 0.5.0–0.12.0 | 0.13.3 | {DOUBLE[1]} |"
            in text)
    assert f"| {RESET[0]} | prioritized_replay | 1 | 0.5.0–0.13.3 | not fixed (still in 0.13.3) |" in text
    assert "failure without an expectations entry: prioritized_replay :: test_new_spec" in text


def test_timeline_says_when_the_next_release_could_not_test_the_specs():
    rows = [_row("0.5.0", "test_x", "known failure", DOUBLE), _row("0.6.0", "test_x", "untestable"),
            _row("0.7.2", "test_x", "pass")]
    text = "\n".join(timeline.render(rows, _order("0.5.0", "0.6.0", "0.7.2")))
    assert "| 0.5.0 | not tested after 0.5.0 (0.6.0: untestable) |" in text


def test_sources_order_by_version_then_nightlies_by_day():
    """One order (packaging's versions, a nightly's day), from the fields a document records."""
    described = [record.describe("release", "0.14.1", "0.14.1"),
                 record.describe("nightly", "nightly-2027.10.1", "2027.10.1", date="2027-10-01"),
                 record.describe("release", "0.4.0", "0.4.0"),
                 record.describe("git", "0.14.0+git.abc1234", "0.14.0", commit="abc1234" * 5),
                 record.describe("nightly", "nightly-2027.9.30", "2027.9.30", date="2027-09-30"),
                 record.describe("checkout", "0.14.0+checkout", "0.14.0"),
                 record.describe("release", "0.10.1", "0.10.1"),
                 record.describe("installed", "abc", "abc"),
                 record.describe("release", "0.14.0", "0.14.0")]
    assert [d["label"] for d in sorted(described, key=record.source_order)] == [
        "0.4.0", "0.10.1", "0.14.0", "0.14.0+checkout", "0.14.0+git.abc1234", "0.14.1",
        "nightly-2027.9.30", "nightly-2027.10.1", "abc"]


def _write_source(directory: Path, version: str, rows: list[dict], trees: str) -> Path:
    results = directory / f"{version}.json"
    results.parent.mkdir(parents=True, exist_ok=True)
    # jobs run in any order: here the newest release ran first, its column must still be last
    started = 1_800_000_000.0 - sum(int(x) * 1000 ** (2 - i) for i, x in enumerate(version.split(".")))
    results.write_text(json.dumps({"schema": 1, "started": started, "finished": started + 1,
                                   "rows": rows,
                                   "implementations": {"torchrl": version},
                                   "stack": {"torch": "2.13.0"}}))
    report.write_record(results, {"label": version, "status": "tested", "torch": "2.13.0",
                                  "trees": trees, "outcomes": "1 pass", "install_s": 1.0,
                                  "trees_s": 40.0, "tests_s": 60.0, "total_s": 101.0})
    return results


def _releases() -> list[str]:
    """noxfile.RELEASES, read without importing nox."""
    tree = ast.parse((ROOT / "noxfile.py").read_text())
    node = next(n for n in tree.body if isinstance(n, ast.Assign)
                and getattr(n.targets[0], "id", None) == "RELEASES")
    return ast.literal_eval(node.value)


def _merge_script() -> str:
    jobs = yaml.safe_load(WORKFLOW.read_text())["jobs"]
    steps = [s for s in jobs["merge"]["steps"] if "conformance.reporting" in s.get("run", "")]
    assert len(steps) == 1, "the merge job runs python -m conformance.reporting once"
    return steps[0]["run"]


def test_workflow_fans_out_one_job_per_source_with_its_own_cache():
    data = yaml.safe_load(WORKFLOW.read_text())
    job = data["jobs"]["source"]
    sources = job["strategy"]["matrix"]["source"]
    assert sources == [*_releases(), "main"]
    assert job["strategy"]["fail-fast"] is False
    caches = [s for s in job["steps"] if str(s.get("uses", "")).startswith("actions/cache")]
    assert caches and "matrix.source" in caches[0]["with"]["key"]
    assert data["jobs"]["merge"]["needs"] == "source" and data["jobs"]["merge"]["if"] == "always()"


def test_merge_job_builds_one_report_from_per_source_results(tmp_path):
    """The merge step of the workflow, run as written, on results downloaded from three jobs."""
    merged = tmp_path / "reports" / "upstream"
    for version, rows in _matrix().items():
        _write_source(merged, version, rows, f"built from torchrl/csrc at tag v{version}")
    shim = tmp_path / "bin" / "python"
    shim.parent.mkdir()
    shim.write_text(f'#!/bin/sh\nexec "{sys.executable}" "$@"\n')
    shim.chmod(0o755)
    env = {**os.environ, "PATH": f"{shim.parent}{os.pathsep}{os.environ['PATH']}",
           "PYTHONPATH": str(ROOT)}
    proc = subprocess.run(["bash", "-euo", "pipefail", "-c", _merge_script()], cwd=tmp_path,
                          env=env, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    md = (tmp_path / "reports" / "upstream.md").read_text()
    assert md.startswith("## TorchRL conformance by release\n")
    # every source is a column, in version order (0.12.0 after 0.5.0, not before)
    header = next(line for line in md.splitlines() if line.startswith("| spec |"))
    assert header == "| spec | torchrl 0.4.0 | torchrl 0.5.0 | torchrl 0.12.0 | torchrl 0.13.3 |"
    # the sections of the upstream report come right after the verdict, as in a local run
    verdict = md.index("**verdict")
    assert verdict < md.index("### Sources") < md.index("### Timeline") < md.index("### Matrix")
    assert "| torchrl 0.5.0 | tested | 2.13.0 |  | built from torchrl/csrc at tag v0.5.0 |" in md
    assert "| 0.5.0–0.12.0 | 0.13.3 |" in md
    assert (tmp_path / "reports" / "upstream.html").is_file()
    assert (tmp_path / "reports" / "upstream.csv").is_file()


def test_disk_lines_add_up_the_folders(tmp_path):
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "f").write_bytes(b"x" * 2_000_000)
    (tmp_path / "b").mkdir()
    lines = report.disk_lines([tmp_path / "a", tmp_path / "b", tmp_path / "missing"])
    assert lines[0] == "Disk used by the environments of this run: 0.0 GB"
    assert "- a: 0.00 GB" in lines and "- b: 0.00 GB" in lines and len(lines) == 5
