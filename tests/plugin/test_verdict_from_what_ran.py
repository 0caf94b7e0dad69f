"""Issue #30 (the gate, round three): a verdict from what ran, not from the flags it was given.

One test per case of the issue's "Why", tried as written where it is cheap, at the unit the
case goes through otherwise (the whole-suite spellings are in the slow tests at the end).
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conformance import device, manifest
from conformance.plugin import completeness, pattern_budget, watchdog
from conformance.plugin.expectation_file import ExpectationsError, parse
from conformance.plugin.results import encodable
from conformance.reporting import destination
from conformance.upstream import bisect, bugs, environment, passthrough, runner, sources, watch
from conformance.verdict import Status, Verdict
from tests.conftest import ROOT, run_suite

PY = sys.executable
SPECS = sorted(manifest.spec_ids())


def _row(spec: str, impl: str = "torchrl", outcome: str = "pass", **extra) -> dict:
    nodeid = spec.replace("[", f"[{impl}-", 1) if "[" in spec else f"{spec}[{impl}]"
    path, _, name = nodeid.partition("::")
    return {"nodeid": nodeid, "area": Path(path).stem.removeprefix("test_"),
            "spec": name.partition("[")[0], "parameters": "", "implementation": impl,
            "implementation_version": "0.14.1", "outcome": outcome, "device": "cpu",
            "expected": outcome in ("pass", "known failure"), "message": "", "duration": 0.0,
            **extra}


def _results(path: Path, rows: list[dict]) -> Path:
    path.write_text(json.dumps({"schema": 1, "started": 1.0, "finished": 2.0, "partial": None,
                                "implementations": {"torchrl": "0.14.1"}, "rows": rows}))
    return path


# ------------------------------------------------------------------ 1. the manifest
def test_committed_manifest_is_that_of_the_suite():
    """Fails when a spec is added, removed or renamed without `python -m conformance.manifest`
    (collection only, in a subprocess: about 10 s)."""
    proc = subprocess.run([PY, "-m", "conformance.manifest", "--check"], cwd=ROOT,
                          capture_output=True, text=True, timeout=300,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert proc.returncode == 0, proc.stderr
    document = json.loads(manifest.PATH.read_text())
    assert document["count"] == len(SPECS) == sum(map(len, document["areas"].values()))
    assert list(document["areas"]) == list(manifest.AREAS)


def test_a_stale_manifest_is_one_line_naming_a_spec():
    committed = manifest.load()
    fresh = {a: list(ids) for a, ids in committed.items()}
    fresh["ppo_value_clipping"] = [*fresh["ppo_value_clipping"], "conformance/test_ppo_value_"
                                   "clipping.py::test_new[a=1]"]
    line = manifest.difference(committed, fresh)
    assert line == ("1 spec(s) not in it (e.g. conformance/test_ppo_value_clipping.py::"
                    "test_new[a=1])")
    assert manifest.difference(committed, committed) == ""


def test_spec_ids_drop_the_implementation_only():
    assert manifest.spec_id("conformance/test_x.py::t[torchrl-a=1-b=[torchrl]]", "torchrl") == \
        "conformance/test_x.py::t[a=1-b=[torchrl]]"
    assert manifest.spec_id("conformance/test_x.py::t[torchrl]", "torchrl") == \
        "conformance/test_x.py::t"
    assert manifest.spec_id("conformance/test_x.py::t[reference]", "torchrl") == \
        "conformance/test_x.py::t[reference]"  # another implementation's row never matches


def test_complete_rows_need_every_spec_for_every_implementation_on_the_device():
    rows = [_row(s, impl) for impl in ("reference", "torchrl") for s in SPECS]
    assert completeness.rows_reason(rows, ["reference", "torchrl"], "cpu") is None
    reason = completeness.rows_reason(rows[:15], ["reference", "torchrl"], "cpu")
    assert f"{len(SPECS) - 15} of {len(SPECS)} specs have no reference row" in reason
    assert f"{len(SPECS)} of {len(SPECS)} specs have no torchrl row" in reason
    assert "another device" in completeness.rows_reason(rows, ["reference", "torchrl"], "cuda")
    stray = [*rows, _row("conformance/test_x.py::t_new", "torchrl")]
    assert "not in conformance/manifest.json" in completeness.rows_reason(
        stray, ["reference", "torchrl"], "cpu")
    # rows whose outcome is missing (a test that never finished) are no rows
    unfinished = [{**r, "outcome": None} if i == 3 else r for i, r in enumerate(rows)]
    assert "1 of" in completeness.rows_reason(unfinished, ["reference", "torchrl"], "cpu")


# ------------------------------------------------------------------ 2. owned arguments
@pytest.mark.parametrize("args", [
    "--impl reference", "--impl=reference", "--imp reference", "--results reports/upstream.json",
    "--expectations none", "--device cpu", "--spec-timeout 0", "--no-report", "-p no:x",
    "-pno:conformance-results", "-qp no:x", "-vvp no:x", "-c other.ini", "-cother.ini",
    "--config-file=other.ini", "-o python_files=x.py", "-oxx=y", "--override-ini=a=b",
    "--rootdir .", "--rootdir=/", "--confcutdir /", "--noconftest", "--pyargs conformance",
    "--import-mode=append", "--basetemp /tmp/x", "--junitxml x.xml", "tests", "/tmp",
    "conformance/../tests", "-- conformance", "@args.txt", "@conformance/args.txt",
    "'--impl reference'", "-xpno:conformance-watchdog", "-o=python_files=x", "--overr=a=b",
    "--root .", "--pdb", "-kppo -p no:x"])
def test_arguments_the_runner_owns_are_a_one_line_usage_error(args, capsys):
    """As tried: `nox -s upstream -- 0.14.1 --pytest-args "--impl reference"` labelled 257
    reference rows torchrl 0.14.1, conformant, exit 0."""
    with pytest.raises(SystemExit) as info:
        runner.parse_args(["0.14.1", f"--pytest-args={args}"])
    assert info.value.code == 2
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert line.startswith("nox -s upstream --: error: --pytest-args: "), line


@pytest.mark.parametrize("args", [["-k", "ppo and not tanh"], ["-kprioritized"], ["-x"],
                                  ["-q", "-rN"], ["conformance/test_ppo_value_clipping.py"],
                                  ["conformance/test_x.py::t[torchrl-a]"], ["--tb=short"]])
def test_narrowing_and_display_arguments_still_pass_through(args):
    passthrough.check(args, ROOT)  # they make a run partial (or change only its output)


def test_the_runner_keeps_pytest_arguments_out_of_the_environment(monkeypatch, tmp_path):
    seen = {}

    def fake_run(args, cwd, env):
        seen.update(args=args, env=env)
        return subprocess.CompletedProcess(args, 0)

    monkeypatch.setattr(runner.subprocess, "run", fake_run)
    monkeypatch.setenv("PYTEST_ADDOPTS", "--impl reference -o python_files=x.py")
    monkeypatch.setenv("PYTEST_PLUGINS", "evil")
    source = sources.parse("0.14.1")
    runner.run_source(source, "0.14.1", PY, "", [], [], tmp_path / "r.json")
    assert "PYTEST_ADDOPTS" not in seen["env"] and "PYTEST_PLUGINS" not in seen["env"]
    assert seen["args"][seen["args"].index("--impl") + 1] == "torchrl"
    assert seen["args"][seen["args"].index("-c") + 1] == str(ROOT / "pyproject.toml")


def test_rows_of_another_implementation_are_no_torchrl_verdict():
    rows = [_row(s, "reference") for s in SPECS]
    passed, text = runner.verdict(rows, 0)
    assert not passed and text.startswith("NOT TESTED: the rows are of reference"), text


# ------------------------------------------------------------------ 3. content and labels
@pytest.mark.parametrize("version", ["0.14.1/../../../../outside/x", "0.14.1/x", "0.14..1",
                                     "0.14.1\n../x", "0.14.1 x"])
def test_a_checkout_version_that_names_a_path_is_refused(tmp_path, version):
    """As tried: version.txt '0.14.1/../../../../<outside>/x' wrote and rmtree'd outside."""
    (tmp_path / "torchrl").mkdir()
    (tmp_path / "torchrl" / "__init__.py").write_text("")
    (tmp_path / "version.txt").write_text(version)
    with pytest.raises(sources.SourceError, match="not a version such as 0.14.0"):
        sources.parse(str(tmp_path))


@pytest.mark.parametrize("kind, version", [("checkout", "0.14.1/../../x"), ("git", "../.."),
                                           ("nightly", "2026/../x"), ("release", "a/b")])
def test_every_label_is_a_file_name(kind, version):
    label = sources.Source("x", kind, version, commit="../../abcdef").label
    assert "/" not in label and ".." not in label and label


def test_installs_are_keyed_by_content_not_label(tmp_path):
    """As tried: a rebuilt torchrl-0.14.1+mybuild wheel reused the cached 0.14.1 install."""
    folder = tmp_path / "w"
    folder.mkdir()
    wheel = folder / "torchrl-0.14.1+mybuild-py3-none-any.whl"
    wheel.write_bytes(b"one")
    first = environment.content_key([str(wheel), "tensordict==0.14.*"])
    wheel.write_bytes(b"two")
    assert environment.content_key([str(wheel), "tensordict==0.14.*"]) != first
    assert environment.content_key(["torchrl==0.14.1"]) != first
    import zipfile
    with zipfile.ZipFile(wheel, "w") as archive:
        archive.writestr("torchrl-0.14.1+mybuild.dist-info/METADATA", "")
    source = sources.parse(str(wheel))
    assert source.label == "0.14.1+mybuild" and source.version == "0.14.1"


# ------------------------------------------------------------------ 4. the nightly watch
def test_bisect_sees_a_new_failure_beside_a_known_one():
    """As tried: the set of outcome names ("fail,pass") read the same before and after."""
    node = "conformance/test_x.py::t"
    before = [_row(node + "[a]", outcome="known failure"), _row(node + "[b]")]
    after = [_row(node + "[a]", outcome="known failure"), _row(node + "[b]", outcome="fail")]
    old, _ = bisect.per_spec(before, [node], "")
    new, _ = bisect.per_spec(after, [node], "")
    assert old != new
    assert new[before[1]["nodeid"]] == "fail (unexpected)"


def test_git_sources_are_judged_against_expectations():
    git = sources.Source("git:x@main", "git", "0.15.0", commit="a" * 40)
    assert runner.default_expectations(git) == [str(runner.NIGHTLY_EXPECTATIONS)]
    tagged = sources.Source("git:x@v0.14.1", "git", "0.14.1", commit="a" * 40)
    assert runner.default_expectations(tagged)[0].endswith("torchrl-0.14.1.txt")
    # a checkout of main is a development tree too: without this it was judged against no
    # expectations at all (every known bug read as a regression)
    checkout = sources.Source("/work/rl", "checkout", "0.14.0")
    assert runner.default_expectations(checkout) == [str(runner.NIGHTLY_EXPECTATIONS)]


def test_watch_dates_are_dates_and_its_state_is_checked():
    from conformance.upstream.timeline import version_key

    assert sorted(["nightly-2027.10.1", "nightly-2027.9.30"], key=version_key) == [
        "nightly-2027.9.30", "nightly-2027.10.1"]
    with pytest.raises(ValueError):
        watch.date_of("nightly-2026.13.45")
    with pytest.raises(ValueError):
        watch.valid_state({"last_green": {"label": "nightly-2026.2.30", "commit": None}})
    with pytest.raises(ValueError):
        watch.valid_state({"last_green": {"label": "nightly-2026.2.3", "commit": "--all"}})
    newer = {"last_green": {"label": "nightly-2027.10.1", "commit": "b" * 40}}
    kept = watch.decide(newer, "nightly-2027.9.30", True, "c" * 40)
    assert kept["state"] == newer  # an older green nightly does not move the last green back


def test_watch_decide_refuses_an_impossible_date_in_one_line(tmp_path):
    proc = subprocess.run([PY, "-m", "conformance.upstream.watch", "decide", "--state",
                           str(tmp_path / "s.json"), "--label", "nightly-2026.02.31",
                           "--passed", "true", "--repo", str(tmp_path)], cwd=ROOT,
                          capture_output=True, text=True, env={**os.environ,
                                                               "PYTHONPATH": str(ROOT)})
    assert proc.returncode == 2 and len(proc.stderr.strip().splitlines()) == 1, proc.stderr
    assert not (tmp_path / "s.json").exists()


# ------------------------------------------------------------------ 5. destinations
@pytest.mark.parametrize("target, stem", [("reports/upstream.json", "upstream"),
                                          ("reports/libraries.json", "libraries"),
                                          ("README.json", "README"),
                                          ("reports/upstream-bugs/x.json", "x")])
def test_a_pytest_run_never_replaces_another_kind_of_report(target, stem):
    """As tried: --results reports/upstream.json replaced the 1.2 MB release matrix."""
    with pytest.raises(destination.DestinationError, match="not a conformance report"):
        destination.check(ROOT / target, stem)


def test_the_reporting_cli_refuses_the_readme_before_building(tmp_path):
    before = (ROOT / "README.md").read_bytes()
    proc = subprocess.run([PY, "-m", "conformance.reporting", "reports/upstream/0.14.1.json",
                           "-o", ".", "--stem", "README"], cwd=ROOT, capture_output=True,
                          text=True, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert proc.returncode == 2 and len(proc.stderr.strip().splitlines()) == 1, proc.stderr
    assert (ROOT / "README.md").read_bytes() == before


def test_dropin_refuses_the_readme_before_running(tmp_path, capsys):
    from conformance.dropin.__main__ import main

    checkout = tmp_path / "rl"
    (checkout / "test").mkdir(parents=True)
    (checkout / "test" / "test_a.py").write_text("def test_a():\n    pass\n")
    before = (ROOT / "README.md").read_bytes()
    assert main([str(checkout), "--target", "test/test_a.py", "--out",
                 str(ROOT / "README.md")]) == 2
    assert "README.md" in capsys.readouterr().err
    assert (ROOT / "README.md").read_bytes() == before


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


@pytest.mark.parametrize("folder", ["reports", ".", "/", "conformance"])
def test_gate_reports_is_never_a_folder_of_the_project(folder):
    """As tried: GATE_REPORTS=reports deleted the committed reports/."""
    with pytest.raises(destination.DestinationError):
        destination.check_gate_folder(ROOT / folder if folder != "/" else Path("/"))


def test_bugs_verify_refuses_narrowed_runs(tmp_path, capsys):
    """As tried: two narrowed runs were accepted ("0 other verdicts compared")."""
    narrowed = [_row(s, outcome="fail") for s in SPECS if "prioritized" in s][:3]
    patched = _results(tmp_path / "patched.json", narrowed)
    baseline = _results(tmp_path / "baseline.json", narrowed)
    assert bugs.main(["--verify", str(patched), str(baseline), "prb-max-slot-overwrite"]) == 2
    assert "a partial run cannot verify a fix" in capsys.readouterr().err


# ------------------------------------------------------------------ 6. bounded, one line
@pytest.mark.parametrize("pattern", ["(.+)+Z", "(a|aa)*Z", "(x*)*y", ".*.*.*Z", r"(\w+)\1",
                                     "a" * 400])
def test_a_costly_expectation_pattern_is_refused_when_the_file_is_read(tmp_path, pattern):
    """As tried: `(.+)+Z` in the caller's file hung past the spec timeout."""
    file = tmp_path / "exp.txt"
    file.write_text(f"conformance/test_ppo_value_clipping.py::t | why | "
                    f"https://github.com/pytorch/rl/issues/1 | matching {pattern}\n")
    with pytest.raises(ExpectationsError, match="unbounded time to match"):
        parse(file, frozenset({"torchrl"}))


def test_the_subject_of_a_pattern_is_cut():
    started = time.monotonic()
    assert pattern_budget.search("a.*b.*c", "a" * 1_000_000) is None
    assert time.monotonic() - started < 5


@pytest.mark.parametrize("seconds", [float("nan"), float("inf"), 1e300, -1.0])
def test_spec_timeout_must_be_finite(seconds):
    """As tried: --spec-timeout nan disabled the limit, inf or 1e300 gave 30 tracebacks."""
    with pytest.raises(pytest.UsageError, match="a finite number of seconds"):
        watchdog.Watchdog(seconds, None, "main")


@pytest.mark.parametrize("text", ["cuda:99999999999999999999", "cuda:00", "cuda:\u0663",
                                  "cuda:-1", "cuda:1e3"])
def test_a_device_index_torch_cannot_read_is_one_line(text):
    """As tried: --device cuda:99999999999999999999 gave an INTERNALERROR."""
    with pytest.raises(device.DeviceError, match="not a device"):
        device.parse(text)


def test_a_lone_surrogate_in_a_message_survives(tmp_path):
    """As tried: a message holding "\\ud800" lost all 273 rows."""
    from conformance.reporting.matrix import render_reports

    rows = [_row(SPECS[0], outcome="fail", message="bad \ud800 text")]
    document = encodable({"schema": 1, "started": 1.0, "finished": 2.0, "partial": None,
                          "rows": rows})
    for text in render_reports([document], tmp_path).values():
        text.encode("utf-8")
    assert "\\ud800" in document["rows"][0]["message"]
    json.dumps(document).encode("utf-8")


@pytest.mark.parametrize("row_change", [{"message": ["x"]}, {"outcome": 3},
                                        {"expected": "yes"}, {"nodeid": None},
                                        {"duration": "long"}])
def test_hostile_rows_are_one_line_errors(tmp_path, row_change):
    path = _results(tmp_path / "r.json", [{**_row(SPECS[0]), **row_change}])
    proc = subprocess.run([PY, "-m", "conformance.reporting", str(path), "-o",
                           str(tmp_path / "out")], cwd=ROOT, capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert proc.returncode == 2 and len(proc.stderr.strip().splitlines()) == 1, proc.stderr
    assert not (tmp_path / "out").exists()


def test_deeply_nested_results_are_one_line(tmp_path):
    path = tmp_path / "deep.json"
    path.write_text("[" * 200_000 + "]" * 200_000)
    proc = subprocess.run([PY, "-m", "conformance.reporting", str(path), "-o",
                           str(tmp_path / "out")], cwd=ROOT, capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.strip().splitlines() == [
        f"python -m conformance.reporting: error: {path}: JSON nested too deeply, not a "
        "results file"]


def test_markdown_carries_no_raw_html_from_a_row(tmp_path):
    from conformance.reporting.matrix import render_reports

    rows = [_row(SPECS[0], outcome="fail", message="<img src=x onerror=alert(1)> | `x`")]
    document = {"schema": 1, "started": 1.0, "finished": 2.0, "partial": None, "rows": rows}
    md = render_reports([document], tmp_path)[tmp_path / "conformance.md"]
    assert "<img" not in md and "&lt;img src=x onerror=alert(1)&gt; \\| \\`x\\`" in md


def test_bisect_json_is_checked_before_the_bisect(tmp_path, capsys):
    """As tried: --json /nonexistent/x.json failed after the whole bisect."""
    with pytest.raises(SystemExit) as info:
        bisect.main(["--repo", str(tmp_path), "--good", "a", "--bad", "b", "conformance",
                     "--json", "/nonexistent/x.json"])
    assert info.value.code == 2
    assert "--json /nonexistent/x.json" in capsys.readouterr().err


def test_ctrl_c_ends_the_builds_process_group(tmp_path, monkeypatch):
    """As tried: Ctrl-C in `nox -s bisect` left the C++ build compiling, orphaned."""
    from conformance.upstream import extension

    pidfile = tmp_path / "pid"
    fake = tmp_path / "python"
    fake.write_text(f"#!/bin/sh\nsleep 120 &\necho $! > {pidfile}\nwait\n")
    fake.chmod(0o755)
    original = subprocess.Popen.communicate
    calls = []

    def interrupted(self, *args, **kwargs):
        calls.append(1)
        if len(calls) == 1:  # the build's wait: Ctrl-C once the compiler runs
            for _ in range(200):
                if pidfile.exists() and pidfile.read_text().strip():
                    break
                time.sleep(0.05)
            raise KeyboardInterrupt
        return original(self, *args, **kwargs)

    monkeypatch.setattr(subprocess.Popen, "communicate", interrupted)
    with pytest.raises(KeyboardInterrupt):
        extension._run_json(str(fake), ["build"], dict(os.environ), 60)
    compiler = int(pidfile.read_text())
    for _ in range(50):
        try:
            os.kill(compiler, 0)
        except ProcessLookupError:
            break
        time.sleep(0.05)
    else:
        os.kill(compiler, signal.SIGKILL)
        pytest.fail("the build's child outlived the interrupted build")


# ------------------------------------------------------------------ whole-suite spellings
PLUGIN = """
def pytest_collection_modifyitems(config, items):
    items[:] = items[:2]  # slices the items without pytest_deselected
"""


@pytest.mark.slow
@pytest.mark.parametrize("how", ["plugin", "addopts"])
def test_a_run_narrowed_behind_the_options_back_is_partial(tmp_path, how):
    """As tried: -o python_functions=..., in PYTEST_ADDOPTS, or a plug-in that slices items
    without pytest_deselected: a few specs ran, exit 0, the full reports replaced."""
    env = {"PYTHONPATH": f"{tmp_path}{os.pathsep}{ROOT}"}
    args = ["conformance", "--impl", "reference", "--require-complete"]
    if how == "plugin":
        (tmp_path / "slicer.py").write_text(PLUGIN)
        args += ["-p", "slicer"]
    else:
        env["PYTEST_ADDOPTS"] = "-o python_functions=test_baselines_counterexample"
    run = run_suite(tmp_path, *args, env=env)
    assert run.returncode == completeness.PARTIAL_EXIT, run.output[-2000:]
    assert "specs have no reference row" in run.output.strip().splitlines()[-1]
    assert run.results is not None and run.results["partial"]


@pytest.mark.slow
def test_dropin_with_no_test_is_no_verdict(tmp_path):
    """As tried: `python -m conformance.dropin ... -- -k nothing`: "0 tests; broken by the
    swap: 0", exit 0."""
    checkout = tmp_path / "rl"
    (checkout / "test").mkdir(parents=True)
    (checkout / "test" / "test_a.py").write_text("def test_a():\n    pass\n")
    proc = subprocess.run([PY, "-m", "conformance.dropin", "--target", "test/test_a.py",
                           "--out", str(tmp_path / "d.md"), str(checkout), "--", "-k",
                           "nothing"], cwd=ROOT, capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(ROOT)}, timeout=300)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "no verdict: the shipped run ran 0 test(s)" in proc.stderr


def test_the_column_is_the_version_that_imported(tmp_path):
    """A release or wheel column is labelled by its version only when that is what imports."""
    package = tmp_path / "torchrl"
    for sub in ("", "data", "modules", "objectives"):
        (package / sub).mkdir(parents=True, exist_ok=True)
        (package / sub / "__init__.py").write_text("")
    (package / "__init__.py").write_text("__version__ = '9.9.9'\n")
    (tmp_path / "tensordict.py").write_text("")  # a stand-in: no torch to import (seconds)
    path = os.pathsep.join([str(tmp_path), str(ROOT)])
    assert environment.import_problem(PY, path, tmp_path, None) is None
    assert environment.import_problem(PY, path, tmp_path, "9.9.9") is None
    assert "gave version 9.9.9, not 0.14.1" in environment.import_problem(PY, path, tmp_path,
                                                                            "0.14.1")


def test_a_wheel_without_its_version_module_is_labelled_by_its_metadata(tmp_path):
    """As found: torchrl 0.10.1's wheel has no version.py, so its ``__version__`` falls back to
    "0.0.0+unknown"; the metadata installed beside it says 0.10.1, and only that decides."""
    package = tmp_path / "torchrl"
    for sub in ("", "data", "modules", "objectives"):
        (package / sub).mkdir(parents=True, exist_ok=True)
        (package / sub / "__init__.py").write_text("")
    (package / "__init__.py").write_text("__version__ = '0.0.0+unknown'\n")
    (tmp_path / "torchrl-0.10.1.dist-info").mkdir()
    (tmp_path / "torchrl-0.10.1.dist-info" / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: torchrl\nVersion: 0.10.1\n")
    (tmp_path / "tensordict.py").write_text("")
    path = os.pathsep.join([str(tmp_path), str(ROOT)])
    assert environment.import_problem(PY, path, tmp_path, "0.10.1") is None
    assert "gave version 0.10.1, not 0.11.1" in environment.import_problem(PY, path, tmp_path,
                                                                             "0.11.1")
    # without metadata where the source was installed, the fallback version is what imported
    shutil.rmtree(tmp_path / "torchrl-0.10.1.dist-info")
    assert "gave version 0.0.0+unknown, not 0.10.1" in environment.import_problem(
        PY, path, tmp_path, "0.10.1")


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


def test_a_partial_run_named_onto_a_complete_one_writes_beside_it(tmp_path):
    from types import SimpleNamespace

    from conformance.plugin.results import ResultsPlugin

    target = _results(tmp_path / "results.json", [_row(s) for s in SPECS])
    complete = target.read_text()
    config = SimpleNamespace(stash={}, option=SimpleNamespace(help=False))
    plugin = ResultsPlugin(config, [SimpleNamespace(id="torchrl", version="0.14.1")], target,
                           True, False, None)
    plugin.rows = {"n": {**_row(SPECS[0]), "nodeid": "n"}}
    plugin.partial_reason = "filtered with -k x"
    plugin.write(0)
    assert target.read_text() == complete
    assert json.loads((tmp_path / "partial" / "results.json").read_text())["partial"]


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


def test_a_skip_the_suite_does_not_declare_is_unexpected():
    """Found as an attacker: a TorchRL whose API raises pytest's Skipped ("not today") made
    every spec it touches 'skipped', an expected outcome: a green gate on nothing tested."""
    from types import SimpleNamespace

    from conformance.plugin.results import classify

    report = SimpleNamespace(when="call", skipped=True, passed=False, failed=False,
                             longrepr=("x.py", 1, "Skipped: not today"))
    verdict = classify(report, None, None, "")
    assert (verdict["outcome"], verdict["expected"]) == ("skipped", False)
    declared = classify(report, None, "not applicable", "")
    assert (declared["outcome"], declared["expected"]) == ("not applicable", True)
