"""A gate never goes green on what it did not test, and never on an implementation that falls
short of the interface: each case as a user triggers it, with its exit code and one-line reason."""

from __future__ import annotations

PPO = "conformance/test_ppo_value_clipping.py"
INTERFACE = "conformance/test_interface.py"


def test_torchrl_that_does_not_import_is_not_tested_and_fails_the_run(suite, tmp_path):
    """A TorchRL checkout whose torchrl/__init__.py has a syntax error, first on the path."""
    broken = tmp_path / "checkout" / "torchrl"
    broken.mkdir(parents=True)
    (broken / "__init__.py").write_text("def broken(:\n")
    run = suite(PPO, "--impl", "torchrl", "-k", "counterexample",
                env={"PYTHONPATH": str(broken.parent)})
    assert run.returncode == 1, run.output[-2000:]
    (row,) = run.rows()
    assert row["outcome"] == "not tested" and row["expected"] is False
    assert "import torchrl failed: SyntaxError" in row["message"]
    assert "NOT TESTED: torchrl: import torchrl failed: SyntaxError" in run.output
    assert "NOT TESTED" in (tmp_path / "conformance.md").read_text()
    assert "conformant to expectations" not in (tmp_path / "conformance.md").read_text()


def test_implementation_whose_areas_all_fail_to_load_is_not_tested(suite):
    run = suite(PPO, "--impl", "tests.mutants.verdicts:NOTHING_LOADS", "-k", "counterexample")
    assert run.returncode == 1, run.output[-2000:]
    assert [r["outcome"] for r in run.rows()] == ["not tested"]


def test_object_without_any_area_is_a_usage_error(suite):
    run = suite(PPO, "--impl", "math:pi")
    assert run.returncode == 4
    lines = [line for line in run.output.splitlines() if line.strip()]
    assert len(lines) == 1 and "provides no recognised area" in lines[0], run.output
    assert "Traceback" not in run.output


def test_misspelt_area_names_the_valid_ones(suite):
    run = suite(PPO, "--impl", "tests.mutants.interface:NO_AREA")
    assert run.returncode == 4
    assert "'ppo_value_cliping', which is not an area; did you mean 'ppo_value_clipping'" in run.output
    assert "Traceback" not in run.output


def test_missing_name_is_a_usage_error(suite):
    run = suite(PPO, "--impl", "tests.mutants.interface:NO_NAME")
    assert run.returncode == 4
    assert "has no name (a non-empty str)" in run.output and "Traceback" not in run.output


def test_missing_method_is_one_failure_naming_area_and_method(suite):
    run = suite(INTERFACE, PPO, "--impl", "tests.mutants.interface:MISSING_METHOD",
                "-k", "ppo or counterexample")
    assert run.returncode == 1, run.output[-2000:]
    failed = run.rows(outcome="fail")
    assert [r["nodeid"] for r in failed] == [
        f"{INTERFACE}::test_area_satisfies_its_protocol[MISSING_METHOD-area=ppo_value_clipping]"]
    assert "ppo_value_clipping area" in failed[0]["message"]
    assert "method critic_loss() is missing" in failed[0]["message"]
    others = [r for r in run.rows() if r["nodeid"].startswith(PPO)]
    assert others and all(r["outcome"] == "not tested" for r in others)
    assert "AttributeError" not in run.output


def test_wrong_keyword_is_named(suite):
    run = suite(INTERFACE, "--impl", "tests.mutants.interface:WRONG_KEYWORD", "-k", "ppo")
    assert run.returncode == 1
    (row,) = run.rows(outcome="fail")
    assert "critic_loss() does not accept keyword 'clip_epsilon'" in row["message"]
    assert "requires 'clip_eps', which the suite never passes" in row["message"]


def test_unlisted_cannot_be_tested_here_fails_the_run(suite):
    """One area that cannot be tested here is possible, but a gate fails on it unless listed."""
    run = suite("conformance/test_prioritized_replay.py", PPO,
                "--impl", "tests.mutants.verdicts:REPLAY_UNTESTABLE",
                "-k", "counterexample or default_after_overwriting")
    assert run.returncode == 1, run.output[-2000:]
    replay = [r for r in run.rows() if "prioritized" in r["nodeid"]]
    assert replay and all(r["outcome"] == "untestable" and r["expected"] is False for r in replay)
    assert "C++ trees do not load" in replay[0]["message"]


def test_stale_expectation_under_workers_is_the_same_usage_error(suite, tmp_path):
    stale = tmp_path / "stale.txt"
    stale.write_text(f"{PPO}::test_nope | a reason | https://example.org/issue\n")
    run = suite(PPO, "--impl", "reference", "--expectations", str(stale), "-n", "1")
    assert run.returncode == 4, run.output[-2000:]
    assert "ERROR: expectations do not match the suite:" in run.output
    assert "'conformance/test_ppo_value_clipping.py::test_nope' matches no collected test" in run.output
    assert "INTERNALERROR" not in run.output
