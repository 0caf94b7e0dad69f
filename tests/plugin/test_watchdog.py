"""Every test is bounded in wall-clock time, hypothesis examples and native code included, and a
crash is one failed test: the run goes on and its results are written."""

from __future__ import annotations

import json

PPO = "conformance/test_ppo_value_clipping.py"
HANGS = "tests.mutants.hangs"


def test_hang_inside_a_hypothesis_test_is_stopped_once_not_per_example(suite):
    run = suite(PPO, "--impl", f"{HANGS}:SLEEPS", "-k", "property_matches", "--spec-timeout", "2")
    assert run.returncode == 1, run.output[-2000:]
    (row,) = run.rows()
    assert row["outcome"] == "fail" and row["message"] == "timed out after 2 s"
    # one limit for the whole test: with 60 examples restarting after each alarm it would be 120 s
    assert row["duration"] < 30, row["duration"]


def test_native_hang_kills_only_its_worker_and_the_run_goes_on(suite):
    run = suite(PPO, "--impl", f"{HANGS}:NATIVE_HANG", "-k", "counterexample or true_means",
                "--spec-timeout", "2", "-n", "1")
    assert run.returncode == 1, run.output[-2000:]
    rows = run.rows()
    assert len(rows) == 3, [r["nodeid"] for r in rows]  # every selected test has its row
    for row in rows:
        assert row["outcome"] == "fail"
        assert row["message"].startswith("timed out after 2 s (stuck outside Python"), row["message"]


def test_crash_is_one_failed_test_naming_the_signal(suite):
    run = suite(PPO, "--impl", f"{HANGS}:SEGFAULT", "-k", "counterexample", "-n", "1")
    assert run.returncode == 1, run.output[-2000:]
    (row,) = run.rows()
    assert row["outcome"] == "fail"
    assert row["message"] == "the process crashed: Segmentation fault"


def test_native_hang_without_workers_still_writes_the_results(suite, tmp_path):
    run = suite(PPO, "--impl", f"{HANGS}:NATIVE_HANG", "-k", "counterexample",
                "--spec-timeout", "2")
    assert run.returncode == 70, run.output[-2000:]
    document = json.loads((tmp_path / "results.json").read_text())
    assert document["partial"].startswith("interrupted: ")
    (row,) = document["rows"]
    assert row["outcome"] == "fail" and "stuck outside Python" in row["message"]
    assert "PARTIAL RUN" in (tmp_path / "conformance.md").read_text()


def test_bad_timeout_is_a_usage_error(suite):
    run = suite(PPO, "--impl", "reference", "--spec-timeout", "-1")
    assert run.returncode == 4 and "--spec-timeout -1: must be >= 0" in run.output
