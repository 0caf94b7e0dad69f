"""The nightly watch's decision (conformance/upstream/watch.py), without network."""

import json
import os
import subprocess

import pytest

from conformance.upstream import watch
from tests.conftest import ROOT
from tests.rows import PY


def test_green_is_recorded_red_bisects_from_the_last_green():
    first = watch.decide({}, "nightly-2026.10.26", True, "aaa")
    assert first["action"] == "none"
    state = first["state"]
    assert state == {"last_green": {"label": "nightly-2026.10.26", "commit": "aaa",
                                    "day": "2026-10-26"}}
    # a state written before it carried the day is still read (the day from its label)
    assert watch.valid_state({"last_green": {"label": "nightly-2026.10.26", "commit": None}})
    red = watch.decide(state, "nightly-2026.10.27", False, "bbb")
    assert (red["action"], red["good"], red["bad"]) == ("bisect", "aaa", "bbb")
    assert red["state"] == state  # a red nightly never becomes the new good end
    assert watch.decide({}, "nightly-2026.10.27", False, "bbb")["action"] == "report"
    assert watch.decide(state, "nightly-2026.10.27", False, None)["action"] == "report"


def test_a_nightly_maps_to_the_last_main_commit_of_its_day(tmp_path):
    repo = str(tmp_path)
    git = ["git", "-C", repo, "-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run(["git", "init", "-q", repo], check=True)
    shas = []
    for day in ("2026-10-26T10:00:00Z", "2026-10-26T20:00:00Z", "2026-10-27T08:00:00Z"):
        env = {"GIT_COMMITTER_DATE": day, "GIT_AUTHOR_DATE": day, "PATH": "/usr/bin:/bin"}
        subprocess.run([*git, "commit", "-q", "--allow-empty", "-m", day], check=True, env=env)
        shas.append(subprocess.run([*git, "rev-parse", "HEAD"], capture_output=True, text=True,
                                   check=True).stdout.strip())
    assert watch.day_of("nightly-2026.10.26") == "2026-10-26"
    assert watch.commit_of_day(repo, "2026-10-26") == shas[1]
    assert watch.commit_of_day(repo, "2026-10-25") is None


def test_decide_command_writes_the_state_and_the_outputs(tmp_path):
    state, out = tmp_path / "s" / "state.json", tmp_path / "out"
    argv = ["decide", "--state", str(state), "--label", "nightly-2026.10.27", "--passed", "true",
            "--repo", str(tmp_path), "--github-output", str(out)]
    assert watch.main(argv) == 0
    assert "nightly-2026.10.27" in state.read_text() and "action=none" in out.read_text()


def test_decide_reads_the_nightly_and_its_day_from_its_results(tmp_path):
    """The watch takes the label and the build day from the document's source, not the name."""
    from conformance import record

    results = tmp_path / "whatever.json"
    row = {"nodeid": "conformance/test_x.py::t[torchrl]", "area": "x", "spec": "t",
           "parameters": "", "implementation": "torchrl",
           "implementation_version": "nightly-2026.10.27", "outcome": "pass", "expected": True,
           "message": ""}
    results.write_text(json.dumps({"schema": 2, "started": 1.0, "finished": 2.0, "rows": [row],
                                   "source": record.describe("nightly", "nightly-2026.10.27",
                                                             "2026.10.27", date="2026-10-27")}))
    state = tmp_path / "state.json"
    assert watch.main(["decide", "--state", str(state), "--results", str(results), "--passed",
                       "true", "--repo", str(tmp_path)]) == 0
    assert json.loads(state.read_text()) == {"last_green": {
        "label": "nightly-2026.10.27", "commit": None, "day": "2026-10-27"}}
    # a release's results are no nightly: one line, exit code 2
    results.write_text(results.read_text().replace('"nightly"', '"release"'))
    with pytest.raises(SystemExit) as exited:
        watch.main(["decide", "--state", str(state), "--results", str(results), "--passed",
                    "true", "--repo", str(tmp_path)])
    assert exited.value.code == 2


def test_watch_dates_are_dates_and_its_state_is_checked():
    from conformance import record

    days = [record.describe("nightly", f"nightly-{d}", d, date=watch.day_of(f"nightly-{d}"))
            for d in ("2027.10.1", "2027.9.30")]
    assert [d["label"] for d in sorted(days, key=record.source_order)] == [
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
