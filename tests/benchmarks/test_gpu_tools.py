"""The GPU call's tools, on the CPU: asv's explicit environment (benchtools.gpu_asv), the
comparison of the cpu / cuda / cuda:0 runs (tools/gpu_compare.py), the trees' comparison
(tools/gpu_trees.py) and tools/gpu_run.sh's refusal without CUDA. The whole call is rehearsed
by `bash tools/gpu_run.sh --rehearse` (minutes: not a self-test)."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys

import pytest

from conformance.paths import ROOT


def _tool(name: str):
    spec = importlib.util.spec_from_file_location(name, ROOT / "tools" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# --- asv's processes get the path explicitly -------------------------------------------------

def test_asv_processes_get_the_same_path_as_asv_pythonpath():
    from benchtools import gpu_asv
    from benchtools.registry import DEVICES_VAR

    env = gpu_asv.environment("cuda", {"PYTHONPATH": os.pathsep.join(["/site", str(ROOT)]),
                                       "HOME": "/h"})
    # asv drops PYTHONPATH from the processes it starts and hands them ASV_PYTHONPATH instead
    assert env["ASV_PYTHONPATH"] == env["PYTHONPATH"] == os.pathsep.join([str(ROOT), "/site"])
    assert env[DEVICES_VAR] == "cuda" and env["HOME"] == "/h"
    assert gpu_asv.environment("cpu", {})["ASV_PYTHONPATH"] == str(ROOT)


def test_finite_points_count_numbers_not_nan_or_null(tmp_path):
    from benchtools.gpu_asv import finite_points

    commit = "c" * 40
    doc = {"result_columns": ["result", "params"],
           "results": {"a.time_x": [[1.5, None, float("nan"), 2.0], [["'r'"]]],
                       "b.track_ratio": [[None], [["'r'"]]]}}
    (tmp_path / f"{commit[:8]}-existing-py.json").write_text(json.dumps(doc))
    (tmp_path / "machine.json").write_text("{}")
    assert finite_points(tmp_path, commit) == {f"{commit[:8]}-existing-py.json": 2}


# --- the comparison of the three runs ---------------------------------------------------------

def _row(test, impl, outcome, expected=True, message="", area="prioritized_replay"):
    return {"nodeid": f"conformance/test_x.py::{test}[{impl}]", "implementation": impl,
            "area": area, "outcome": outcome, "expected": expected, "message": message}


def test_every_difference_is_listed_and_explained_by_the_first_matching_rule(tmp_path):
    compare = _tool("gpu_compare")
    cpu = [_row("a", "torchrl", "pass"), _row("b", "torchrl", "pass"), _row("c", "reference", "pass"),
           _row("d", "reference", "pass")]
    cuda = [_row("a", "torchrl", "fail", False, "AssertionError: default priority != largest"),
            _row("b", "torchrl", "pass"), _row("c", "reference", "pass"), _row("d", "reference", "pass")]
    cuda0 = [_row("a", "torchrl", "fail", False, "AssertionError: default priority != largest"),
             _row("b", "torchrl", "fail", False, "AssertionError: something new"),
             _row("c", "reference", "pass")]  # d: lost (a run stopped at its limit)
    runs = {"cpu": {"rows": cpu}, "cuda": {"rows": cuda}, "cuda0": {"rows": cuda0}}
    diff = compare.differences(runs)
    assert [(k[0].split("::")[1], k[1]) for k, _ in diff] == [
        ("d[reference]", "reference"), ("a[torchrl]", "torchrl"), ("b[torchrl]", "torchrl")]
    rules = [{"kind": "TorchRL defect", "implementation": "^torchrl$", "area": "^prioritized",
              "message": "default priority", "why": "w"}]
    by = {k[0].split("::")[1]: compare.explain(k[1], rows, rules) for k, rows in diff}
    assert by["a[torchrl]"] == "TorchRL defect (rule 1)"
    assert by["b[torchrl]"].startswith("**to classify** (a defect of TorchRL")
    assert "a run lacks this row" in by["d[reference]"]
    text = compare.section_differences(runs, rules)
    assert "(3 rows)" in text and "Of these, 2 differ between `cuda` and `cuda:0`" in text
    assert "- rule 1 (TorchRL defect" in text


def test_sections_are_replaced_between_their_markers(tmp_path):
    compare = _tool("gpu_compare")
    readme = tmp_path / "README.md"
    readme.write_text("# title\n\nkept\n")
    compare.put_section(readme, "run", "first")
    compare.put_section(readme, "run", "second")
    text = readme.read_text()
    assert text.count("<!-- gpu-compare:run -->") == 1 and "second" in text and "first" not in text
    assert text.startswith("# title\n\nkept\n")


def test_the_committed_rules_explain_every_difference_of_the_h200_run():
    # the 34 rows that differed on 2026-11-27, read by the rules written from their tracebacks
    compare = _tool("gpu_compare")
    folder = ROOT / "reports" / "gpu"
    runs = {s: json.loads((folder / f"results-{s}.json").read_text()) for s in ("cpu", "cuda")}
    if runs["cuda"].get("device", "").startswith("cuda:0"):
        pytest.skip("the committed cuda run is not the H200 run of 2026-11-27")
    rules = json.loads(compare.RULES.read_text())["rules"]
    diff = compare.differences(runs)
    if not diff:
        pytest.skip("the committed runs do not differ")
    unexplained = [k for k, rows in diff if "to classify" in compare.explain(k[1], rows, rules)]
    assert unexplained == []


# --- the trees of two builds ------------------------------------------------------------------

def test_two_builds_that_sample_differently_are_reported(capsys):
    trees = _tool("gpu_trees")
    a = {"label": "carried", "module": "a.so", "ok": True, "scan_sha256": "1" * 16,
         "checks": {"total_rel_err": 0.0}, "seconds": {"launch_floor": 1e-5}}
    assert trees.compare(a, dict(a, label="fresh")) == 0
    assert trees.compare(a, dict(a, label="fresh", scan_sha256="2" * 16)) == 1
    assert "DIFFER" in capsys.readouterr().out


def test_gpu_run_refuses_without_cuda_in_one_line():
    from benchtools.clock import cuda_available

    if cuda_available():
        pytest.skip("a GPU is present")
    env = {**os.environ, "GPU_RUN_PYTHON": sys.executable, "GPU_RUN_WORK": "/nonexistent-not-used"}
    proc = subprocess.run(["bash", str(ROOT / "tools" / "gpu_run.sh")], cwd=ROOT, env=env,
                          capture_output=True, text=True)
    assert proc.returncode == 4
    assert proc.stderr.strip().splitlines() == [
        "gpu_run: torch sees no CUDA device here; on a CPU machine run "
        "'bash tools/gpu_run.sh --rehearse'"]
