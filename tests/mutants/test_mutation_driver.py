"""The mutation driver's bookkeeping (tests/mutants/mutation.py), without running mutmut."""

import json

from tests.mutants import mutation


def test_a_run_of_one_area_keeps_the_seconds_of_the_others(tmp_path, monkeypatch):
    report = tmp_path / "mutation.json"
    report.write_text(json.dumps({"areas": {"a": {"seconds": 10.0}, "b": {"seconds": 20.0},
                                            "c": {"seconds": None}}}))
    monkeypatch.setattr(mutation, "REPORT_JSON", report)
    assert mutation._kept_seconds({"b": 5.0}) == {"a": 10.0, "b": 5.0}
    # a partial (--only) run of b: its time is unknown, not the last full run's
    assert mutation._kept_seconds({"b": None}) == {"a": 10.0, "b": None}


def test_no_earlier_report_keeps_nothing(tmp_path, monkeypatch):
    monkeypatch.setattr(mutation, "REPORT_JSON", tmp_path / "absent.json")
    assert mutation._kept_seconds({"b": 5.0}) == {"b": 5.0}


def test_only_needs_one_area(capsys):
    try:
        mutation.main(["--only", "x*"])
    except SystemExit as stop:
        assert stop.code == 2
    else:
        raise AssertionError("--only without --area ran")
    assert "--only needs exactly one --area" in capsys.readouterr().err
