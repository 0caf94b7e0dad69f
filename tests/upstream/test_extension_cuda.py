"""The extension builder's CUDA build (TorchRL's CUDA trees for ``--device cuda``): what it
reads, how it is cached apart from the CPU build, and what it says when it cannot build."""

from __future__ import annotations

from pathlib import Path

from conformance.upstream import extension


def _csrc(tmp_path: Path) -> Path:
    csrc = tmp_path / "csrc"
    csrc.mkdir()
    (csrc / "pybind.cpp").write_text("// cpp\n")
    (csrc / "cuda_segment_tree.cu").write_text("// cu\n")
    return csrc


def test_cuda_sources_count_for_the_cuda_build_only(tmp_path):
    csrc = _csrc(tmp_path)
    cpu, cuda = extension.sources_digest(csrc), extension.sources_digest(csrc, cuda=True)
    assert cpu != cuda
    (csrc / "cuda_segment_tree.cu").write_text("// changed\n")
    assert extension.sources_digest(csrc) == cpu  # the CPU build never reads .cu
    assert extension.sources_digest(csrc, cuda=True) != cuda  # a changed kernel is a new build


def test_no_nvcc_is_one_line_with_the_fix(tmp_path, monkeypatch):
    monkeypatch.setenv("CUDA_HOME", str(tmp_path))
    problem = extension.nvcc_problem()
    assert problem == (f"no CUDA compiler: $CUDA_HOME ({tmp_path}) has no bin/nvcc — "
                       f"{extension.NVCC_FIX}")


def test_cuda_build_without_cuda_sources_says_so(tmp_path):
    csrc = tmp_path / "csrc"
    csrc.mkdir()
    (csrc / "pybind.cpp").write_text("// cpp\n")
    try:
        extension._build(str(csrc), str(tmp_path / "out"), cuda=True)
    except SystemExit as exc:
        assert str(exc).startswith(f"no CUDA sources (*.cu) in {csrc}")
    else:
        raise AssertionError("a CUDA build without .cu sources did not stop")


def test_bad_command_line_is_the_usage(capsys):
    assert extension.main(["build", "a", "b", "--fast"]) == 2
    assert extension.main(["cuda-overlay"]) == 2
    assert capsys.readouterr().err.splitlines() == [extension.USAGE, extension.USAGE]
