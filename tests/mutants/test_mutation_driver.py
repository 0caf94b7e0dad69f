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


def test_a_run_of_one_area_keeps_the_results_of_the_others(tmp_path, monkeypatch):
    """Only the areas run now are read from their staging copies: another area's copy may be
    stale (an older impls/) or absent (a fresh machine), and its last results stay."""
    report = tmp_path / "mutation.json"
    kept = {"summary": {"killed": 6, "survived": 1, "not reached": 0, "timeout": 0,
                        "not run": 0, "sites": 7, "equivalent": 0, "outside": 1,
                        "unclassified": 0, "score": 85.7, "reached_score": 85.7},
            "seconds": 3.0, "mutants": []}
    areas = list(mutation.AREAS)
    report.write_text(json.dumps({"areas": {a: kept for a in areas}}))
    monkeypatch.setattr(mutation, "REPORT_JSON", report)
    monkeypatch.setattr(mutation, "REPORT_MD", tmp_path / "mutation.md")
    monkeypatch.setattr(mutation, "_mutmut_version", lambda: "mutmut test")
    read = []
    monkeypatch.setattr(mutation, "results_of", lambda area: read.append(area) or [])
    out = mutation.write_report([areas[-1]], {areas[-1]: 1.0})
    assert read == [areas[-1]]
    assert all(out["areas"][a] == kept for a in areas[:-1])
    assert out["areas"][areas[-1]]["summary"]["sites"] == 0


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


def test_the_sample_rechecks_an_unexplained_survivor_against_the_whole_area(monkeypatch):
    """mutmut's per-function test selection can miss a spec; the sample re-runs the whole
    area's specs on an unexplained survivor, and a failing spec makes it a kill."""
    from types import SimpleNamespace

    from tests.mutants import mutation_sample

    calls = []

    def fake_run(cmd, **kwargs):
        calls.append(kwargs["env"]["MUTANT_UNDER_TEST"])
        return SimpleNamespace(returncode=1 if "killed" in calls[-1] else 0, stdout="", stderr="")

    monkeypatch.setattr(mutation_sample.subprocess, "run", fake_run)
    rows = [{"key": "k1", "mutant": "m_killed", "status": mutation.SURVIVED, "class": "unclassified"},
            {"key": "k2", "mutant": "m_lives", "status": mutation.SURVIVED, "class": "unclassified"},
            {"key": "k3", "mutant": "m_known", "status": mutation.SURVIVED, "class": "outside"},
            {"key": "k4", "mutant": "m_dead", "status": mutation.KILLED}]
    mutation_sample.recheck("composite_log_prob", rows)
    assert calls == ["m_killed", "m_lives"]  # only the unexplained survivors cost a run
    assert rows[0]["status"] == mutation.KILLED and rows[0]["rechecked"]
    assert "class" not in rows[0]
    assert rows[1]["status"] == mutation.SURVIVED and rows[1]["class"] == "unclassified"
    assert mutation.summary(rows)["unclassified"] == 1
