"""conformance.cli: one line, with what was probably meant (the -- form, the nearest option)."""

import pytest

from conformance.console import build_parser


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
