"""nox -s upstream: source parsing, pairing, 'cannot be tested here' columns, drafting."""

import json
import os
import subprocess
import sys
import zipfile

import pytest

from conformance import manifest
from conformance.plugin import expectations as exp
from conformance.upstream import draft_expectations, runner, sources
from conformance.upstream.environment import content_key
from conformance.verdict import Status, Verdict
from tests.conftest import ROOT


def test_release_pairs_same_minor_tensordict_and_a_torch_it_imports_with():
    s = sources.parse("0.9.2")
    assert (s.kind, s.install, s.tensordict, s.torch) == (
        "release", ["torchrl==0.9.2"], "tensordict==0.9.*", "2.13.0")
    assert sources.parse("0.14.1").torch == "2.14.1"  # its C++ extension is built for 2.14
    assert sources.extras_for("0.10.1") == ["pyvers==0.1.0"]
    assert sources.extras_for("0.13.3") == ["pyvers==0.2.3", "hoptorch>=0.1.4"]


def _wheel(directory, name="torchrl-0.12.0-cp311-cp311-manylinux1_x86_64.whl"):
    path = directory / name
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("torchrl-0.12.0.dist-info/METADATA", "Name: torchrl\nVersion: 0.12.0\n")
    return path


def _checkout(directory, version="0.14.1", init="import sys\n"):
    (directory / "torchrl").mkdir(parents=True)
    (directory / "version.txt").write_text(f"{version}\n")
    (directory / "torchrl" / "__init__.py").write_text(init)
    return directory


def test_wheel_checkout_and_git_forms(tmp_path):
    wheel = _wheel(tmp_path)
    assert (sources.parse(str(wheel)).version, sources.parse(str(wheel)).kind) == ("0.12.0", "wheel")
    checkout = sources.parse(str(_checkout(tmp_path / "rl", "0.14.0")))
    assert (checkout.kind, checkout.label) == ("checkout", "0.14.0+checkout")
    git = sources.parse("git:/some/mirror@v0.13.3")
    assert (git.kind, git.ref) == ("git", "v0.13.3")


@pytest.mark.parametrize("bad", ["latest", "git:nowhere", "torchrl.whl", "/no/such/dir"])
def test_unusable_sources_are_named(bad):
    with pytest.raises(sources.SourceError, match="torchrl|git:REPO@REF|neither"):
        sources.parse(bad)


def test_folders_and_wheels_that_are_not_what_they_claim_are_named(tmp_path):
    fake = tmp_path / "torchrl-0.14.1-py3-none-any.whl"
    fake.write_text("not a zip")
    with pytest.raises(sources.SourceError, match="is not a wheel: not a zip archive"):
        sources.parse(str(fake))
    (tmp_path / "empty").mkdir()
    with pytest.raises(sources.SourceError, match="has no version.txt"):
        sources.parse(str(tmp_path / "empty"))
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "version.txt").write_text("0.14.1")
    with pytest.raises(sources.SourceError, match="has no torchrl/__init__.py"):
        sources.parse(str(tmp_path / "docs"))  # else the base environment's torchrl is tested
    _checkout(tmp_path / "odd", version="main")
    with pytest.raises(sources.SourceError, match="says 'main', not a version"):
        sources.parse(str(tmp_path / "odd"))


def _runner(tmp_path, *argv, env=None):
    """python -m conformance.upstream.runner as the nox session calls it, without network."""
    work = tmp_path / "work"
    _installed_deps(work)  # a checkout's deps, already installed: no pip, no network
    full = {**os.environ, "PYTHONPATH": str(ROOT), "PIP_NO_INDEX": "1", **(env or {})}
    return subprocess.run(
        [sys.executable, "-m", "conformance.upstream.runner", "--base", f"2.14.1={sys.executable}",
         "--work-dir", str(work), "--reports-dir", str(tmp_path / "reports"), *argv],
        cwd=ROOT, env=full, capture_output=True, text=True, timeout=900)


def _installed_deps(work):
    """The 0.14.1 checkout's dependencies, as if installed (the folder is keyed by content)."""
    deps = sources.Checkout("x", "0.14.1")
    folder = work / f"0.14.1-deps-{content_key([deps.tensordict, *deps.helpers])}"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / ".installed").write_text("")


def _results(tmp_path, label):
    """A source's rows: its column, or beside it (upstream/partial/) for a run that is not
    complete (narrowed, unresolved)."""
    folder = tmp_path / "reports" / "upstream"
    path = folder / f"{label}.json"
    if not path.is_file():
        path = folder / runner.PARTIAL_FOLDER / f"{label}.json"
    return json.loads(path.read_text())["rows"]


@pytest.mark.slow
def test_unresolvable_and_uninstallable_sources_are_not_tested_columns_and_fail(tmp_path):
    """A missing release, a fake wheel and a folder that is no checkout: never green."""
    fake = tmp_path / "torchrl-0.14.1-py3-none-any.whl"
    fake.write_text("not a zip")
    (tmp_path / "notrl").mkdir()
    proc = _runner(tmp_path, "99.0.0", str(fake), str(tmp_path / "notrl"),
                   "--pytest-args", "-k 'ppo and negative_clip'")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "Traceback" not in proc.stdout + proc.stderr
    verdicts = proc.stderr.strip().splitlines()
    assert verdicts[0].startswith("torchrl 99.0.0: NOT TESTED: install failed: pip install "
                                  "torchrl==99.0.0")
    # a source that was never resolved is labelled so, never by a release's name (issue #21)
    assert verdicts[1] == (f"torchrl unresolved-torchrl-0.14.1-py3-none-any.whl: NOT TESTED: "
                           f"cannot resolve "
                           f"{fake}: {fake} is not a wheel: not a zip archive")
    assert verdicts[2].startswith("torchrl unresolved-notrl: NOT TESTED: cannot resolve") and \
        verdicts[2].endswith("has no version.txt: is it a pytorch/rl checkout?")
    for label in ("99.0.0", "unresolved-torchrl-0.14.1-py3-none-any.whl", "unresolved-notrl"):
        rows = _results(tmp_path, label)
        assert [(r["nodeid"], r["outcome"], r["expected"]) for r in rows] == [(
            "conformance/test_ppo_value_clipping.py::test_negative_clip_value_is_rejected[torchrl]",
            "not tested", False)]
        assert rows[0]["message"].startswith("NOT TESTED: ")
    # narrowed and unresolved: the matrix goes beside the stored one
    assert not (tmp_path / "reports" / "upstream.md").exists()
    md = (tmp_path / "reports" / "upstream-partial.md").read_text()
    assert "conformant" not in md and "| torchrl unresolved-notrl | NOT TESTED: cannot resolve" in md


@pytest.mark.slow
def test_broken_checkout_fails_the_gate_with_a_one_line_reason(tmp_path):
    """.ci/gate.sh on a pull request whose torchrl/__init__.py does not compile."""
    caller = _checkout(tmp_path / "caller", init="def broken(:\n")
    fake = tmp_path / "bin"
    fake.mkdir()
    # `python -m nox -s upstream -- ARGS` runs the runner exactly as the nox session does
    (fake / "python").write_text(
        "#!/usr/bin/env bash\n"
        f'if [[ "$1" == -m && "$2" == conformance.* ]]; then exec {sys.executable} "$@"; fi\n'
        '[[ "$1 $2 $3 $4 $5" == "-m nox -s upstream --" ]] || exit 99\n'
        f'shift 5; exec {sys.executable} -m conformance.upstream.runner '
        f'--base 2.14.1={sys.executable} --work-dir {tmp_path / "work"} '
        f'--reports-dir {tmp_path / "reports"} "$@"\n')
    (fake / "python").chmod(0o755)
    _installed_deps(tmp_path / "work")
    env = {**os.environ, "PATH": f"{fake}{os.pathsep}{os.environ['PATH']}", "PIP_NO_INDEX": "1",
           "PYTHONPATH": str(ROOT), "CALLER_DIR": str(caller), "TORCHRL_REF": "my-branch",
           "IMPL": "torchrl", "EXPECTATIONS_FILE": "", "PYTEST_ARGS": "-k 'ppo and negative_clip'",
           "GATE_REPORTS": str(tmp_path / "reports")}  # the gate writes its reports only there
    proc = subprocess.run(["bash", str(ROOT / ".ci" / "gate.sh")], env=env, cwd=tmp_path,
                          capture_output=True, text=True, timeout=900)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    # the reason in one line, then the gate's verdict as its last line
    first, last = proc.stderr.strip().splitlines()
    assert first == "torchrl 0.14.1+checkout: NOT TESTED: import torchrl failed: SyntaxError: invalid syntax"
    assert last.startswith("gate.sh: gate verdict: NOT CONFORMANT"), proc.stderr
    (row,) = _results(tmp_path, "0.14.1+checkout")
    assert (row["outcome"], row["expected"]) == ("not tested", False)


def _git(repo, *args):
    subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True,
                   env={**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@x",
                        "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@x"})


def _commit(repo, text):
    (repo / "torchrl" / "__init__.py").write_text(text)
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", text)
    return subprocess.run(["git", "-C", str(repo), "rev-parse", "HEAD"], check=True,
                          capture_output=True, text=True).stdout.strip()


def test_git_refs_are_labelled_and_extracted_by_their_commit(tmp_path):
    repo = _checkout(tmp_path / "rl", init="")
    _git(repo, "init", "-q", "-b", "main")
    first = _commit(repo, "A = 1\n")
    _git(repo, "branch", "feature")
    second = _commit(repo, "A = 2\n")
    work = tmp_path / "work"
    main = sources.parse(f"git:{repo}@main").resolve(work, [])
    feature = sources.parse(f"git:{repo}@feature").resolve(work, [])
    assert (main.label, feature.label) == (f"0.14.1+git.{second[:7]}", f"0.14.1+git.{first[:7]}")
    assert (feature.path / "torchrl" / "__init__.py").read_text() == "A = 1\n"
    _git(repo, "checkout", "-q", "feature")
    moved = _commit(repo, "A = 3\n")  # the branch moved: its new commit is extracted
    again = sources.parse(f"git:{repo}@feature").resolve(work, [])
    assert again.label == f"0.14.1+git.{moved[:7]}"
    assert (again.path / "torchrl" / "__init__.py").read_text() == "A = 3\n"
    with pytest.raises(sources.SourceError, match="no commit, branch or tag 'nope'"):
        sources.parse(f"git:{repo}@nope").resolve(work, [])
    with pytest.raises(sources.SourceError, match="is not a git repository"):
        sources.parse(f"git:{tmp_path / 'work'}@main").resolve(work, [])


@pytest.mark.slow
def test_two_sources_of_one_version_in_one_run_get_two_columns(tmp_path):
    one = _checkout(tmp_path / "a", init="def broken(:\n")
    two = _checkout(tmp_path / "b", init="def broken(:\n")
    proc = _runner(tmp_path, str(one), str(two), "--pytest-args", "-k 'ppo and negative_clip'")
    assert proc.returncode == 1
    assert [line.split(":")[0] for line in proc.stderr.strip().splitlines()] == [
        "torchrl 0.14.1+checkout", "torchrl 0.14.1+checkout.2"]
    assert _results(tmp_path, "0.14.1+checkout.2")[0]["implementation_version"] == \
        "0.14.1+checkout.2"


def test_pytest_args_are_split_like_a_shell_and_bad_arguments_are_one_line_errors(capsys):
    assert runner.parse_args(["0.14.1", "--pytest-args", "-k 'a or b' -x"]).pytest_args == [
        "-k", "a or b", "-x"]
    for argv in (["0.14.1", "--pytest-args", "-k 'a"], ["0.14.1", "--base", "2.14.1"],
                 ["0.14.1", "--base", "2.14.1=/no/python"], ["0.14.1", "--expectations", "/no/f"]):
        with pytest.raises(SystemExit) as info:
            runner.parse_args(argv)
        assert info.value.code == 2
        (error,) = capsys.readouterr().err.strip().splitlines()  # no usage block: one line
        assert error.startswith("nox -s upstream --: error: "), error


def _row(outcome, expected, spec=None):
    spec = spec or sorted(manifest.spec_ids())[0]
    return {"outcome": outcome, "expected": expected, "message": f"{outcome}: why\nmore",
            "implementation": "torchrl", "device": "cpu",
            "nodeid": spec.replace("[", "[torchrl-", 1) if "[" in spec else f"{spec}[torchrl]"}


def _complete(*last):
    """One passing row per spec of the manifest, the last ones replaced by ``last``."""
    specs = sorted(manifest.spec_ids())
    rows = [_row("pass", True, spec) for spec in specs]
    for number, (outcome, expected) in enumerate(last, 1):
        rows[-number] = _row(outcome, expected, specs[-number])
    return rows


def test_verdict_reads_expected_and_the_exit_code_never_outcome_names():
    assert runner.verdict(_complete(("known failure", True)), 0) == Verdict(
        Status.CONFORMANT, "conformant to expectations")
    assert runner.verdict(_complete(("something new", False)), 0) == Verdict(
        Status.UNEXPECTED, "1 unexpected result(s)")
    assert runner.verdict(_complete(), 4) == Verdict(Status.PYTEST_FAILED,
                                                     "pytest exited with code 4")
    assert runner.verdict([], 0) == Verdict(Status.NOT_TESTED, "NOT TESTED: the run left no results")
    assert runner.verdict([_row("not tested", False)], None) == Verdict(
        Status.NOT_TESTED, "NOT TESTED: not tested: why")
    # the typed value is what the runner asks; it unpacks as (passed, text) too
    assert tuple(runner.verdict(_complete(), 4)) == (False, "pytest exited with code 4")
    assert runner.verdict(_complete(), 4).complete and not runner.verdict([], 0).complete


def test_verdict_of_rows_short_of_the_manifest_is_partial_whatever_the_exit_code():
    """As tried: -o python_files=..., -c other.ini, a conftest's collect_ignore_glob or a
    plug-in that slices the items ran 15 of 257 specs and exited 0: the rows say partial."""
    passed, text = runner.verdict(_complete()[:15], 0)
    assert not passed and text.startswith("PARTIAL RUN: not a conformance verdict ("), text
    assert f"{len(manifest.spec_ids()) - 15} of {len(manifest.spec_ids())} specs have no " \
        "torchrl row" in text


def test_verdict_of_rows_of_another_implementation_is_no_verdict():
    """As tried: --impl reference through --pytest-args labelled 257 reference rows torchrl."""
    rows = [{**r, "implementation": "reference",
             "nodeid": r["nodeid"].replace("[torchrl", "[reference")} for r in _complete()]
    passed, text = runner.verdict(rows, 0)
    assert (passed, text) == (False, "NOT TESTED: the rows are of reference, not of the torchrl "
                                     "under test")
    passed, text = runner.verdict(_complete() + rows[:1], 0)
    assert not passed and "reference" in text


def _results_file(tmp_path, version, *rows):
    path = tmp_path / f"{version}.json"
    full = [{"area": "a", "spec": "s", "parameters": "", "implementation": "torchrl",
             "implementation_version": version, "expected": True, **row} for row in rows]
    path.write_text(json.dumps({"schema": 1, "started": 1.0, "finished": 2.0, "rows": full,
                                "implementations": {"torchrl": version},
                                "stack": {"torch": "2.13.0", "tensordict": "0.9.1"}}))
    return path


SPEC = "conformance/test_ppo_value_clipping.py"
NEG = f"{SPEC}::test_negative_clip_value_is_rejected[torchrl]"


def test_draft_copies_known_reasons_and_flags_the_rest(tmp_path):
    results = _results_file(
        tmp_path, "0.15.0",
        {"nodeid": NEG, "outcome": "fail",
         "message": "AssertionError: a negative clip_value was accepted"},
        {"nodeid": f"{SPEC}::test_true_means_clip_epsilon[torchrl-eps=0.3]", "outcome": "fail",
         "message": "boom"},
        {"nodeid": f"{SPEC}::test_true_means_clip_epsilon[torchrl-eps=0.125]", "outcome": "pass",
         "message": ""},
        {"nodeid": "conformance/test_prioritized_replay.py::test_p[torchrl]",
         "outcome": "untestable", "message": "cannot be tested here: no extension"})
    known = ROOT / "conformance" / "expectations" / "torchrl-0.14.1.txt"
    lines = draft_expectations.draft(results, [known])
    assert "include torchrl.txt for 0.15.0" in lines  # the folded form
    assert f"{SPEC}::test_negative_clip_value_is_rejected | clip_value is not validated" in "\n".join(lines)
    # the known entry's failure clause comes with it: a copy without it would accept any failure
    copied = next(line for line in lines if "test_negative_clip_value_is_rejected" in line)
    assert copied.endswith("| raises AssertionError matching a negative clip_value was accepted")
    flagged = [line for line in lines if "REVIEW" in line]
    assert flagged == [
        f"{SPEC}::test_true_means_clip_epsilon[torchrl-eps=0.3] | REVIEW: boom | TODO",
        "untestable: conformance/test_prioritized_replay.py::test_p[torchrl] | REVIEW: cannot be "
        "tested here: no extension | TODO"]
    drafted = tmp_path / "draft.txt"
    drafted.write_text("\n".join(lines))
    with pytest.raises(exp.ExpectationsError, match="upstream link"):
        exp.parse(drafted, frozenset({"torchrl"}))  # unreviewed drafts cannot be used


def test_draft_copies_a_known_reason_only_for_the_failure_it_describes(tmp_path):
    """The same test failing another way on another release has another cause: found when
    0.5.0's checkpoint specs, failing on the double transform, got 0.14.1's reasons."""
    known = tmp_path / "torchrl-0.14.1.txt"
    known.write_text(f"{NEG} | clip_value is not validated | https://example.org/1 | raises "
                     "AssertionError matching a negative clip_value was accepted\n")
    results = _results_file(tmp_path, "0.15.0", {
        "nodeid": NEG, "outcome": "fail", "message": "TypeError: cannot assign 'float'"})
    lines = draft_expectations.draft(results, [known], shared=tmp_path / "none.txt")
    assert f"{NEG} | REVIEW: TypeError: cannot assign 'float' | TODO" in lines
    results = _results_file(tmp_path, "0.15.0", {
        "nodeid": NEG, "outcome": "fail",
        "message": "AssertionError: a negative clip_value was accepted\n  parameters: x"})
    lines = draft_expectations.draft(results, [known], shared=tmp_path / "none.txt")
    assert any(line.startswith(f"{SPEC}::test_negative_clip_value_is_rejected | clip_value is "
                               "not validated") for line in lines)


def test_draft_leaves_out_what_the_shared_file_already_covers_for_the_version(tmp_path):
    results = _results_file(tmp_path, "0.9.2", {"nodeid": NEG, "outcome": "known failure",
                                                "message": "x"})
    lines = draft_expectations.draft(results, [])
    assert "include torchrl.txt for 0.9.2" in lines and not any(NEG[:40] in x for x in lines)


def test_draft_of_a_bad_results_file_is_a_one_line_error(tmp_path, capsys):
    (tmp_path / "r.json").write_text("[]")
    assert draft_expectations.main([str(tmp_path / "r.json")]) == 2
    assert capsys.readouterr().err.strip().endswith("a JSON list, not a results object")


def test_earlier_runs_keep_their_columns(tmp_path):
    """Re-testing one release keeps the other releases' columns (with their run date); a result
    without its sources record, or one of this run, is not taken twice."""
    import json

    from conformance.upstream import runner

    folder = tmp_path / "upstream"
    (folder / "sources").mkdir(parents=True)
    from conformance import record

    for label, started in (("0.12.0", 0.0), ("0.6.0", 86400.0), ("0.13.3", 0.0)):
        row = {"nodeid": "conformance/test_x.py::t[torchrl]", "area": "x", "spec": "t",
               "parameters": "", "implementation": "torchrl", "implementation_version": label,
               "outcome": "pass", "expected": True, "message": ""}
        (folder / f"{label}.json").write_text(json.dumps({  # ordered by the source described
            "schema": 2, "started": started, "finished": started, "rows": [row],
            "source": record.describe("release", label, label)}))
        if label != "0.13.3":  # no record: not a column of the runner's
            (folder / "sources" / f"{label}.json").write_text(json.dumps({"status": "ok"}))
    (folder / "0.14.1.json").write_text("{}")
    (folder / "sources" / "0.14.1.json").write_text("{}")
    found = runner.earlier_results(tmp_path, [folder / "0.14.1.json"])
    assert [(p.stem, r["run"]) for p, r in found] == [("0.6.0", "1970-01-02 00:00 UTC"),
                                                      ("0.12.0", "1970-01-01 00:00 UTC")]
