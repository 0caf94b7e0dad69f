"""nox -s upstream -- nightly: parsing, the pairing rule chain (with a fake index), bad sources."""

import os
import subprocess
import sys
import zipfile

import pytest

from conformance.upstream import nightly, runner, sources
from tests.conftest import ROOT

REQUIRES = ["torch>=2.11.0a0", "pyvers>=0.2.3", "hoptorch>=0.1.4", "numpy", "packaging",
            "cloudpickle", "tensordict-nightly", "gym; extra == 'gym'"]


def _nightly_wheel(folder, day="2026.10.27", requires=REQUIRES):
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"torchrl_nightly-{day}-cp311-cp311-manylinux1_x86_64.whl"
    meta = "".join(f"Requires-Dist: {r}\n" for r in requires)
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr(f"torchrl_nightly-{day}.dist-info/METADATA",
                         f"Name: torchrl-nightly\nVersion: {day}\n{meta}")
    return path


class FakeIndex:
    def __init__(self, folder, published):
        self.folder, self.published = folder, published

    def versions(self, dist):
        return self.published[dist]

    def download(self, dist, version, folder):
        return _nightly_wheel(self.folder, version)


PUBLISHED = {nightly.TORCHRL: ["2026.10.27", "2026.10.26", "2026.9.30", "0.0.1"],
             nightly.TENSORDICT: ["2026.10.26", "2026.10.25", "2026.9.30", "0.8.0"]}


def test_nightly_forms_and_labels(tmp_path):
    assert (sources.parse("nightly").kind, sources.parse("nightly").version) == ("nightly", "")
    assert sources.parse("nightly:2026.10.27").label == "nightly-2026.10.27"
    wheel = _nightly_wheel(tmp_path)
    s = sources.parse(str(wheel))
    assert (s.kind, s.version, s.install) == ("nightly", "2026.10.27", [str(wheel)])
    with pytest.raises(sources.SourceError, match="no such wheel file"):
        sources.parse(str(tmp_path / "torchrl_nightly-2026.1.1-py3-none-any.whl"))


def test_pairing_takes_the_same_day_or_the_newest_tensordict_before_and_a_base_torch(tmp_path):
    index = FakeIndex(tmp_path, PUBLISHED)
    s = nightly.resolve(sources.parse("nightly"), index, ["2.13.0", "2.14.1"], tmp_path)
    assert (s.version, s.label) == ("2026.10.27", "nightly-2026.10.27")  # the newest
    assert s.tensordict == "tensordict-nightly==2026.10.26"  # none on the 27th: the 26th
    assert s.torch == "2.13.0"  # the first base torch that >=2.11.0a0 admits
    assert s.helpers == ["hoptorch>=0.1.4", "pyvers>=0.2.3"]  # not what the base has, no extras
    assert "the newest before 2026.10.27" in s.pairing[0] and "torch 2.13.0" in s.pairing[1]
    s = nightly.resolve(sources.parse("nightly:2026.9.30"), index, ["2.14.1"], tmp_path)
    assert s.tensordict == "tensordict-nightly==2026.9.30" and "same day" in s.pairing[0]


def test_pairing_failures_say_why(tmp_path):
    index = FakeIndex(tmp_path, PUBLISHED)
    with pytest.raises(nightly.NightlyError, match=r"no torchrl-nightly 2026.10.1 .*2026.9.30"):
        nightly.resolve(sources.parse("nightly:2026.10.1"), index, ["2.14.1"], tmp_path)
    wheel = _nightly_wheel(tmp_path / "w", requires=["torch>=2.15"])
    with pytest.raises(nightly.NightlyError, match="no base torch admits it"):
        nightly.resolve(sources.parse(str(wheel)), index, ["2.14.1"], tmp_path)
    early = FakeIndex(tmp_path, {**PUBLISHED, nightly.TENSORDICT: ["2026.11.1"]})
    with pytest.raises(nightly.NightlyError, match="no tensordict-nightly published on or"):
        nightly.resolve(sources.parse("nightly"), early, ["2.14.1"], tmp_path)


@pytest.mark.slow
@pytest.mark.parametrize("argument, message", [
    ("git:--upload-pack=touch {marker};@{repo}", "cannot start with '-'"),
    ("git:{repo}@main;touch {marker}", "is not a branch, tag or commit name"),
    ("git:{repo}@$(touch {marker})", "is not a branch, tag or commit name"),
    ("git:/nonexistent@main", "cannot resolve git:/nonexistent@main"),
    ("x" * 300, "characters)"),
    ("typo/0.13.3", "is neither a release"),
])
def test_bad_sources_are_one_line_not_tested_columns_never_executed(tmp_path, argument, message):
    marker = tmp_path / "executed"
    argument = argument.format(marker=marker, repo=ROOT)
    reports = tmp_path / "reports"
    (reports / "upstream").mkdir(parents=True)
    kept = reports / "upstream" / "0.13.3.json"
    kept.write_text('{"stored": "the 0.13.3 column of an earlier run"}')
    env = {**os.environ, "PYTHONPATH": str(ROOT), "PIP_NO_INDEX": "1"}
    proc = subprocess.run(
        [sys.executable, "-m", "conformance.upstream.runner", "--base", f"2.14.1={sys.executable}",
         "--work-dir", str(tmp_path / "work"), "--reports-dir", str(reports), "--only-this-run",
         argument], cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 1, proc.stderr[-2000:]
    assert "Traceback" not in proc.stdout + proc.stderr
    assert not marker.exists(), "the source argument was executed"
    last = proc.stderr.strip().splitlines()[-1]
    assert "NOT TESTED" in last and message in last, last
    assert kept.read_text() == '{"stored": "the 0.13.3 column of an earlier run"}'
    columns = {p.name for p in (reports / "upstream").glob("*.json")} - {"0.13.3.json"}
    assert not columns, columns  # an unresolved source writes beside the stored columns
    beside = {p.name for p in (reports / "upstream" / "partial").glob("*.json")}
    assert len(beside) == 1 and beside.pop().startswith("unresolved-"), beside


def test_unresolved_sources_never_take_a_release_label():
    assert runner.unresolved_label("typo/0.13.3") == "unresolved-0.13.3"
    assert len(runner.unresolved_label("y" * 5000)) < 100
