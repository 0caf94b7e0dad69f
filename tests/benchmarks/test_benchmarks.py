"""The benchmarks: one workload definition per measurement, built through the registry, driven
by asv classes and by the side-by-side run; the report reads what pytest-benchmark writes."""

import inspect
import json
import subprocess
import sys

import pytest

from benchtools import groups, registry
from benchtools.results import load
from benchtools.targets import Points, Stats
from conformance.areas import ORDER
from conformance.paths import ROOT


def _asv_classes():
    for module in groups.modules():
        for name, cls in vars(module).items():
            if inspect.isclass(cls) and hasattr(cls, "params") and hasattr(cls, "param_names"):
                yield pytest.param(cls, id=f"{module.__name__.split('.')[-1]}.{name}")


def test_every_area_has_workloads_in_its_own_module():
    modules = groups.modules()
    assert [m.__name__ for m in modules] == [f"benchmarks.bench_{a.name}" for a in ORDER]
    for module, area in zip(modules, ORDER, strict=True):
        assert module.WORKLOADS, f"{module.__name__} measures nothing"
        assert {w.area for w in module.WORKLOADS} <= {area.name, None}


def test_workload_code_lives_in_the_workloads_only():
    # the asv method is the one generic caller; no bench module builds implementations itself
    for module in groups.modules():
        source = inspect.getsource(module)
        assert "from impls" not in source and 'implementation == "' not in source, module.__name__
        assert "__main__" not in source, f"{module.__name__} still carries an evidence script"


@pytest.mark.parametrize("cls", list(_asv_classes()))
def test_asv_classes_are_parametrised_by_implementation_and_device(cls):
    names = cls.param_names
    assert names[names.index("device")] == "device"
    assert cls.params[names.index("device")] == registry.DEVICES
    methods = [m for m in dir(cls) if m.startswith(("time_", "track_"))]
    assert len(methods) == 1, methods
    if methods[0].startswith("time_"):  # raw times: every implementation, versioned by workload
        if "implementation" in names:
            assert names[0] == "implementation" and cls.params[0] == registry.IMPLEMENTATIONS
        assert getattr(cls, methods[0]).version
    else:  # a ratio, timed in turns; versus the baseline: the other implementations only
        assert methods == ["track_ratio"] and cls.unit == "ratio"
        assert names[0] == "implementation"
        assert set(cls.params[0]) <= set(registry.IMPLEMENTATIONS)


@pytest.mark.parametrize("cls", list(_asv_classes()))
def test_cuda_points_skip_cleanly_without_a_gpu(cls):
    import torch

    if torch.cuda.is_available():
        pytest.skip("a GPU is present: the cuda points run")
    params = [values[0] for values in cls.params]
    params[cls.param_names.index("device")] = "cuda"
    with pytest.raises(NotImplementedError, match="CUDA"):
        cls().setup(*params)


@pytest.mark.parametrize(("area", "workload"),
                         [pytest.param(a, w, id=f"{a}.{w.name}") for a, w in groups.workloads()])
def test_every_workload_runs_on_the_reference_at_its_smallest_point(area, workload):
    impl = "reference" if workload.area else None
    if not list(workload.points("cpu")):  # a cuda-only workload: refused on the CPU, clearly
        params = next(workload.points("cuda"))
        with pytest.raises(NotImplementedError, match="cuda-only point"):
            workload.build(impl, "cpu", **params)
        return
    params = {k: v[0] for k, v in workload.params.items()}
    timed = workload.build(impl, "cpu", **params)
    if timed.before:
        timed.before()
    timed.call()


def test_a_plugged_in_implementation_is_benchmarked_through_the_registry(monkeypatch):
    plugin = "tests.mutants.ppo_value_clipping:CLIPPED_ONLY"
    monkeypatch.setattr(registry, "IMPLEMENTATIONS", [plugin])
    registry._selected.cache_clear()
    try:
        from benchmarks.bench_ppo_value_clipping import CRITIC
        from benchmarks.bench_tanh_normal_mode import MODE

        CRITIC.build(plugin, "cpu", size=100).call()
        with pytest.raises(NotImplementedError, match="does not provide tanh_normal_mode"):
            MODE.build(plugin, "cpu", dtype="float32", size=100)
    finally:
        registry._selected.cache_clear()


def test_importing_the_runner_loads_no_pytest_plugin():
    code = ("import sys, benchtools.cli, benchtools.report; "
            "bad = [m for m in sys.modules if m.startswith(('conformance.plugin', 'pytest', "
            "'_pytest', 'pytest_benchmark'))]; print(bad); sys.exit(bool(bad))")
    proc = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_an_unknown_implementation_is_one_line_and_exit_code_4():
    proc = subprocess.run([sys.executable, "-m", "benchtools", "--impl", "nosuch"],
                          cwd=ROOT, capture_output=True, text=True)
    from conformance.implementations import choices_text

    assert proc.returncode == 4
    assert proc.stderr.strip().splitlines() == [
        f"ERROR: unknown implementation 'nosuch'; choose {choices_text()}"]


def _bench(workload, impl, params, median, lo=None, hi=None):
    """A group entry as ``benchtools.side_by_side`` records it, with one call."""
    call = {"workload": workload, "implementation": impl, "device": "cpu", "params": params,
            "cycles": [median], "rounds": 5, "min": lo or median, "max": hi or median}
    return {"extra_info": {"group": f"{workload}{params}-{impl}", "calls": [call]}}


def _points(tmp_path, name, benches):
    path = tmp_path / name
    path.write_text(json.dumps({"benchmarks": benches, "datetime": "2026-11-23T00:00:00"}))
    return load(path).points


def test_report_ratios_and_targets_from_a_pytest_benchmark_json(tmp_path):
    results = tmp_path / "side_by_side.json"
    caps = {"reference": (1e-4, 1.5e-4), "torchrl": (1e-4, 2e-3)}
    benches = [_bench("extend_over_max", impl, {"capacity": str(c)}, t)
               for impl, (small, big) in caps.items()
               for c, t in ((1000, small), (10000, small), (100000, big), (1000000, big))]
    results.write_text(json.dumps({"benchmarks": benches, "datetime": "2026-11-23T00:00:00"}))
    run = load(results)
    points, impls = run.points, run.implementations
    assert impls == ["reference", "torchrl"]
    from benchtools.report import ratio_table

    table = ratio_table(points, impls, "cpu")
    row = next(line for line in table if "extend_over_max" in line)
    assert row == "| `prioritized_replay.extend_over_max` | reference | 4 | 0.075 | 0.537 | 1 |"
    from benchmarks.bench_prioritized_replay import TARGETS

    growth = TARGETS[0].lines(points, impls)
    assert growth == [
        "- PER extend over the max slot, reference: time(1e6) / time(1e3) = **1.5** "
        "(target <= 2: met)",
        "- PER extend over the max slot, torchrl: time(1e6) / time(1e3) = **20** "
        "(target <= 2: NOT met)"]
    assert TARGETS[1].lines(points, impls) == [
        "- PER sample_256, reference / torchrl C++ trees (max over capacities 4e3 .. 1e7): "
        "not measured (target <= 1.0)"]


def test_points_key_parameters_by_their_text():
    points = Points()
    points.add("w", "reference", "cpu", {"size": "100", "skip": "True"}, Stats(1, 2, 3, 4))
    assert points.median("w", "reference", size=100, skip=True) == 2
    assert points.median("w", "torchrl", size=100, skip=True) is None


def test_repeatability_flags_points_above_100us_that_moved_more_than_20_percent(tmp_path):
    from benchtools.repeatability import compare

    rows = [("w", {"size": "1"}, 1e-3, 1.1e-3), ("w", {"size": "2"}, 1e-3, 1.5e-3),
            ("w", {"size": "3"}, 1e-5, 1e-4 * 0.5)]  # both below 100 µs: timer noise, ignored
    lines = compare(_points(tmp_path, "a.json", [_bench(w, "reference", p, a) for w, p, a, _ in rows]),
                    _points(tmp_path, "b.json", [_bench(w, "reference", p, b) for w, p, _, b in rows]))
    assert lines[0].startswith("2 points above 100 µs measured in both runs")
    assert lines[0].endswith("1 outside ±20%")
    assert lines[1:] == ["  - `w` reference size=2: 1.50"]


def test_history_table_reads_asv_results_by_release(tmp_path):
    from benchtools.history import table

    name = "bench_prioritized_replay.ExtendOverMax.time_extend_over_max"
    (tmp_path / "vm").mkdir()
    for release, values in (("0.14.1", [1e-3, 2e-3, None, None]),
                            ("0.6.0", [float("nan"), float("nan"), None, None])):
        path = tmp_path / "vm" / f"abc-existing-py_x_.asv_history_torchrl-{release}_bin_python.json"
        path.write_text(json.dumps({"result_columns": ["result", "params"], "results": {
            name: [values, [["'reference'"], ["'cpu'", "'cuda'"], ["1000", "1000000"]]]}}))
    assert table(name, tmp_path) == [
        "| parameters | torchrl 0.6.0 | torchrl 0.14.1 |", "|---|---|---|",
        "| reference, cpu, 1000 | n/a | 1 ms |", "| reference, cpu, 1000000 | n/a | 2 ms |"]


def test_history_drops_cuda_numbers_recorded_without_cuda(tmp_path):
    from benchtools.history import drop_cuda_points

    name = "bench_prioritized_replay.ExtendOverMax.time_extend_over_max"
    path = tmp_path / "r.json"
    path.write_text(json.dumps({"result_columns": ["result", "params", "samples"], "results": {
        name: [[1e-3, 0.07], [["'torchrl'"], ["'cpu'", "'cuda'"], ["10000"]], [[1e-3], [0.07]]]}}))
    assert drop_cuda_points(path) == [f"{name}[\"'torchrl'\", \"'cuda'\", '10000']: 0.07 s"]
    result, _, samples = json.loads(path.read_text())["results"][name]
    assert result == [1e-3, None] and samples == [[1e-3], None]
    assert drop_cuda_points(path) == []  # nothing left to drop: the file is not rewritten


def test_repeatability_also_checks_the_ratios_the_report_quotes(tmp_path):
    """A whole run 20% slower moves every median but no ratio."""
    from benchtools.repeatability import compare

    points = [("reference", 1e-3), ("torchrl", 2e-3)]
    lines = compare(_points(tmp_path, "a.json", [_bench("w", i, {"size": "1"}, t) for i, t in points]),
                    _points(tmp_path, "b.json", [_bench("w", i, {"size": "1"}, t * 1.25)
                                                 for i, t in points]))
    assert lines[0].endswith("2 outside ±20%")
    assert lines[-1] == ("1 implementation / torchrl ratios above 100 µs: second / first min 1.00, "
                         "median 1.00, max 1.00; 0 outside ±20%")


def test_asv_discovers_only_the_area_benchmarks_and_their_ratios():
    """What asv finds in benchmarks/ (its own discovery): the bench_<area> modules' time_ and
    track_ratio methods, nothing of the harness."""
    discovery = pytest.importorskip("asv_runner.discovery")
    found = [b.name for b in discovery.disc_benchmarks(str(ROOT / "benchmarks"))]
    modules = {name.split(".")[0] for name in found}
    assert modules == {f"bench_{area.name}" for area in ORDER}
    assert all(name.split(".")[-1].startswith(("time_", "track_ratio")) for name in found), found
    ratios = [name for name in found if name.endswith(".track_ratio")]
    assert "bench_ppo_value_clipping.CriticLossClippedVersusTorchrl.track_ratio" in ratios
    assert "bench_tanh_normal_mode.TanhNormalModeOverTanh.track_ratio" in ratios


def test_a_tracked_ratio_is_timed_in_turns_at_a_point():
    from benchmarks.bench_ppo_value_clipping import CriticLossClippedVersusTorchrl
    from benchmarks.bench_tanh_normal_mode import TanhNormalModeOverTanh

    bench = CriticLossClippedVersusTorchrl()
    bench.setup("reference", "cpu", 100)
    value = bench.track_ratio("reference", "cpu", 100)
    assert 0.2 < value < 5  # the same loss on both sides: a ratio near 1
    over = TanhNormalModeOverTanh()
    over.setup("reference", "cpu", "float32", 100)
    assert over.track_ratio("reference", "cpu", "float32", 100) > 1  # the mode costs > one tanh
    numerator, denominator = over.pair
    assert len(numerator.cycles) == len(denominator.cycles) >= 3


def test_the_report_names_the_machines_load_when_the_results_have_it():
    from benchtools.report import _load_note

    note = _load_note({"load": {"start": [7.25, 7.33, 6.54], "end": [8.0, 7.5, 6.9]}})
    assert note == (" Load average (1 / 5 / 15 min): 7.25 / 7.33 / 6.54 at the start, "
                    "8 / 7.5 / 6.9 at the end: the machine was shared, which is why only "
                    "paired ratios are quoted.")
    assert _load_note({}) == ""  # results from before the load was recorded
