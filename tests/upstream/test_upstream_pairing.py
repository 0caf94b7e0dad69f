"""The rule chain that pairs a git commit of pytorch/rl with a tensordict (with a fake index)."""

import pytest

from conformance.upstream import pairing

NIGHTLIES = ["2024.11.4", "2024.11.5", "2024.12.19", "0.8.0"]


def _tree(tmp_path, name, text):
    (tmp_path / name).write_text(text)
    return tmp_path


def test_own_requirement_first_then_the_newest_nightly_before_the_commit_date(tmp_path):
    tree = _tree(tmp_path, "pyproject.toml", 'dependencies = [\n    "torch>=2.1.0",\n'
                 '    "tensordict>=0.12.0,<0.13.0",\n]\n')
    chain = pairing.candidates(tree, "abc", "2024.11.30", lambda: NIGHTLIES)
    assert [c.tensordict for c in chain] == ["tensordict==0.12.*",
                                             "tensordict-nightly==2024.11.5"]
    assert "own requirement `tensordict>=0.12.0,<0.13.0`" in chain[0].why
    assert "on or before the commit's date 2024.11.30" in chain[1].why


def test_setup_py_requirement_and_no_nightly_index_needed_before_the_date_rule(tmp_path):
    tree = _tree(tmp_path, "setup.py", 'tensordict_dep = "tensordict-nightly"\nelse:\n'
                 '    tensordict_dep = "tensordict>=0.6.0"\n')
    assert pairing.own_requirement(tree) == ">=0.6.0"
    chain = pairing.candidates(tree, "abc", None, lambda: pytest.fail("index read"))
    assert [c.tensordict for c in chain] == ["tensordict==0.6.*"]


def test_no_rule_applies_before_every_nightly_or_without_an_index(tmp_path):
    assert pairing.candidates(tmp_path, "abc", "2022.1.1", lambda: NIGHTLIES) == []

    def unreachable():
        raise ValueError("cannot list tensordict-nightly on the package index")
    assert pairing.candidates(tmp_path, "abc", "2024.11.30", unreachable) == []


def test_measured_overrides_come_last(tmp_path, monkeypatch):
    monkeypatch.setitem(pairing.OVERRIDES, "abc", ("tensordict==0.7.1", "imports (2026-11-25)"))
    chain = pairing.candidates(tmp_path, "abc", "2024.11.30", lambda: NIGHTLIES)
    assert [c.tensordict for c in chain] == ["tensordict-nightly==2024.11.5", "tensordict==0.7.1"]
