"""A partial or untested upstream source never replaces a stored column, the matrix or the bug
reports."""

from __future__ import annotations

import json

from conformance.plugin import completeness
from conformance.upstream import bugs, runner, sources
from conformance.verdict import Status, Verdict
from tests.rows import PY, SPECS
from tests.rows import spec_row as _row
from tests.rows import write_results as _results


def test_a_partial_upstream_run_writes_beside_the_stored_column(tmp_path, monkeypatch):
    """As tried: `nightly:2026.10.27 --only-this-run --pytest-args "-k prioritized"` replaced
    the stored nightly column and the matrix and rewrote 13 bug reports."""
    reports = tmp_path / "reports"
    (reports / "upstream").mkdir(parents=True)
    stored = _results(reports / "upstream" / "nightly-2026.10.27.json", [_row(s) for s in SPECS])
    stored_text = stored.read_text()
    (reports / "upstream.md").write_text("## stored\n\n**verdict: conformant**\n")

    def partial_check(argument, args, taken):
        path = reports / "upstream" / runner.PARTIAL_FOLDER / "nightly-2026.10.27.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        _results(path, [_row(s) for s in SPECS if "prioritized" in s])
        return "nightly-2026.10.27", Verdict(Status.PARTIAL, "PARTIAL RUN: not a conformance "
                                             "verdict"), path, {"label": "nightly-2026.10.27"}

    refreshed = []
    monkeypatch.setattr(runner, "check_source", partial_check)
    monkeypatch.setattr(runner, "_refresh_bug_reports", refreshed.append)
    monkeypatch.setenv(completeness.FLAG_ENV, str(tmp_path / "flag.txt"))
    status = runner.main(["nightly:2026.10.27", "--only-this-run", "--reports-dir",
                          str(reports), "--work-dir", str(tmp_path / "work")])
    assert status == runner.RUNNER_PARTIAL_EXIT
    assert stored.read_text() == stored_text
    assert (reports / "upstream.md").read_text().startswith("## stored")
    assert "(PARTIAL RUN)" in (reports / "upstream-partial.md").read_text()
    assert refreshed == []
    assert "PARTIAL RUN" in (tmp_path / "flag.txt").read_text()


def test_only_a_complete_run_takes_the_stored_columns_place(tmp_path):
    scratch = tmp_path / "upstream" / runner.PARTIAL_FOLDER / "0.14.1.json"
    scratch.parent.mkdir(parents=True)
    _results(scratch, [])
    assert runner._promote(scratch, False) == scratch
    assert runner._promote(scratch, True) == tmp_path / "upstream" / "0.14.1.json"


def test_a_source_that_cannot_be_installed_never_hides_a_tested_column(tmp_path, monkeypatch):
    """`nox -s upstream -- 0.14.1` offline: its NOT TESTED column goes beside the stored one."""
    reports = tmp_path / "reports"
    (reports / "upstream").mkdir(parents=True)
    stored = _results(reports / "upstream" / "0.14.1.json", [_row(s) for s in SPECS])
    text = stored.read_text()

    def offline(*args, **kwargs):
        raise sources.SourceError("pip install torchrl==0.14.1 failed: no network")

    monkeypatch.setattr(runner, "base_python", lambda torch, given: PY)
    monkeypatch.setattr(runner, "install_paired", offline)
    monkeypatch.setattr(runner.not_tested, "collect_ids", lambda args: [
        s.replace("[", "[reference-", 1) if "[" in s else f"{s}[reference]" for s in SPECS])
    args = runner.parse_args(["0.14.1", "--reports-dir", str(reports), "--work-dir",
                              str(tmp_path / "work")])
    label, verdict, results, _ = runner.check_source("0.14.1", args, set())
    assert verdict.status is Status.NOT_TESTED, verdict
    assert verdict.text.startswith("NOT TESTED: install failed"), verdict
    assert results.parent.name == runner.PARTIAL_FOLDER and stored.read_text() == text


def test_a_source_that_does_not_import_is_never_a_column(tmp_path, monkeypatch):
    """Found as an attacker: `nox -s upstream -- CHECKOUT --only-this-run` on a checkout whose
    torchrl does not import, with no stored column of its label, became a column, and the run
    replaced the committed matrix and the bug reports with a NOT TESTED one."""
    reports = tmp_path / "reports"

    def broken(*args, **kwargs):
        return None, "", "import torchrl failed: ImportError: this torchrl does not import"

    monkeypatch.setattr(runner, "base_python", lambda torch, given: PY)
    monkeypatch.setattr(runner, "install_paired", broken)
    monkeypatch.setattr(runner.not_tested, "collect_ids", lambda args: [
        s.replace("[", "[reference-", 1) if "[" in s else f"{s}[reference]" for s in SPECS])
    args = runner.parse_args(["0.14.1", "--only-this-run", "--reports-dir", str(reports),
                              "--work-dir", str(tmp_path / "work")])
    label, verdict, results, _ = runner.check_source("0.14.1", args, set())
    assert verdict.status is Status.NOT_TESTED, verdict
    assert verdict.text.startswith("NOT TESTED: import torchrl failed"), verdict
    assert results.parent.name == runner.PARTIAL_FOLDER
    assert not (reports / "upstream" / "0.14.1.json").exists()


def test_bug_reports_are_never_rewritten_from_a_partial_column(tmp_path, capsys):
    """As tried: a partial nightly run rewrote 13 committed bug reports."""
    results = tmp_path / "upstream"
    results.mkdir()
    stored = json.loads((bugs.RESULTS / f"{bugs.PINNED}.json").read_text())
    (results / f"{bugs.PINNED}.json").write_text(json.dumps({**stored,
                                                             "partial": "filtered with -k x"}))
    import shutil

    reports = shutil.copytree(bugs.BUGS, tmp_path / "bugs")  # never the committed ones
    before = {p: p.read_text() for p in reports.glob("*.md")}
    assert bugs.main(["--results", str(results), "--bugs", str(reports)]) == 2
    assert "is a partial run (filtered with -k x)" in capsys.readouterr().err
    assert {p: p.read_text() for p in reports.glob("*.md")} == before


def test_bugs_verify_refuses_narrowed_runs(tmp_path, capsys):
    """As tried: two narrowed runs were accepted ("0 other verdicts compared")."""
    narrowed = [_row(s, outcome="fail") for s in SPECS if "prioritized" in s][:3]
    patched = _results(tmp_path / "patched.json", narrowed)
    baseline = _results(tmp_path / "baseline.json", narrowed)
    assert bugs.main(["--verify", str(patched), str(baseline), "prb-max-slot-overwrite"]) == 2
    assert "a partial run cannot verify a fix" in capsys.readouterr().err
