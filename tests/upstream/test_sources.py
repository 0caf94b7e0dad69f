"""Sources given to the upstream runner: their labels name files, their installs are keyed by
content, their default expectations, and the version that imports."""

from __future__ import annotations

import os
import shutil

import pytest

from conformance.upstream import environment, runner, sources
from tests.conftest import ROOT
from tests.rows import PY


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
    label = sources.KINDS[kind]("x", version, commit="../../abcdef").label
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


def test_git_sources_are_judged_against_expectations():
    git = sources.GitRef("git:x@main", "0.15.0", commit="a" * 40)
    assert runner.default_expectations(git) == [str(runner.NIGHTLY_EXPECTATIONS)]
    tagged = sources.GitRef("git:x@v0.14.1", "0.14.1", commit="a" * 40)
    assert runner.default_expectations(tagged)[0].endswith("torchrl-0.14.1.txt")
    # a checkout of main is a development tree too: without this it was judged against no
    # expectations at all (every known bug read as a regression)
    checkout = sources.Checkout("/work/rl", "0.14.0")
    assert runner.default_expectations(checkout) == [str(runner.NIGHTLY_EXPECTATIONS)]


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
