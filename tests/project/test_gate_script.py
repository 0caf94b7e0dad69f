""".ci/gate.sh (issue #22, item 1): it always tests the caller's source with the caller's
expectations; IMPL is a trimmed list that must name torchrl; a partial run exits 3.

A shim `python` on PATH stands in for `python -m nox ...`: it records each command, and for the
runs that matter it runs the real runner on a fake caller checkout."""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from conformance.upstream import runner, sources
from conformance.upstream.environment import content_key
from tests.conftest import ROOT

GATE = ROOT / ".ci" / "gate.sh"
SITE_TORCHRL = Path(__import__("torchrl").__file__).parent
SPEC_FILES = sorted(p.relative_to(ROOT).as_posix() for p in (ROOT / "conformance").glob("test_*.py")
                    if p.name != "test_interface.py")


def _caller(tmp_path: Path, init: str) -> Path:
    caller = tmp_path / "caller"
    (caller / "torchrl").mkdir(parents=True)
    (caller / "version.txt").write_text("0.14.1\n")
    (caller / "torchrl" / "__init__.py").write_text(init)
    (caller / ".github").mkdir()
    (caller / ".github" / "exp.txt").write_text("# the caller's own expectations: none\n")
    return caller


def _working_init() -> str:
    """The installed torchrl 0.14.1, loaded as the checkout's own package."""
    return (f"__path__ = [{str(SITE_TORCHRL)!r}]\n"
            f"exec(compile(open(__path__[0] + '/__init__.py').read(), "
            f"__path__[0] + '/__init__.py', 'exec'))\n")


def _gate(tmp_path, *, real_upstream=False, **env):
    """Run gate.sh; the shim logs every `python` command to calls.txt and runs the upstream
    session for real when asked (the conformance session is only logged)."""
    fake = tmp_path / "bin"
    fake.mkdir(exist_ok=True)
    log = tmp_path / "calls.txt"
    upstream = (f'exec {sys.executable} -m conformance.upstream.runner --base 2.14.1={sys.executable} '
                f'--work-dir {tmp_path / "work"} "$@"' if real_upstream else "exit 0")
    (fake / "python").write_text(
        "#!/usr/bin/env bash\n"
        # the gate's own checks (pass-through arguments, GATE_REPORTS) run for real
        f'if [[ "$1" == -m && "$2" == conformance.* ]]; then exec {sys.executable} "$@"; fi\n'
        f'printf "%q " "$@" >> {log}; echo >> {log}\n'
        f'echo "${{PYTEST_ADDOPTS-unset}} ${{PYTEST_PLUGINS-unset}}" >> {tmp_path / "env.txt"}\n'
        'if [[ "$1 $2 $3 $4 $5" == "-m nox -s upstream --" ]]; then shift 5; '
        f'{upstream}; fi\n'
        "exit 0\n")
    (fake / "python").chmod(0o755)
    # the checkout's dependencies, as if installed (keyed by content: the requirements)
    deps = sources.Checkout("caller", "0.14.1")
    cached = tmp_path / "work" / f"0.14.1-deps-{content_key([deps.tensordict, *deps.helpers])}"
    cached.mkdir(parents=True, exist_ok=True)
    (cached / ".installed").write_text("")
    full = {**os.environ, "PATH": f"{fake}{os.pathsep}{os.environ['PATH']}", "PIP_NO_INDEX": "1",
            "PYTHONPATH": str(ROOT), "CALLER_DIR": str(tmp_path / "caller"),
            "GATE_REPORTS": str(tmp_path / "out"), "TORCHRL_REF": "my-branch", "IMPL": "torchrl",
            "EXPECTATIONS_FILE": "", "PYTEST_ARGS": "", **env}
    proc = subprocess.run(["bash", str(GATE)], env=full, cwd=ROOT, capture_output=True,
                          text=True, timeout=900)
    calls = [shlex.split(line) for line in log.read_text().splitlines()] if log.exists() else []
    return proc, calls


@pytest.mark.parametrize("impl", ["torchrl,reference", " torchrl", "reference , torchrl ,",
                                  "torchrl,torchrl,reference,reference"])
def test_the_callers_source_and_expectations_are_always_what_is_gated(tmp_path, impl):
    """As tried: with impl 'torchrl,reference' or ' torchrl' the gate ran the suite's pinned
    torchrl 0.14.1, dropping TORCHRL_REF and the expectations file."""
    _caller(tmp_path, "")
    proc, calls = _gate(tmp_path, IMPL=impl, EXPECTATIONS_FILE=".github/exp.txt",
                        PYTEST_ARGS="-k 'ppo and not tanh'")
    assert proc.returncode == 0, proc.stderr
    out, caller = tmp_path / "out", tmp_path / "caller"
    upstream = ["-m", "nox", "-s", "upstream", "--", str(caller), "--only-this-run",
                "--expectations", f"{caller}/.github/exp.txt",
                "--pytest-args=-k 'ppo and not tanh'", "--reports-dir", str(out)]
    assert calls[0] == upstream
    runner.parse_args(upstream[5:])  # the runner accepts exactly this
    beside = [["-m", "nox", "-s", "conformance", "--", "--impl", "reference",
               "--require-complete", "--results", f"{out}/conformance.json", "-k",
               "ppo and not tanh"]]
    assert calls[1:] == (beside if "reference" in impl else [])


@pytest.mark.parametrize("impl", ["reference", "", " , ", "torchrl2,reference"])
def test_a_list_without_torchrl_is_a_one_line_usage_error(tmp_path, impl):
    _caller(tmp_path, "")
    proc, calls = _gate(tmp_path, IMPL=impl) if impl else _gate(tmp_path, IMPL=" , ")
    assert proc.returncode == 2 and calls == []
    assert proc.stderr.strip().splitlines() == [
        f"gate.sh: IMPL='{impl or ' , '}' does not name torchrl: this workflow gates the caller's "
        "TorchRL; list what runs beside it, e.g. 'torchrl, reference'"]


def test_a_release_tests_that_release_and_bad_inputs_are_one_line(tmp_path):
    _caller(tmp_path, "")
    proc, calls = _gate(tmp_path, TORCHRL_REF="0.14.1")
    assert proc.returncode == 0 and calls[0][5:7] == ["0.14.1", "--only-this-run"]
    for env, message in (
            ({"TORCHRL_REF": ""}, "TORCHRL_REF is not set"),
            ({"EXPECTATIONS_FILE": "nope.txt"}, "EXPECTATIONS_FILE=nope.txt: no such file"),
            ({"PYTEST_ARGS": "-k 'ppo"}, "PYTEST_ARGS has unbalanced quotes"),
            ({"CALLER_DIR": str(tmp_path)}, "is not a TorchRL checkout")):
        proc, _ = _gate(tmp_path, **env)
        assert proc.returncode == 2 and len(proc.stderr.strip().splitlines()) == 1, proc.stderr
        assert message in proc.stderr


@pytest.mark.slow
def test_a_caller_whose_torchrl_does_not_import_fails_with_reference_beside(tmp_path):
    """As tried: impl 'torchrl,reference' with a caller whose torchrl/__init__.py raises
    ImportError gave '294 passed, 76 xfailed', exit 0."""
    _caller(tmp_path, "raise ImportError('broken by this pull request')\n")
    proc, calls = _gate(tmp_path, real_upstream=True, IMPL="torchrl,reference")
    assert proc.returncode == 1, proc.stdout[-2000:] + proc.stderr
    assert "torchrl 0.14.1+checkout: NOT TESTED: import torchrl failed: ImportError: broken by " \
           "this pull request" in proc.stderr
    # nothing ran on the torchrl under test: its matrix is no verdict, named so (the job
    # summary shows it); the stored-matrix name is never written
    assert not (tmp_path / "out" / "upstream.md").exists()
    md = (tmp_path / "out" / "upstream-partial.md").read_text()
    assert "NOT TESTED" in md and "earlier run" not in md  # this run's column only


@pytest.mark.slow
@pytest.mark.parametrize("pytest_args", [
    "conformance/test_ppo_value_clipping.py", "-k counterexample"])
def test_a_narrowed_run_of_a_working_torchrl_exits_3(tmp_path, pytest_args):
    """As tried: --pytest-args '--ignore=...' over the five spec files gave 'conformant to
    expectations: 6 pass', exit 0 (--ignore is now off the allow-list: refused in one line); '-k counterexample' said PARTIAL RUN and exited 0."""
    _caller(tmp_path, _working_init())
    proc, _ = _gate(tmp_path, real_upstream=True, PYTEST_ARGS=pytest_args)
    assert proc.returncode == 3, proc.stdout[-3000:] + proc.stderr
    assert "gate.sh: PARTIAL RUN, not a verdict:" in proc.stderr
    assert "torchrl 0.14.1+checkout: PARTIAL RUN" in proc.stderr


def test_the_workflow_checks_out_release_tags_and_publishes_only_this_runs_reports():
    """Read, not run: release mode checked the caller out at '0.14.1' (pytorch/rl's tags are
    v0.14.1); the summary printed the committed reports/upstream.md as if this run wrote it."""
    text = (ROOT / ".github" / "workflows" / "torchrl-conformance.yml").read_text()
    steps = yaml.safe_load(text)["jobs"]["conformance"]["steps"]
    (ref_step,) = [s for s in steps if s.get("id") == "ref"]
    for ref, expected in (("0.14.1", "v0.14.1"), ("abc123", "abc123"), ("v0.14.1", "v0.14.1")):
        out = subprocess.run(["bash", "-c", ref_step["run"]], capture_output=True, text=True,
                             env={**os.environ, "REF": ref, "GITHUB_OUTPUT": "/dev/stdout"})
        assert out.stdout.strip() == f"checkout={expected}"
    checkout = [s for s in steps if s.get("with", {}).get("path") == "caller"][0]
    assert checkout["with"]["ref"] == "${{ steps.ref.outputs.checkout }}"
    publish = " ".join(str(s.get("run", "")) + str(s.get("with", {}).get("path", ""))
                       for s in steps if s.get("if") == "always()")
    assert "reports/gate/" in publish and "reports/upstream.md" not in publish.replace(
        "reports/gate/upstream.md", "")


@pytest.mark.parametrize("pytest_args", [
    "--impl reference", "--impl=reference", "--results reports/upstream.json",
    "-p no:conformance-results", "-pno:conformance-isolation", "-qp no:x",
    "-o python_files=test_ppo_value_clipping.py", "-o python_functions=test_baselines*",
    "-c other.ini --rootdir .", "--confcutdir=/", "--noconftest", "--override-ini=x=y",
    "--expectations none", "--device cpu", "--spec-timeout 0", "tests/", "/tmp",
    "conformance/../tests",
    # round four (allow-list): outcome-changing plug-ins, files written, abbreviations, bounds
    "--reruns=3", "--reruns 2 -k ppo", "--log-file=README.md", "-k test_interface --log-file=README.md",
    "--debug=FILE", "--debug", "--co", "--collect-only", "--timeout=0.5 --timeout-method=thread",
    "-n 99999", "-n -1", "--numprocesses=99999", "--spec-timeout nan", "--spec-timeout=inf",
    "-p rerunfailures", "--count=3", "-k", "--junit-xml=README.md", "--lf", "-s",
    " ".join(f"--ignore={f}" for f in SPEC_FILES), "--deselect conformance/test_x.py::t"])
def test_arguments_the_gate_owns_are_refused_in_one_line_before_anything_runs(tmp_path,
                                                                             pytest_args):
    """As tried: PYTEST_ARGS="--impl reference" labelled 257 reference rows 'torchrl 0.14.1',
    conformant, exit 0; -o python_files=..., -c other.ini --rootdir . ran 15 of 257 specs."""
    _caller(tmp_path, "")
    proc, calls = _gate(tmp_path, TORCHRL_REF="0.14.1", PYTEST_ARGS=pytest_args)
    assert proc.returncode == 2 and calls == [], proc.stderr
    (line,) = proc.stderr.strip().splitlines()
    assert line.startswith("gate.sh: PYTEST_ARGS: "), line


def test_pytest_args_starting_with_a_dash_reach_the_runner_as_one_value(tmp_path):
    """As tried: PYTEST_ARGS=-x through the gate said "--pytest-args: expected one argument"."""
    _caller(tmp_path, "")
    proc, calls = _gate(tmp_path, TORCHRL_REF="0.14.1", PYTEST_ARGS="-x")
    assert proc.returncode == 0, proc.stderr
    assert "--pytest-args=-x" in calls[0]
    assert runner.parse_args(calls[0][5:]).pytest_args == ["-x"]


@pytest.mark.parametrize("folder", ["reports", ".", "..", "conformance", "reports/upstream",
                                    "caller"])
def test_gate_reports_must_be_a_folder_of_the_gates_own(tmp_path, folder):
    """As tried: GATE_REPORTS=reports deleted the committed reports/."""
    _caller(tmp_path, "")
    (tmp_path / "caller" / "keep.txt").write_text("the caller's")
    where = str(tmp_path / "caller") if folder == "caller" else folder
    proc, calls = _gate(tmp_path, TORCHRL_REF="0.14.1", GATE_REPORTS=where)
    assert proc.returncode == 2 and calls == [], proc.stderr
    (line,) = proc.stderr.strip().splitlines()
    assert line.startswith("gate.sh: GATE_REPORTS="), line
    assert (ROOT / "reports" / "upstream.md").is_file()
    assert (tmp_path / "caller" / "keep.txt").is_file()


def test_a_gate_folder_of_its_own_is_emptied_and_reused(tmp_path):
    _caller(tmp_path, "")
    for _ in range(2):  # the second run finds the gate's mark and may empty it
        proc, calls = _gate(tmp_path, TORCHRL_REF="0.14.1")
        assert proc.returncode == 0, proc.stderr
        (tmp_path / "out" / "stale.json").write_text("{}")
    assert (tmp_path / "out" / ".gate-reports").is_file()


def test_pytest_options_from_the_environment_never_reach_the_runs(tmp_path):
    """As tried: `pytest conformance --require-complete` with -o python_files=... in
    PYTEST_ADDOPTS ran 15 of 257 specs and exited 0."""
    _caller(tmp_path, "")
    proc, calls = _gate(tmp_path, TORCHRL_REF="0.14.1", IMPL="torchrl,reference",
                        PYTEST_ADDOPTS="--impl reference -o python_files=test_ppo.py",
                        PYTEST_PLUGINS="evil")
    assert proc.returncode == 0 and len(calls) == 2, proc.stderr
    assert (tmp_path / "env.txt").read_text().splitlines() == ["unset unset"] * 2
