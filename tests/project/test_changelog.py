"""Suite releases: the CHANGELOG check (conformance.changelog) on small fixture manifests, the
real check on the committed manifest, and the version named once (package, workflow, docs)."""

from __future__ import annotations

import re

import pytest

from conformance import __version__, changelog
from conformance.paths import ROOT

A = "conformance/test_x.py::test_a"
B = "conformance/test_x.py::test_b[p=1]"
C = "conformance/test_x.py::test_c"


def _manifest(*ids: str, version: str | None = None) -> dict:
    document = {"areas": {"x": list(ids)}}
    if version:
        document["version"] = version
    return document


def _log(*unreleased: str) -> str:
    return "\n".join(["# Changelog", "", "## Unreleased", "", *unreleased, "", "## 0.1.0", "",
                      "- first release", "- removed `" + B + "`: an entry of the release itself"])


def test_unchanged_ids_need_no_entry():
    assert changelog.problems(_manifest(A, B, version="0.1.0"), _manifest(A, B, C), _log()) == []


def test_a_removed_id_without_an_entry_is_named():
    found = changelog.problems(_manifest(A, B, version="0.1.0"), _manifest(A), _log())
    assert len(found) == 1 and B in found[0] and "release 0.1.0" in found[0]


def test_an_entry_of_the_release_itself_does_not_excuse_a_later_removal():
    # the 0.1.0 section mentions B; only entries above it count
    assert changelog.problems(_manifest(A, B, version="0.1.0"), _manifest(A), _log()) != []


def test_a_removed_entry_excuses_the_id():
    log = _log(f"- removed `{B}`: merged into test_a")
    assert changelog.problems(_manifest(A, B, version="0.1.0"), _manifest(A), log) == []


def test_a_changed_id_is_a_removal_unless_a_rename_says_so():
    released, current = _manifest(A, B, version="0.1.0"), _manifest(A, C)
    assert any(B in p for p in changelog.problems(released, current, _log()))
    log = _log(f"- renamed `{B}` -> `{C}`: clearer name")
    assert changelog.problems(released, current, log) == []


def test_a_rename_to_an_id_that_does_not_exist_is_a_problem():
    log = _log(f"- renamed `{B}` -> `conformance/test_x.py::test_typo`: clearer name")
    found = changelog.problems(_manifest(A, B, version="0.1.0"), _manifest(A, C), log)
    assert any("test_typo" in p for p in found)


def test_an_entry_that_names_the_id_without_backticks_does_not_count():
    log = _log(f"- removed {B}: no backticks")
    assert changelog.problems(_manifest(A, B, version="0.1.0"), _manifest(A), log) != []


def test_a_changelog_without_the_released_version_is_an_error():
    with pytest.raises(changelog.ChangelogError, match="0.2.0"):
        changelog.problems(_manifest(A, version="0.2.0"), _manifest(A), _log())


def test_the_committed_manifest_agrees_with_the_changelog():
    """The real check: every id of the last release is still in conformance/manifest.json, or a
    CHANGELOG.md entry since says where it went."""
    released = changelog._load(changelog.RELEASED)
    current = changelog._load(changelog.MANIFEST)
    problems = changelog.problems(released, current, changelog.CHANGELOG.read_text())
    assert problems == [], "\n".join(problems)


def test_the_released_baseline_is_a_version_of_the_changelog_not_newer_than_the_suite():
    from packaging.version import Version

    released = changelog._load(changelog.RELEASED)["version"]
    assert Version(released) <= Version(__version__)


def test_the_version_is_named_once_and_the_workflow_pins_it():
    """pyproject reads conformance.__version__; the reusable workflow's default suite-ref and
    the gating docs name its tag."""
    pyproject = (ROOT / "pyproject.toml").read_text()
    assert 'dynamic = ["version"]' in pyproject and 'attr = "conformance.__version__"' in pyproject
    workflow = (ROOT / ".github" / "workflows" / "torchrl-conformance.yml").read_text()
    default = re.search(r"suite-ref:\n(?:\s+\w+:.*\n)*?\s+default:\s*(\S+)", workflow)
    assert default and default.group(1) == f"v{__version__}"
    tags = set(re.findall(r"torchrl-conformance\.yml@(v[\w.]+)", (ROOT / "docs" / "gating.md").read_text()))
    assert tags == {f"v{__version__}"}
