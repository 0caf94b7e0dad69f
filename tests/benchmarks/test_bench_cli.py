"""``python -m benchtools`` checks its arguments before it touches results, and replaces the last
finished run's results only when a new run has finished (not on a failure, not on Ctrl-C)."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

from benchtools import cli
from conformance.paths import ROOT


@pytest.fixture
def outputs(tmp_path, monkeypatch):
    """FULL and PARTIAL moved under tmp_path, FULL holding a finished run and its previous one."""
    full = cli.Output(tmp_path / "benchmarks.md", tmp_path / "benchmarks")
    monkeypatch.setattr(cli, "FULL", full)
    monkeypatch.setattr(cli, "PARTIAL", cli.Output(tmp_path / "partial.md", tmp_path / "partial"))
    full.folder.mkdir()
    for path, text in ((full.results, "last"), (full.previous, "before"), (full.skips, "s")):
        path.write_text(text)
    return full


def _contents(output: cli.Output) -> dict:
    return {p.name: p.read_text() for p in sorted(output.folder.iterdir())}


@pytest.mark.parametrize("argv", [["--passes", "0"], ["--max-time", "-1"], ["--max-call", "x"],
                                  ["--device", "tpu"]])
def test_bad_arguments_are_a_usage_error_that_touches_nothing(outputs, argv, capsys):
    before = _contents(outputs)
    with pytest.raises(SystemExit) as exit_info:
        cli.main(argv)
    assert exit_info.value.code == 2
    assert _contents(outputs) == before
    assert "python -m benchtools: error:" in capsys.readouterr().err


def test_an_unknown_implementation_is_one_line_and_exit_code_4(outputs, capsys):
    before = _contents(outputs)
    assert cli.main(["--impl", "nosuch"]) == 4
    assert capsys.readouterr().err.startswith("ERROR: unknown implementation 'nosuch'")
    assert _contents(outputs) == before


def test_report_only_without_results_is_one_line_and_exit_code_4(outputs, capsys):
    outputs.results.unlink()
    assert cli.main(["--report-only"]) == 4
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "no results to report from" in err[0]


def _fake_pytest(monkeypatch, body: str):
    """pytest replaced by a script that gets the new results path as argv[1]."""
    def command(args, names, results, skips):
        return [sys.executable, "-c", textwrap.dedent(body), str(results), str(skips)]
    monkeypatch.setattr(cli, "pytest_command", command)


def test_a_failed_run_keeps_the_last_finished_results(outputs, monkeypatch, capsys):
    before = _contents(outputs)
    _fake_pytest(monkeypatch, """
        import pathlib, sys
        pathlib.Path(sys.argv[1]).write_text('{"benchmarks": []}')  # half a run
        sys.exit(1)
    """)
    assert cli.main(["--impl", "reference"]) == 1
    assert "results of the last finished run are kept" in capsys.readouterr().err
    assert _contents(outputs) == before  # and no temporary file is left


def test_a_finished_run_moves_the_last_results_to_previous(outputs, monkeypatch):
    _fake_pytest(monkeypatch, """
        import pathlib, sys
        pathlib.Path(sys.argv[1]).write_text('{"benchmarks": []}')
    """)
    assert cli.measure(cli.parser().parse_args([]), ["reference"], outputs)[0] == 0
    assert _contents(outputs) == {"side_by_side.json": '{"benchmarks": []}',
                                  "side_by_side.previous.json": "last"}


@pytest.mark.slow
def test_ctrl_c_keeps_the_last_finished_results(outputs, tmp_path):
    """Ctrl-C reaches the driver while pytest runs (as a terminal sends it to the group)."""
    script = tmp_path / "drive.py"
    script.write_text(textwrap.dedent(f"""
        import sys
        from pathlib import Path
        from benchtools import cli
        cli.FULL = cli.Output(Path({str(outputs.folder.parent / 'benchmarks.md')!r}),
                              Path({str(outputs.folder)!r}))
        body = ("import os, pathlib, signal, sys, time; "
                "pathlib.Path(sys.argv[1]).write_text('half'); "
                "os.kill(os.getppid(), signal.SIGINT); time.sleep(30)")
        cli.pytest_command = lambda args, names, results, skips: [
            sys.executable, "-c", body, str(results)]
        sys.exit(cli.main(["--impl", "reference"]))
    """))
    before = _contents(outputs)
    proc = subprocess.run([sys.executable, str(script)], cwd=ROOT, capture_output=True,
                          text=True, timeout=120, env={**os.environ, "PYTHONPATH": str(ROOT)},
                          preexec_fn=_default_sigint)
    assert proc.returncode == 130, proc.stdout + proc.stderr
    assert "interrupted: the results of the last finished run are kept" in proc.stderr
    assert _contents(outputs) == before


def _default_sigint():
    # a background job inherits SIGINT ignored; a user's terminal does not
    import signal

    signal.signal(signal.SIGINT, signal.SIG_DFL)


def test_a_narrowed_run_never_replaces_the_full_report(outputs, monkeypatch):
    assert cli._output(cli.parser().parse_args(["-k", "ppo"])) is cli.PARTIAL
    assert cli._output(cli.parser().parse_args([])) is cli.FULL


def test_the_default_compares_the_fused_replay_and_a_replay_only_impl_gets_no_other_lines():
    from benchtools import cli, report

    assert cli.BENCH_DEFAULT.split(",") == ["reference", "reference-fused", "torchrl"]
    assert report.provides("reference-fused", "prioritized_replay")
    assert not report.provides("reference-fused", "tanh_normal_mode")
    assert report.provides("reference", "tanh_normal_mode")
