"""Choosing implementations, usage errors, the header, and the results a run leaves."""

import json

PPO = "conformance/test_ppo_value_clipping.py"


def test_unknown_implementation_is_a_one_line_usage_error(suite):
    run = suite(PPO, "--impl", "nosuch")
    assert run.returncode == 4
    errors = [line for line in run.output.splitlines() if line.strip()]
    assert errors == ["ERROR: unknown implementation 'nosuch'; choose reference, torchrl, "
                      "reference-fused, sb3, tianshou, cpprb, skrl, or pkg.module:object"], run.output
    assert "Traceback" not in run.output


def test_unloadable_module_names_the_value(suite):
    run = suite(PPO, "--impl", "reference,no_such_pkg.mod:IMPL")
    assert run.returncode == 4
    assert "no_such_pkg.mod:IMPL" in run.output and "Traceback" not in run.output


def test_environment_variable_selects_and_header_shows_versions(suite):
    run = suite(PPO, "-k", "counterexample", "-v",
                env={"TORCHRL_CONFORMANCE_IMPL": "reference"})
    assert run.returncode == 0, run.output
    assert "conformance stack: torch " in run.output and "torchrl " in run.output
    assert "implementations: reference " in run.output
    assert {r["implementation"] for r in run.rows()} == {"reference"}


def test_results_rows_carry_area_spec_parameters_and_versions(suite):
    run = suite(PPO, "--impl", "reference,torchrl", "-k", "true_means_clip_epsilon")
    assert run.returncode == 0, run.output
    rows = run.rows(implementation="torchrl")
    assert {r["parameters"] for r in rows} == {"eps=0.125", "eps=0.3"}
    row = rows[0]
    assert row["area"] == "ppo_value_clipping"
    assert row["spec"] == "test_true_means_clip_epsilon"
    assert row["outcome"] == "pass" and row["expected"] is True
    assert row["implementation_version"] == run.results["stack"]["torchrl"]
    assert row["duration"] > 0


def test_mutant_area_only_other_areas_not_applicable(suite, tmp_path):
    """An implementation that provides one area makes the others 'not applicable', not passed."""
    module = tmp_path / "only_ppo_impl.py"
    module.write_text("from types import SimpleNamespace\n"
                      "IMPL = SimpleNamespace(name='x', version='1', tanh_normal_mode=object())\n")
    run = suite(PPO, "--impl", "only_ppo_impl:IMPL", "-k", "counterexample",
                env={"PYTHONPATH": str(tmp_path)})
    assert run.returncode == 0, run.output
    assert [r["outcome"] for r in run.rows()] == ["not applicable"]
    assert "does not provide PPO value clipping" in run.rows()[0]["message"]


def test_report_is_built_next_to_the_results(suite, tmp_path):
    run = suite(PPO, "--impl", "reference", "-k", "counterexample")
    assert run.returncode == 0
    md = (tmp_path / "conformance.md").read_text()
    assert "| reference 0.1.0 |" in md and "test_baselines_counterexample" in md
    assert (tmp_path / "conformance.csv").is_file() and (tmp_path / "conformance.html").is_file()
    json.loads((tmp_path / "results.json").read_text())
