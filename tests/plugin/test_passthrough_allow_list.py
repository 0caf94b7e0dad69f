"""The pass-through allow-list (conformance/upstream/passthrough.py) at every boundary: the
runner, the gate, the console script and the embed accept selection, verbosity, workers and
timeouts within bounds, and refuse everything else in one line naming the option (issue #44)."""

from __future__ import annotations

import pytest

from conformance.upstream import passthrough, runner
from tests.conftest import ROOT


@pytest.mark.parametrize("args, named", [
    (["--reruns=2"], "--reruns=2"), (["--reruns", "3"], "--reruns"),
    (["--log-file=README.md"], "--log-file=README.md"), (["--debug=FILE"], "--debug=FILE"),
    (["--co"], "--co"), (["--timeout=0.5", "--timeout-method=thread"], "--timeout=0.5"),
    (["-n", "99999"], "-n 99999"), (["-n", "-1"], "-n -1"), (["--numprocesses=99999"], "99999"),
    (["--spec-timeout", "nan"], "nan"), (["--spec-timeout=1e999"], "1e999"),
    (["--spec-timeout", "0"], "--spec-timeout 0"), (["-p", "rerunfailures"], "-p"),
    (["-qp", "x"], "-qp"), (["--count=5"], "--count=5"), (["-k"], "-k"),
    (["-k", "--reruns=2"], "-k --reruns=2"), (["--impl", "reference"], "--impl"),
    (["--verb"], "--verb"), (["--exitfirst=1"], "--exitfirst=1"), (["-vs"], "-vs"),
    (["--tb=evil"], "--tb evil"), (["@args.txt"], "@args.txt"), (["-W", "error"], "-W"),
    # new spellings (round four's own probes)
    (["-n", "\u00b2"], "-n \u00b2"), (["-n", "auto"], "-n auto"), (["--numprocesses=+1"], "+1"),
    (["-vk", "ppo"], "-vk"), (["-x-k"], "-x-k"), (["-m", "-p"], "-m -p"), (["--tb"], "--tb"),
    (["--durations=-1"], "-1"), (["--spec-timeout=1e-400"], "1e-400"),
    (["--spec-timeout=0x10"], "0x10"), (["--maxfail=99999999"], "99999999"),
    (["--ignore=conformance/test_x.py"], "--ignore"), (["--deselect", "x"], "--deselect"),
    (["--only-rerun", "AssertionError"], "--only-rerun"), (["--force-flaky"], "--force-flaky"),
    (["--flake-finder"], "--flake-finder"), (["--runxfail"], "--runxfail"),
    (["conformance/../../etc"], "not a path in the suite"),
])
def test_only_the_allow_list_passes_through_in_one_line_naming_the_option(args, named):
    with pytest.raises(passthrough.PassThroughError) as info:
        passthrough.check(args, ROOT)
    text = str(info.value)
    assert "\n" not in text and named in text, text


@pytest.mark.parametrize("args", [
    ["-k", "ppo and not tanh"], ["-kppo"], ["-m", "not slow"], ["-x"], ["--exitfirst"],
    ["--maxfail", "2"], ["-v"], ["-vv"], ["-q"], ["--verbose"], ["-rN"], ["-r", "fE"],
    ["--tb=short"], ["--durations=5"], ["-n", "0"], ["-n1"], ["--numprocesses=1"],
    ["--spec-timeout", "600"], ["--spec-timeout=1.5"], ["conformance/test_x.py::t[torchrl-a]"]])
def test_the_allow_list(args):
    passthrough.check(args, ROOT)


def test_the_workers_bound_is_this_machines_cpus():
    bound = passthrough.max_workers()
    passthrough.check(["-n", str(bound)], ROOT)
    with pytest.raises(passthrough.PassThroughError, match=f"from 0 to {bound}"):
        passthrough.check(["-n", str(bound + 1)], ROOT)


@pytest.mark.parametrize("pytest_args", ["--reruns=3", "--log-file=README.md", "--debug=FILE",
                                         "--co", "-x --reruns 2"])
def test_the_runner_refuses_before_anything_is_installed(pytest_args, capsys):
    """As tried: nox -s upstream -- <wheel> --pytest-args="--reruns=3" said "conformant to
    expectations" and recorded it in the history; --log-file=README.md emptied the README."""
    readme = (ROOT / "README.md").read_bytes()
    with pytest.raises(SystemExit) as info:
        runner.parse_args(["0.14.1", f"--pytest-args={pytest_args}"])
    assert info.value.code == 2
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert line.startswith("nox -s upstream --: error: --pytest-args: ")
    assert (ROOT / "README.md").read_bytes() == readme


def test_the_runner_takes_a_leading_dash_value():
    assert runner.parse_args(["0.14.1", "--pytest-args=-x"]).pytest_args == ["-x"]


def test_the_embed_refuses_another_implementation_and_reruns():
    """As tried: specs("torchrl", expectations="none", pytest_args=["--impl", "reference"]):
    495 host tests passed, from the reference, as TorchRL."""
    from conformance import embed

    for args in (["--impl", "reference"], ["--impl=reference"], ["--reruns", "2"],
                 ["--results", "x.json"], "--impl reference"):
        with pytest.raises(ValueError) as info:
            embed.specs("torchrl", expectations="none", pytest_args=args)
        assert "\n" not in str(info.value)
    embed.specs("torchrl", expectations="none", pytest_args=["--spec-timeout", "600", "-v"])


def test_the_console_refuses_bad_inputs_in_one_line_before_running(tmp_path):
    from conformance import console

    for argv, text in ((["--workers", "99999"], "--workers 99999: from 0 to"),
                       (["--workers", "-1"], "--workers -1: from 0 to"),
                       (["--impl", ""], "--impl '': names no implementation"),
                       (["--impl", " , "], "names no implementation"),
                       (["--", "--reruns=2"], "'--reruns=2' changes outcomes"),
                       (["--", "--impl", "reference"], "'--impl' is not a pass-through option")):
        args = console.build_parser().parse_args(
            ["--impl", "reference", "--report-dir", str(tmp_path / "r"), *argv])
        assert text in console.preflight(args)


@pytest.mark.slow
def test_plain_pytest_refuses_an_empty_impl_in_one_line(tmp_path):
    """As tried: --impl '' silently ran the two default implementations."""
    import subprocess
    import sys

    proc = subprocess.run([sys.executable, "-m", "pytest", "conformance", "-p", "no:cacheprovider",
                           "--impl", " , ", "--results", str(tmp_path / "r.json")], cwd=ROOT,
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 4, proc.stdout[-2000:]
    assert "--impl ' , ': names no implementation" in proc.stdout + proc.stderr
    assert not (tmp_path / "r.json").exists()


@pytest.mark.parametrize("folder", ["conformance", "docs", ".", "README.md"])
def test_the_history_dir_is_never_a_folder_of_the_project(folder, capsys):
    with pytest.raises(SystemExit) as info:
        runner.parse_args(["0.14.1", "--history-dir", str(ROOT / folder)])
    assert info.value.code == 2
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert "--history-dir" in line
