"""The asv benchmarks are well-formed, skip what is unavailable, and the report reads them."""

import importlib
import inspect
import json
from pathlib import Path

import pytest

from benchmarks import common, run

BENCH_DIR = Path(__file__).resolve().parent.parent / "benchmarks"
MODULES = sorted(p.stem for p in BENCH_DIR.glob("bench_*.py"))


def _classes():
    for name in MODULES:
        module = importlib.import_module(f"benchmarks.{name}")
        for _, cls in inspect.getmembers(module, inspect.isclass):
            if cls.__module__ == module.__name__ and hasattr(cls, "params"):
                yield name, cls


def test_every_area_has_a_benchmark_module():
    assert {"bench_ppo_value_clipping"} <= set(MODULES)


@pytest.mark.parametrize(("module", "cls"), list(_classes()), ids=lambda x: getattr(x, "__name__", x))
def test_classes_are_parametrised_by_implementation_and_device(module, cls):
    names = cls.param_names
    assert "device" in names and cls.params[names.index("device")] == common.DEVICES
    if "implementation" in names:
        assert names[0] == "implementation" and cls.params[0] == common.IMPLEMENTATIONS
    else:  # plain torch ops measured as the yardstick of a ratio (e.g. one torch.tanh)
        assert "Baseline" in cls.__name__, f"{cls.__name__} has no implementation axis"
    methods = [m for m in dir(cls) if m.startswith(("time_", "peakmem_", "track_"))]
    assert methods, f"{cls.__name__} measures nothing"


@pytest.mark.parametrize(("module", "cls"), list(_classes()), ids=lambda x: getattr(x, "__name__", x))
def test_cuda_points_skip_cleanly_without_a_gpu(module, cls):
    import torch

    if torch.cuda.is_available():
        pytest.skip("a GPU is present")
    params = [values[0] for values in cls.params]
    params[cls.param_names.index("device")] = "cuda"
    with pytest.raises(NotImplementedError, match="CUDA"):
        cls().setup(*params)


def test_report_reads_asv_results_and_computes_ratios(tmp_path, monkeypatch):
    results = tmp_path / "results"
    (results / "m").mkdir(parents=True)
    (results / "benchmarks.json").write_text(json.dumps({
        "bench_x.B.time_f": {"param_names": ["implementation", "device", "size"]}}))
    (results / "m" / "abc-existing.json").write_text(json.dumps({
        "commit_hash": "abc", "params": {"machine": "m"},
        "result_columns": ["result", "params"],
        "results": {"bench_x.B.time_f": [[1.0, 4.0, None, None, 2.0, 2.0, None, None],
                                         [["'reference'", "'torchrl'"], ["'cpu'", "'cuda'"],
                                          ["10", "100"]]]},
    }))
    monkeypatch.setattr(run, "RESULTS", results)
    monkeypatch.setattr(run, "_PARAM_NAMES", {})
    points = list(run.rows(run.latest_results()))
    assert points[0] == ("bench_x.B.time_f", {"implementation": "reference", "device": "cpu",
                                               "size": "10"}, 1.0)
    table = run.ratio_table(points)
    assert table[-1] == "| `bench_x.B.time_f` | 2 | 0.5 | 1.25 | 2 |"
