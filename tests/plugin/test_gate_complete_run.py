"""Only a complete run can turn a gate green (issue #22, item 2): every narrowing option makes a
run partial; under --require-complete a partial run exits 6; the suite's plug-ins stay on."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from conformance.plugin import completeness
from conformance.upstream import runner
from tests.conftest import ROOT, run_suite

PPO = "conformance/test_ppo_value_clipping.py"
BROKEN_TORCHRL = {"PYTHONPATH": f"{ROOT / 'tests' / 'leaks' / 'broken_torchrl'}:{ROOT}"}


def _config(args=("conformance",), **options):
    defaults = {"keyword": "", "markexpr": "", "maxfail": 0, "help": False}
    return SimpleNamespace(option=SimpleNamespace(**{**defaults, **options}), args=list(args),
                           rootpath=ROOT, invocation_params=SimpleNamespace(dir=ROOT))


@pytest.mark.parametrize("options, reason", [
    ({"keyword": "ppo"}, "filtered with -k 'ppo'"),
    ({"markexpr": "slow"}, "filtered with -m 'slow'"),
    ({"ignore": ["conformance/test_x.py"]}, "--ignore conformance/test_x.py"),
    ({"ignore_glob": ["*ppo*"]}, "--ignore-glob *ppo*"),
    ({"deselect": ["conformance/test_x.py::t"]}, "--deselect conformance/test_x.py::t"),
    ({"lf": True}, "--lf"), ({"failedfirst": True}, "--ff"), ({"stepwise": True}, "--sw"),
    ({"maxfail": 1}, "may stop early (--maxfail 1)"),
    ({"collectonly": True}, "--collect-only"), ({"setuponly": True}, "--setup-only"),
    ({"setupplan": True}, "--setup-plan"), ({"showfixtures": True}, "--fixtures"),
    ({"show_fixtures_per_test": True}, "--fixtures-per-test"), ({"help": True}, "--help"),
    ({"runxfail": True}, "--runxfail (known failures are not checked as such)"),
])
def test_every_narrowing_option_makes_the_run_partial(options, reason):
    assert completeness.option_reasons(_config(**options)) == [reason]


def test_node_ids_and_sub_paths_are_partial_the_whole_suite_is_not():
    assert completeness.option_reasons(_config()) == []
    assert completeness.option_reasons(_config(args=[str(ROOT)])) == []
    assert completeness.option_reasons(_config(args=[PPO])) == [f"selected: {PPO}"]
    node = f"{PPO}::test_negative_clip_value_is_rejected"
    assert completeness.option_reasons(_config(args=[node])) == [f"selected: {node}"]


def test_plain_narrowed_run_passes_but_says_partial_in_its_last_line(suite):
    run = suite(PPO, "--impl", "reference", "-k", "counterexample")
    assert run.returncode == 0, run.output[-2000:]
    assert run.output.strip().splitlines()[-1].startswith("PARTIAL RUN (filtered with -k")


@pytest.mark.slow
@pytest.mark.parametrize("narrowing", [
    ["-k", "counterexample"], ["--co"], ["--help"], ["--setup-only"], ["--fixtures"],
    ["-x", "-k", "counterexample"], ["--runxfail", "-k", "counterexample"],
])
def test_a_gate_run_that_is_partial_exits_6(tmp_path, narrowing):
    """As tried: in the gate's conformance branch --co, --help, --setup-only and --fixtures
    exited 0 with nothing tested."""
    run = run_suite(tmp_path, "conformance", "--impl", "reference", "--require-complete",
                    *narrowing)
    assert run.returncode == completeness.PARTIAL_EXIT == 6, run.output[-2000:]
    assert "PARTIAL RUN (" in run.output.strip().splitlines()[-1]


@pytest.mark.slow
@pytest.mark.parametrize("plugin", ["conformance-results", "conformance-watchdog",
                                    "conformance-isolation", "conformance-expectations"])
def test_the_suites_own_plugins_cannot_be_disabled(tmp_path, plugin):
    """As tried: -p no:conformance-results with a TorchRL that does not import gave
    '185 skipped', exit 0; -p no:conformance-watchdog removed the hang limit."""
    run = run_suite(tmp_path, "conformance", "--impl", "torchrl", "-p", f"no:{plugin}",
                    env=BROKEN_TORCHRL)
    assert run.returncode == 4, run.output[-2000:]
    assert f"ERROR: -p no:{plugin}: the suite's own plug-ins cannot be disabled" in run.output
    assert "skipped" not in run.output and run.results is None


@pytest.mark.slow
def test_the_partial_flag_file_gets_the_reason(tmp_path):
    flag = tmp_path / "partial.txt"
    run = run_suite(tmp_path, PPO, "--impl", "reference", "-k", "counterexample",
                    env={completeness.FLAG_ENV: str(flag)})
    assert run.returncode == 0 and not flag.exists()  # only gate runs leave the flag
    run = run_suite(tmp_path, PPO, "--impl", "reference", "-k", "counterexample",
                    "--require-complete", env={completeness.FLAG_ENV: str(flag)})
    assert run.returncode == 6
    assert flag.read_text().startswith("filtered with -k 'counterexample'")


def test_the_runner_asks_for_a_complete_run_and_a_partial_one_is_no_verdict(monkeypatch, tmp_path):
    seen = {}

    def fake_run(args, **kwargs):
        seen["args"] = args
        return SimpleNamespace(returncode=completeness.PARTIAL_EXIT)

    monkeypatch.setattr(runner.subprocess, "run", fake_run)
    source = SimpleNamespace(kind="release")
    code = runner.run_source(source, "0.14.1", "python", "", [], ["-k", "x"], tmp_path / "r.json")
    assert "--require-complete" in seen["args"] and code == 6
    rows = [{"outcome": "pass", "expected": True, "message": ""}]
    passed, text = runner.verdict(rows, completeness.PARTIAL_EXIT)
    assert not passed and text.startswith("PARTIAL RUN")
