"""Timing on a device, checked on the CPU with a fake device: every call the tools run on a cuda
point ends with a synchronisation, so the clock is only read with the device's queue empty; the
warm-up calls come before the first timed one; asv's timer follows the point's device; cuda-only
sizes stay out of the CPU's grid; cuda targets are "not measured" on a CPU run; the floors'
arithmetic. No timing is asserted."""

from __future__ import annotations

import json

import pytest

from benchtools import clock as clocks
from benchtools import floors, groups, registry, turns
from benchtools.targets import Points, Stats
from benchtools.workload import Timed, Workload, asv_class, asv_versus_baseline, timing


class FakeDevice:
    """A device whose every event (kernel work, synchronisation, clock read) is logged; a call's
    work counts as queued until the next synchronisation."""

    def __init__(self, warmup=2):
        self.log: list[str] = []
        self.now = 0.0
        self.queued = 0
        self.clock = clocks.DeviceClock("cuda", self.read, self.sync, warmup)

    def read(self) -> float:
        self.log.append("read")
        assert self.queued == 0, f"the clock was read with {self.queued} call(s) queued"
        return self.now

    def sync(self):
        self.log.append("sync")
        self.queued = 0

    def work(self, name):
        def run():
            self.log.append(name)
            self.queued += 1
            self.now += 1e-6  # a fast call: several a round
        return run


def _workload(device: FakeDevice, fresh=False, **extra):
    def prepare(area, dev, *, size):
        device.work("prepare")()
        return Timed(device.work("call"), device.work("before") if fresh else None)

    return Workload("w", None, {"size": [1]}, prepare, **extra)


def test_every_call_ends_with_a_synchronisation_and_is_warmed_up_before_it_is_timed():
    device = FakeDevice(warmup=2)
    record = timing(_workload(device), None, "cpu", device.clock, size=1)
    # prepare's queued work is synchronised; 2 warm-up calls; the probe call, bracketed
    assert device.log[:10] == ["prepare", "sync", "call", "sync", "call", "sync",
                               "read", "call", "sync", "read"]
    device.log.clear()
    turns.run([record], device.clock, budget=0.0, min_cycles=1)
    loops = record.loops
    assert loops > 1  # calibrated: several calls a round, each one completed
    assert device.log[:2 + 2 * loops] == ["read", *["call", "sync"] * loops, "read"]
    calls = [i for i, event in enumerate(device.log) if event == "call"]
    assert all(device.log[i + 1] == "sync" for i in calls)


def test_the_untimed_before_of_a_fresh_state_call_is_synchronised_too():
    device = FakeDevice(warmup=1)
    record = timing(_workload(device, fresh=True), None, "cpu", device.clock, size=1)
    assert device.log == ["prepare", "sync", "before", "sync", "call", "sync",  # warm-up
                          "before", "sync", "read", "call", "sync", "read"]  # probe, no
    assert record.loops == 1  # calibration: a fresh-state call is one a round
    device.log.clear()
    turns.run([record], device.clock, budget=0.0, min_cycles=1)
    assert device.log[:6] == ["before", "sync", "read", "call", "sync", "read"]


def test_two_implementations_in_turns_each_call_completed_before_the_clock_is_read():
    device = FakeDevice(warmup=0)
    a = timing(_workload(device), None, "cpu", device.clock, size=1)
    b = timing(_workload(device), None, "cpu", device.clock, size=1)
    device.log.clear()
    turns.run([a, b], device.clock, budget=0.0, min_cycles=2)  # FakeDevice.read checks
    assert len(a.cycles) == len(b.cycles) == 2


def test_the_cpu_clock_adds_nothing_around_a_call():
    cpu = clocks.of("cpu")
    call = object()  # not even called: the very same object comes back
    assert cpu.complete(call) is call and cpu.warmup == 0 and not cpu.synchronises
    assert cpu.read is registry.timer()


def test_cuda_without_a_device_is_refused_by_the_clock(monkeypatch):
    monkeypatch.setattr(clocks, "cuda_available", lambda: False)
    with pytest.raises(NotImplementedError, match="^no CUDA device$"):
        clocks.of("cuda")


def test_the_cuda_clock_is_wall_time_with_torch_synchronize(monkeypatch):
    import time

    import torch

    monkeypatch.setattr(clocks, "cuda_available", lambda: True)
    synced = []
    monkeypatch.setattr(torch.cuda, "synchronize", lambda: synced.append(1))
    cuda = clocks.of("cuda")
    assert cuda.read is time.perf_counter and cuda.warmup == clocks.CUDA_WARMUP
    cuda.complete(lambda: None)()
    assert synced == [1]


@pytest.fixture
def fake_cuda(monkeypatch):
    """cuda points built on the CPU with a FakeDevice's clock (no GPU needed)."""
    import torch

    device = FakeDevice(warmup=2)
    real_of, real_device = clocks.of, registry.device
    monkeypatch.setattr(clocks, "of", lambda name: device.clock if name == "cuda"
                        else real_of(name))
    monkeypatch.setattr(registry, "device", lambda name: real_device("cpu") if name == "cuda"
                        else real_device(name))
    yield device
    clocks.use(clocks.of("cpu"))
    assert torch.get_num_threads() >= 1


def test_asv_times_a_cuda_point_on_the_device_clock_with_every_call_completed(fake_cuda):
    device = fake_cuda
    cls = asv_class("W", _workload(device))
    bench = cls()
    bench.setup("cuda", 1)
    assert device.log == ["prepare", "sync", "call", "sync", "call", "sync"]  # + warm-up
    device.log.clear()
    # asv's timeit: timer(), the calls, timer(); asv reads the timer off the instance, and it
    # is the point's device clock
    timer = bench.timer
    start = timer()
    bench.time_w("cuda", 1)
    took = timer() - start
    assert device.log == ["read", "call", "sync", "read"] and took > 0
    bench.setup("cpu", 1)  # a cpu point afterwards: the timer is the CPU's again
    assert clocks._ACTIVE[0].device == "cpu"


def test_an_asv_ratio_on_a_cuda_point_is_timed_on_the_device_clock(fake_cuda, monkeypatch):
    device = fake_cuda
    monkeypatch.setattr(registry, "IMPLEMENTATIONS", ["reference", "torchrl"])
    monkeypatch.setattr(registry, "area_of", lambda impl, area: None)

    def prepare(area, dev, *, size):
        return Timed(device.work("call"))

    cls = asv_versus_baseline("R", Workload("w", "any_area", {"size": [1]}, prepare))
    bench = cls()
    bench.setup("reference", "cuda", 1)
    assert bench.clock is device.clock
    assert bench.track_ratio("reference", "cuda", 1) == pytest.approx(1.0)


def test_cuda_only_sizes_are_points_of_the_cuda_grid_only():
    from benchmarks.bench_prioritized_replay import SAMPLE_LARGE
    from benchmarks.bench_tanh_normal_mode import MODE

    assert {p["size"] for p in MODE.points("cpu")} == {100, 1_000, 10_000, 100_000}
    assert {p["size"] for p in MODE.points("cuda")} == {100, 1_000, 10_000, 100_000, 1_000_000}
    assert list(SAMPLE_LARGE.points("cpu")) == []
    assert list(SAMPLE_LARGE.points("cuda")) == [{"capacity": 1_000_000}]
    cpu = [(w.name, p) for g in groups.groups(["reference"], "cpu") for w, _, p in g.items]
    cuda = [(w.name, p) for g in groups.groups(["reference"], "cuda") for w, _, p in g.items]
    assert ("mode", {"dtype": "float32", "size": 1_000_000}) in cuda
    assert ("mode", {"dtype": "float32", "size": 1_000_000}) not in cpu
    assert not any(name in ("sample_65536", "update_65536") for name, _ in cpu)
    assert set(map(str, cpu)) < set(map(str, cuda))
    with pytest.raises(NotImplementedError, match="cuda-only point of mode"):
        MODE.build("reference", "cpu", dtype="float32", size=1_000_000)


def test_the_asv_grid_holds_the_cuda_sizes_for_the_device_parameter():
    from benchmarks.bench_tanh_normal_mode import TanhNormalMode, TanhNormalModeOverTanh

    for cls in (TanhNormalMode, TanhNormalModeOverTanh):
        assert cls.params[cls.param_names.index("size")][-1] == 1_000_000
        assert cls.params[cls.param_names.index("device")] == ["cpu", "cuda"]


def test_a_cuda_replay_point_needs_a_buffer_that_takes_a_device(monkeypatch):
    import torch

    from benchmarks.bench_prioritized_replay import _full_buffer

    class CpuOnly:
        def buffer(self, *, capacity, alpha, beta, eps):
            raise AssertionError("never built")

    with pytest.raises(NotImplementedError, match="CpuOnly.buffer takes no device"):
        _full_buffer(CpuOnly(), torch.device("cuda"), 1000, "sample_256")

    built = {}

    class Anywhere:
        def buffer(self, *, capacity, alpha, beta, eps, device=None):
            built["device"] = device
            raise RuntimeError("stop here")

    with pytest.raises(RuntimeError, match="stop here"):
        _full_buffer(Anywhere(), torch.device("cuda"), 1000, "sample_256")
    assert built["device"] == torch.device("cuda")


def _stats(median):
    return Stats(median, median, median, 1)


def test_floor_seconds_add_the_launches_and_the_copy_of_the_bytes():
    points = Points("cuda")
    points.add("launch_sync", None, "cuda", {"numel": 1}, _stats(10e-6))
    for size, seconds in ((100_000, 1e-5), (1_000_000, 2e-5), (10_000_000, 1e-4),
                          (100_000_000, 1e-3), (1_000_000_000, 1e-2)):
        points.add("copy", None, "cuda", {"bytes": size}, _stats(seconds))
    # 3e6 bytes: scaled from the 1e7 copy (the smallest at least as large): 3e-5 s
    assert floors.seconds(points, "cuda", floors.Floor(2, 3_000_000)) == pytest.approx(
        2 * 10e-6 + 3e-5)
    # past the largest copy: scaled from it
    assert floors.copy_seconds(points, "cuda", 4_000_000_000) == pytest.approx(4e-2)
    assert floors.seconds(points, "cuda", floors.Floor(20, 0)) == pytest.approx(200e-6)
    assert floors.seconds(Points("cuda"), "cuda", floors.Floor()) is None  # not measured
    assert floors.levels(1_000_000) == 20 and floors.levels(1_024) == 10


def _cuda_points():
    points = Points("cuda")
    points.add("launch_sync", None, "cuda", {"numel": 1}, _stats(10e-6))
    for impl, seconds in (("reference", 400e-6), ("torchrl", 800e-6)):
        points.add("sample_256", impl, "cuda", {"capacity": 1_000_000}, _stats(seconds))
    points.add("mode", "reference", "cuda", {"dtype": "float32", "size": 1_000_000},
               _stats(50e-6))
    points.add("tanh", None, "cuda", {"dtype": "float32", "size": 1_000_000}, _stats(10e-6))
    return points


def _lines(points):
    return [line for _, target in groups.targets() if target.device == "cuda"
            for line in target.lines(points, ["reference", "torchrl"])]


def test_cuda_targets_are_not_measured_on_a_cpu_run():
    lines = _lines(Points("cpu"))
    assert len(lines) == 7  # 2 ops x (versus torchrl, reference and torchrl over the floor) + 1
    assert all("not measured: no CUDA device in this cpu run" in line for line in lines), lines
    assert not any("met" in line for line in lines)


def test_cuda_targets_on_a_cuda_run():
    lines = "\n".join(_lines(_cuda_points()))
    # 400 / 800 µs; 400 µs over 20 launches of 10 µs = 2; 800 / 200 = 4; 50 / 10 µs = 5
    assert ("PER sample_256 at 1e6 on cuda, reference / torchrl CUDA trees = **0.5** "
            "(unpaired: a ratio of medians; target <= 1.0: met)") in lines
    assert ("PER sample_256 at 1e6 on cuda, reference / (one launch+sync x 20 tree levels) = "
            "**2** (target <= 3: met)") in lines
    assert ("PER sample_256 at 1e6 on cuda, torchrl / (one launch+sync x 20 tree levels) = "
            "**4** (target <= 3: NOT met)") in lines
    assert "update_256 at 1e6 on cuda, reference / torchrl CUDA trees: not measured" in lines
    assert ("TanhNormal mode at 1e6 float32 on cuda: reference / one torch.tanh = **5** "
            "(unpaired: a ratio of medians; target <= 10: met)") in lines


def test_the_report_of_a_cuda_run_has_floors_and_cuda_only_points(tmp_path):
    from benchtools.report import write
    from benchtools.results import load

    def bench(workload, impl, params, median):
        call = {"workload": workload, "implementation": impl, "device": "cuda",
                "params": params, "cycles": [median], "rounds": 3, "min": median,
                "max": median}
        return {"extra_info": {"group": f"{workload}{params}", "calls": [call]}}

    benches = [bench("launch_sync", None, {"numel": "1"}, 10e-6),
               bench("copy", None, {"bytes": "1000000000"}, 1e-3),
               bench("sample_65536", "reference", {"capacity": "1000000"}, 1e-3)]
    results = tmp_path / "side_by_side.json"
    results.write_text(json.dumps({"benchmarks": benches, "datetime": "2026-11-25T00:00:00"}))
    run = load(results)
    assert run.device == "cuda" and run.points.device == "cuda"
    report = tmp_path / "benchmarks.md"
    write(run, report, command="nox -s bench -- --device cuda", seconds=None, skips={},
          previous=None, plots=tmp_path)
    text = report.read_text()
    assert "## Floors of this device" in text and "- one launch+sync" in text
    assert "copy of 1,000,000,000 bytes: 1 ms, 1e+03 GB/s" in text
    # 20 launch+sync of 10 µs + copy of 65 536 x 16 B at 1 GB/ms = 200 µs + ~1.05 µs
    row = next(line for line in text.splitlines() if line.startswith("| 1000000 | 1 ms"))
    assert "201 µs (20 launch+sync + copy 1,048,576 B)" in row and row.endswith("| 4.97 |")


def test_the_cpu_report_lists_no_cuda_only_workload(tmp_path):
    from benchtools.report import point_tables

    text = "\n".join(point_tables(Points("cpu"), ["reference", "torchrl"], "cpu", {}))
    assert "sample_65536" not in text and "1000000 | not measured" in text  # PER's own 1e6
    assert "### `floor.launch_sync`" in text and "### `floor.copy`" in text


# --- asv on a GPU machine ----------------------------------------------------------------------

def test_the_asv_devices_come_from_the_environment(monkeypatch):
    monkeypatch.setenv(registry.DEVICES_VAR, "cuda")
    assert registry.devices() == ["cuda"]
    monkeypatch.delenv(registry.DEVICES_VAR)
    assert registry.devices() == ["cpu", "cuda"]
    monkeypatch.setenv(registry.DEVICES_VAR, "cuda,tpu")
    with pytest.raises(ValueError, match="TORCHRL_CONFORMANCE_BENCH_DEVICES='cuda,tpu': choose"):
        registry.devices()


def test_gpu_asv_refuses_without_cuda_in_one_line():
    import subprocess
    import sys

    from benchtools.clock import cuda_available
    from conformance.paths import ROOT

    if cuda_available():
        pytest.skip("a GPU is present")
    proc = subprocess.run([sys.executable, "-m", "benchtools.gpu_asv", "--commit", "a" * 40],
                          cwd=ROOT, capture_output=True, text=True)
    assert proc.returncode == 4
    assert proc.stderr.strip().splitlines() == [
        "ERROR: no CUDA device is available to this torch: the cuda points cannot be recorded "
        "here"]
    bad = subprocess.run([sys.executable, "-m", "benchtools.gpu_asv", "--commit", "HEAD"],
                         cwd=ROOT, capture_output=True, text=True)
    assert bad.returncode == 2 and "not a full commit hash" in bad.stderr


def test_a_tree_without_history_gets_a_throwaway_repository_on_main(tmp_path, monkeypatch):
    import subprocess

    from benchtools import gpu_asv

    (tmp_path / "f.txt").write_text("tree")
    monkeypatch.setattr(gpu_asv, "ROOT", tmp_path)
    recorded = gpu_asv.recorded_commit("b" * 40)
    log = subprocess.run(["git", "log", "--format=%H %s", "main"], cwd=tmp_path,
                         capture_output=True, text=True, check=True).stdout.split("\n")[0]
    assert log == f"{recorded} the tree of {'b' * 40} (throwaway, for asv)"
    assert gpu_asv.recorded_commit("b" * 40) == recorded  # a repository now: used as it is


def test_asv_results_are_rewritten_to_the_commit_the_tree_came_from(tmp_path):
    from benchtools.gpu_asv import recommit

    old, new = "1" * 40, "2" * 40
    (tmp_path / f"{old[:8]}-existing-py.json").write_text(json.dumps({"commit_hash": old}))
    (tmp_path / "machine.json").write_text("{}")
    done = recommit(tmp_path, old, new)
    assert [p.name for p in done] == [f"{new[:8]}-existing-py.json"]
    assert json.loads(done[0].read_text()) == {"commit_hash": new}
    assert sorted(p.name for p in tmp_path.iterdir()) == [done[0].name, "machine.json"]
    assert recommit(tmp_path, new, new) == []


def test_the_history_table_shows_the_points_of_one_device(tmp_path):
    from benchtools.history import table

    folder = tmp_path / "m"
    folder.mkdir()
    record = {"result_columns": ["result", "params"], "results": {"b.C.time_x": [
        [0.001, 0.002], [["'cpu'", "'cuda'"], ["10"]]]}}
    (folder / "x-existing-py_asv_history_torchrl-0.14.1_bin_python.json").write_text(
        json.dumps(record))
    assert table("b.C.time_x", tmp_path)[2:] == ["| cpu, 10 | 1 ms |"]
    assert table("b.C.time_x", tmp_path, device="cuda")[2:] == ["| cuda, 10 | 2 ms |"]
