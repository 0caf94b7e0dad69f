"""nox -s upstream: source parsing, pairing, 'cannot be tested here' columns, drafting."""

import json
import sys

import pytest

from conformance.plugin import expectations as exp
from conformance.upstream import draft_expectations, runner, sources
from tests.conftest import ROOT


def test_release_pairs_same_minor_tensordict_and_a_torch_it_imports_with():
    s = sources.parse("0.9.2")
    assert (s.kind, s.install, s.tensordict, s.torch) == (
        "release", ["torchrl==0.9.2"], "tensordict==0.9.*", "2.13.0")
    assert sources.parse("0.14.1").torch == "2.14.1"  # its C++ extension is built for 2.14
    assert sources.extras_for("0.10.1") == ["pyvers==0.1.0"]
    assert sources.extras_for("0.13.3") == ["pyvers==0.2.3", "hoptorch>=0.1.4"]


def test_wheel_checkout_and_git_forms(tmp_path):
    wheel = tmp_path / "torchrl-0.12.0-cp311-cp311-manylinux1_x86_64.whl"
    wheel.write_bytes(b"")
    assert (sources.parse(str(wheel)).version, sources.parse(str(wheel)).kind) == ("0.12.0", "wheel")
    (tmp_path / "rl").mkdir()
    (tmp_path / "rl" / "version.txt").write_text("0.14.0\n")
    checkout = sources.parse(str(tmp_path / "rl"))
    assert (checkout.kind, checkout.label) == ("checkout", "0.14.0+checkout")
    git = sources.parse("git:/some/mirror@v0.13.3")
    assert (git.kind, git.ref) == ("git", "v0.13.3")


@pytest.mark.parametrize("bad", ["latest", "git:nowhere", "torchrl.whl", "/no/such/dir"])
def test_unusable_sources_are_named(bad):
    with pytest.raises(sources.SourceError, match="torchrl|git:REPO@REF|neither"):
        sources.parse(bad)


def test_uninstallable_release_gets_a_cannot_be_tested_column(tmp_path):
    """Not skipped silently: every spec is reported 'untestable' with the reason."""
    status = runner.main(["99.0.0", "--base", f"2.14.1={sys.executable}",
                          "--reports-dir", str(tmp_path), "--pytest-args", "-k ppo"])
    assert status == 0  # untestable is not a failure of the suite
    rows = json.loads((tmp_path / "upstream" / "99.0.0.json").read_text())["rows"]
    assert rows and {r["outcome"] for r in rows} == {"untestable"}
    assert all("pip install torchrl==99.0.0" in r["message"] for r in rows)
    md = (tmp_path / "upstream.md").read_text()
    assert "| torchrl 99.0.0 | cannot be tested here: install failed" in md or \
        "| torchrl 99.0.0 | cannot be tested here: pip install" in md


def test_draft_copies_known_reasons_and_flags_the_rest(tmp_path):
    results = tmp_path / "r.json"
    spec = "conformance/test_ppo_value_clipping.py"
    rows = [
        {"nodeid": f"{spec}::test_negative_clip_value_is_rejected[torchrl]", "outcome": "fail", "message": "x"},
        {"nodeid": f"{spec}::test_true_means_clip_epsilon[torchrl-eps=0.3]", "outcome": "fail", "message": "boom"},
        {"nodeid": f"{spec}::test_true_means_clip_epsilon[torchrl-eps=0.125]", "outcome": "pass", "message": ""},
    ]
    results.write_text(json.dumps({"rows": rows, "implementations": {"torchrl": "0.9.2"},
                                   "stack": {"torch": "2.13.0", "tensordict": "0.9.1"}}))
    known = ROOT / "conformance" / "expectations" / "torchrl-0.14.1.txt"
    lines = draft_expectations.draft(results, [known])
    assert f"{spec}::test_negative_clip_value_is_rejected | clip_value is not validated" in "\n".join(lines)
    flagged = [line for line in lines if "REVIEW" in line]
    assert flagged == [f"{spec}::test_true_means_clip_epsilon[torchrl-eps=0.3] | REVIEW: boom | TODO"]
    drafted = tmp_path / "draft.txt"
    drafted.write_text("\n".join(lines))
    with pytest.raises(exp.ExpectationsError, match="upstream link"):
        exp.parse(drafted, frozenset({"torchrl"}))  # unreviewed drafts cannot be used
