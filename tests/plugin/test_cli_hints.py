"""conformance.cli: one line, with what was probably meant (the -- form, the nearest option)."""

import pytest

from conformance.console import build_parser
from conformance.paths import ROOT


def _error(capsys, argv):
    with pytest.raises(SystemExit) as stop:
        build_parser().parse_args(argv)
    assert stop.value.code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1, err  # one line
    return err


def test_a_pytest_option_is_shown_in_the_double_dash_form(capsys):
    err = _error(capsys, ["--report-dir", "out", "-k", "ppo"])
    assert err == ("torchrl-conformance: error: unrecognized arguments: -k (pytest options go "
                   "after --: torchrl-conformance --report-dir out -- -k ppo)\n")


def test_a_typo_gets_the_nearest_option(capsys):
    assert _error(capsys, ["--report-dri", "x"]).endswith("(did you mean --report-dir?)\n")


def test_help_has_no_rst_markup():
    assert "``" not in build_parser().format_help()


def test_a_finder_that_raises_on_torchrl_is_one_line(tmp_path):
    """A site hook or broken install whose finder raises on ``torchrl``: one refusal line, no
    traceback, nothing run (found while trying a TorchRL that does not import)."""
    import os
    import subprocess
    import sys

    (tmp_path / "sitecustomize.py").write_text(
        "import sys\n"
        "class _Block:\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name.split('.')[0] == 'torchrl':\n"
        "            raise ImportError('blocked')\n"
        "sys.meta_path.insert(0, _Block())\n")
    env = {**os.environ, "PYTHONPATH": f"{tmp_path}{os.pathsep}{ROOT}"}
    proc = subprocess.run([sys.executable, "-m", "conformance.console", "--impl", "torchrl",
                           "--report-dir", str(tmp_path / "r")], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.strip().splitlines() == [
        "torchrl-conformance: error: torchrl cannot be found here: ImportError: blocked"]
    assert not (tmp_path / "r").exists()
