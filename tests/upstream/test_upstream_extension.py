"""nox -s upstream: the C++ trees built from a source's own sources, cached, loaded in place of
the shipped ones; and every way that can fail naming its fix. No network: a tiny fake extension
(plain Python C API, one constant) stands in for torchrl/csrc, a local git repository for
pytorch/rl."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from conformance.upstream import extension, runner, sources

#: every test here reads a run of the whole suite on a mutant (a module fixture)
pytestmark = pytest.mark.slow

FAKE_CPP = r"""
#include <Python.h>
// a stand-in for torchrl/csrc/pybind.cpp: a module named _torchrl with the attribute the
// runner checks for (the real one is a pybind11 class)
static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_torchrl", nullptr, -1, nullptr};
PyMODINIT_FUNC PyInit__torchrl(void) {
  PyObject* m = PyModule_Create(&module);
  if (m != nullptr) PyModule_AddIntConstant(m, "SumSegmentTreeFp32", 42);
  return m;
}
"""

needs_compiler = pytest.mark.skipif(extension.compiler_problem() is not None,
                                    reason="needs a C++ compiler")


def FakeSource(kind: str, version: str, label: str, argument: str, path: Path | None = None):
    """A source of ``kind`` as the runner resolves it (its class owns where its C++ sources
    come from); its label is the one given."""
    source = sources.KINDS[kind](argument, version, path=path)
    assert source.label == label, (source.label, label)
    return source


def _package(root: Path, *, csrc: bool, shipped: bool = False) -> Path:
    """A folder holding a fake ``torchrl`` package (optionally with csrc and a broken .so)."""
    package = root / "torchrl"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("")
    if csrc:
        (package / "csrc").mkdir()
        (package / "csrc" / "pybind.cpp").write_text(FAKE_CPP)
        (package / "csrc" / "utils.h").write_text("// header\n")
    if shipped:  # built for another torch: here, not even an ELF file
        (package / "_torchrl.so").write_bytes(b"not an extension")
    return root


def _git_repo(root: Path, tag: str) -> Path:
    """A git repository whose tag has torchrl/csrc, as pytorch/rl's tags do."""
    repo = _package(root / "rl", csrc=True).resolve()
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t",
           "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@t"}
    for args in (["init", "-q"], ["add", "."], ["commit", "-q", "-m", "x"], ["tag", tag]):
        subprocess.run(["git", "-C", str(repo), *args], check=True, env=env, capture_output=True)
    return repo


@pytest.fixture(scope="module")
def work(tmp_path_factory):
    """One build folder for the module: the fake extension is compiled once, then cached."""
    return tmp_path_factory.mktemp("upstream-work")


def _import_built(overlay: Path, package_root: Path) -> str:
    code = "import torchrl._torchrl as m; print(m.SumSegmentTreeFp32, m.__file__)"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(overlay), str(package_root)])}
    return subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                          check=True).stdout.strip()


@needs_compiler
def test_checkout_is_built_from_its_own_sources_cached_and_loaded_in_place(tmp_path, work):
    root = _package(tmp_path / "checkout", csrc=True)
    source = FakeSource("checkout", "9.9.9", "9.9.9+checkout", str(root), root)
    logged = []
    trees = extension.prepare(source, sys.executable, str(root), work, None, logged.append)
    assert trees.problem is None, trees.problem
    assert trees.built and "built now" in trees.origin
    assert "the checkout's torchrl/csrc" in trees.origin and f"torch {torch.__version__}" in trees.origin
    assert any("building torchrl._torchrl from" in line for line in logged)  # progress line
    value, so = _import_built(trees.overlay, root).split()
    assert value == "42" and so.startswith(str(work / "ext"))  # the built one, not a shipped one
    assert trees.pythonpath("X").split(os.pathsep) == [str(trees.overlay), "X"]

    again = extension.prepare(source, sys.executable, str(root), work, None, logged.append)
    assert not again.built and "from the cache" in again.origin  # same sources, same torch
    csrc = root / "torchrl" / "csrc"
    digest = extension.sources_digest(csrc)
    (csrc / "utils.h").write_text("// changed\n")
    assert extension.sources_digest(csrc) != digest  # a changed header is a new build
    digest = extension.sources_digest(csrc)
    (csrc / "kernel.cu").write_text("// changed CUDA code, not read by the CPU build\n")
    assert extension.sources_digest(csrc) == digest


@needs_compiler
def test_release_without_sources_takes_them_from_the_git_tag(tmp_path, work):
    installed = _package(tmp_path / "site", csrc=False, shipped=True)
    source = FakeSource("release", "9.9.9", "9.9.9", "9.9.9")
    trees = extension.prepare(source, sys.executable, str(installed), work, None, print)
    assert trees.overlay is None and trees.origin.startswith("none")
    assert "does not load next to torch" in trees.problem
    assert "ships no torchrl/csrc" in trees.problem
    assert "— give a TorchRL git repository" in trees.problem and "--torchrl-git" in trees.problem
    assert "$TORCHRL_CONFORMANCE_GIT" in trees.problem

    repo = _git_repo(tmp_path / "git", "v9.9.9")
    for given in (str(repo), repo.as_uri()):  # a clone's path, or a URL (cloned shallowly)
        shutil.rmtree(work / "csrc", ignore_errors=True)
        trees = extension.prepare(source, sys.executable, str(installed), work, given, print)
        assert trees.problem is None, trees.problem
        assert f"torchrl/csrc at tag v9.9.9 of {given}" in trees.origin
        assert _import_built(trees.overlay, installed).split()[0] == "42"

    missing = FakeSource("release", "9.9.8", "9.9.8", "9.9.8")
    trees = extension.prepare(missing, sys.executable, str(installed), work, str(repo), print)
    assert "has no torchrl/csrc at tag v9.9.8" in trees.problem and "--torchrl-git" in trees.problem


def test_without_a_compiler_the_replay_specs_say_so_and_name_the_fix(tmp_path, monkeypatch):
    monkeypatch.setenv("CXX", str(tmp_path / "no-such-c++"))
    root = _package(tmp_path / "checkout", csrc=True)
    source = FakeSource("checkout", "9.9.9", "9.9.9+checkout", str(root), root)
    trees = extension.prepare(source, sys.executable, str(root), tmp_path / "work", None, print)
    assert trees.overlay is None and trees.origin == "none (build failed)"
    assert trees.problem.startswith("no C++ compiler: $CXX names")
    assert trees.problem.endswith("— " + extension.COMPILER_FIX)
    assert not (tmp_path / "work" / "ext").exists() or not any((tmp_path / "work" / "ext").iterdir())

    # the runner hands the reason to the replay specs only; other areas run as usual
    results = tmp_path / "9.9.9+checkout.json"
    runner.run_source(
        FakeSource("checkout", "9.9.9", "9.9.9+checkout", str(root)), "9.9.9+checkout",
        sys.executable, os.pathsep.join([str(runner.ROOT)]), [],
        ["-k", "empty_buffer or negative_clip"], results, trees_problem=trees.problem)
    rows = json.loads(results.read_text())["rows"]
    replay = [r for r in rows if r["area"] == "prioritized_replay"]
    assert replay and {r["outcome"] for r in replay} == {"untestable"}
    assert all(r["message"] == f"cannot be tested here: {trees.problem}" for r in replay)
    assert {r["outcome"] for r in rows if r["area"] == "ppo_value_clipping"} <= {"known failure", "fail"}


def test_shipped_extension_that_loads_is_kept(tmp_path):
    """The stack's own torchrl wheel is built for this torch: nothing is built."""
    trees = extension.prepare(FakeSource("release", "0.14.1", "0.14.1", "0.14.1"), sys.executable,
                              str(runner.ROOT), tmp_path, None, print)
    if trees.problem:  # a stack whose torchrl has no working extension: nothing to check here
        pytest.skip(trees.problem)
    assert trees.origin.startswith("shipped (_torchrl") and trees.overlay is None
    assert not (tmp_path / "ext").exists()


def test_base_environments_get_the_build_tools_and_old_numpy_for_old_torch():
    assert extension.base_extras("2.13.0") == ["setuptools", "ninja"]
    assert extension.base_extras("2.4.0") == ["setuptools", "ninja", "numpy<2"]


def test_a_build_that_takes_too_long_is_stopped_with_the_setting_to_raise(monkeypatch):
    with pytest.raises(RuntimeError, match=f"timed out after 0 s .*\\${extension.TIMEOUT_ENV}"):
        extension._run_json(sys.executable, ["probe"], dict(os.environ), timeout=0.01)
    monkeypatch.setenv(extension.TIMEOUT_ENV, "7200")
    assert extension.build_timeout() == 7200.0
