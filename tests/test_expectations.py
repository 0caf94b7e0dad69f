"""Expectations: known failures are strict xfails; stale, unknown or malformed entries fail."""

import pytest

from conformance.plugin import expectations as exp

PPO = "conformance/test_ppo_value_clipping.py"
NEG = f"{PPO}::test_negative_clip_value_is_rejected"


def _write(tmp_path, *lines):
    path = tmp_path / "exp.txt"
    path.write_text("\n".join(["# comment", "", *lines]) + "\n")
    return path


def test_parse_requires_reason_and_link(tmp_path):
    with pytest.raises(exp.ExpectationsError, match=r"exp.txt:3: expected"):
        exp.parse(_write(tmp_path, f"{NEG} | no link"), frozenset({"torchrl"}))
    with pytest.raises(exp.ExpectationsError, match="upstream link"):
        exp.parse(_write(tmp_path, f"{NEG} | reason | not-a-url"), frozenset({"torchrl"}))
    with pytest.raises(exp.ExpectationsError, match="cannot read"):
        exp.parse(tmp_path / "missing.txt", frozenset())


def test_auto_file_for_installed_torchrl_turns_known_failure_into_xfail(suite):
    run = suite(PPO, "--impl", "torchrl", "-k", "negative")
    assert run.returncode == 0, run.output
    (row,) = run.rows()
    assert row["outcome"] == "known failure" and row["expected"] is True
    assert "clip_value is not validated" in row["message"]


def test_unexpected_pass_fails_the_run(suite, tmp_path):
    path = _write(tmp_path, f"{PPO}::test_baselines_counterexample | pretend | https://x.org/1")
    run = suite(PPO, "--impl", "reference", "--expectations", str(path), "-k", "counterexample")
    assert run.returncode == 1
    assert [r["outcome"] for r in run.rows()] == ["unexpected pass"]


def test_new_failure_fails_the_run_even_with_expectations(suite):
    run = suite(PPO, "--impl", "torchrl", "--expectations", "none", "-k", "negative")
    assert run.returncode == 1
    assert [r["outcome"] for r in run.rows()] == ["fail"]


def test_stale_entry_is_an_error_naming_file_and_line(suite, tmp_path):
    path = _write(tmp_path, f"{PPO}::test_no_such_spec | gone | https://x.org/2")
    run = suite(PPO, "--impl", "reference", "--expectations", f"reference={path}")
    assert run.returncode == 4
    assert f"{path}:3" in run.output and "matches no collected test" in run.output


def test_entry_for_missing_file_is_an_error(suite, tmp_path):
    path = _write(tmp_path, "conformance/test_nothing.py::test_x | gone | https://x.org/3")
    run = suite(PPO, "--impl", "reference", "--expectations", str(path))
    assert run.returncode == 4 and "no such test file" in run.output


def test_entry_binds_to_its_implementation_only(suite, tmp_path):
    path = _write(tmp_path, f"{NEG} | torchrl only | https://x.org/4")
    run = suite(PPO, "--impl", "reference,torchrl", "--expectations", f"torchrl={path}",
                "-k", "negative")
    assert run.returncode == 0, run.output
    assert {r["implementation"]: r["outcome"] for r in run.rows()} == {
        "reference": "pass", "torchrl": "known failure"}


def test_every_shipped_expectations_file_parses():
    files = sorted(exp.EXPECTATIONS_DIR.glob("*.txt"))
    assert files
    for path in files:
        assert exp.parse(path, frozenset({"torchrl"})), f"{path} holds no entry"
