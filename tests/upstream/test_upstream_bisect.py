"""nox -s bisect: the search over a small synthetic git history, without network or torchrl."""

import subprocess

import pytest

from conformance.upstream import bisect
from tests.rows import spec_row as _row


def _repo(tmp_path, flips_at: int, n: int = 13):
    """A history of n commits; the spec's verdict file says "fail" before commit ``flips_at``
    and "pass" from it on; every commit names a pull request."""
    repo = tmp_path / "rl"
    git = ["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    for i in range(n):
        (repo / "verdict").write_text("pass" if i >= flips_at else "fail")
        (repo / "counter").write_text(str(i))
        subprocess.run([*git, "add", "."], check=True)
        subprocess.run([*git, "commit", "-qm", f"[Feature] change {i} (#{3900 + i})"], check=True)
        if i == 0:
            subprocess.run([*git, "tag", "good"], check=True)
    subprocess.run([*git, "tag", "bad"], check=True)
    return str(repo)


def _evaluator(repo, seen):
    def evaluate(commit):
        seen.append(commit.sha)
        text = subprocess.run(["git", "-C", repo, "show", f"{commit.sha}:verdict"],
                              capture_output=True, text=True, check=True).stdout
        return bisect.Step(commit, {"spec": text}, {"spec": f"message at {commit.subject}"})
    return evaluate


@pytest.mark.parametrize("flips_at", [1, 5, 12])
def test_search_names_the_first_commit_that_changes_the_verdict(tmp_path, flips_at):
    repo = _repo(tmp_path, flips_at)
    good_commit, commits = bisect.history(repo, "good", "bad")
    assert len(commits) == 12 and commits[0].subject.startswith("[Feature] change 1 ")
    seen = []
    evaluate = _evaluator(repo, seen)
    before, culprit, steps = bisect.search(evaluate(good_commit), commits, evaluate,
                                           log=lambda _: None)
    assert culprit.commit.subject == f"[Feature] change {flips_at} (#{3900 + flips_at})"
    assert culprit.commit.pull_request == 3900 + flips_at
    assert (before.verdicts, culprit.verdicts) == ({"spec": "fail"}, {"spec": "pass"})
    assert len(seen) <= 1 + 1 + 4  # good, bad, then log2(12) halvings
    result = bisect.answer(repo, before, culprit, steps, 1.0)
    assert result["specs"]["spec"]["message_after"].endswith(f"(#{3900 + flips_at})")


def test_nothing_to_find_and_bad_refs_are_one_line_errors(tmp_path):
    repo = _repo(tmp_path, flips_at=99, n=4)
    good_commit, commits = bisect.history(repo, "good", "bad")
    evaluate = _evaluator(repo, [])
    with pytest.raises(bisect.BisectError, match="nothing changed"):
        bisect.search(evaluate(good_commit), commits, evaluate, log=lambda _: None)
    with pytest.raises(bisect.BisectError, match="not an ancestor"):
        bisect.history(repo, "bad", "good")
    with pytest.raises(bisect.BisectError, match="not a branch, tag or commit name"):
        bisect.history(repo, "good;touch x", "bad")
    with pytest.raises(bisect.BisectError, match="not a directory"):
        bisect.history("--upload-pack=x", "good", "bad")


def test_bisect_sees_a_new_failure_beside_a_known_one():
    """As tried: the set of outcome names ("fail,pass") read the same before and after."""
    node = "conformance/test_x.py::t"
    before = [_row(node + "[a]", outcome="known failure"), _row(node + "[b]")]
    after = [_row(node + "[a]", outcome="known failure"), _row(node + "[b]", outcome="fail")]
    old, _ = bisect.per_spec(before, [node], "")
    new, _ = bisect.per_spec(after, [node], "")
    assert old != new
    assert new[before[1]["nodeid"]] == "fail (unexpected)"


def test_bisect_json_is_checked_before_the_bisect(tmp_path, capsys):
    """As tried: --json /nonexistent/x.json failed after the whole bisect."""
    with pytest.raises(SystemExit) as info:
        bisect.main(["--repo", str(tmp_path), "--good", "a", "--bad", "b", "conformance",
                     "--json", "/nonexistent/x.json"])
    assert info.value.code == 2
    assert "--json /nonexistent/x.json" in capsys.readouterr().err
