"""The side-by-side run times a group's calls in turns, so a ratio is taken within one state of
the machine: the grouping, the loop, and pytest-benchmark's record of it."""

import json
import subprocess
import sys

import pytest

from benchtools import groups, turns
from benchtools.cli import child_environment
from benchtools.targets import Stats, ratio
from conformance.paths import ROOT


class _Machine:
    """A fake clock whose speed flips between 1x and 2x every ``period`` calls."""

    def __init__(self, period: int):
        self.now, self.calls, self.period = 0.0, 0, period

    def clock(self) -> float:
        return self.now

    def work(self, cost: float):
        def call():
            self.calls += 1
            self.now += cost * (2.0 if (self.calls // self.period) % 2 else 1.0)
        return call


def test_every_point_is_in_exactly_one_group_with_its_companions():
    impls = ["reference", "torchrl"]
    found = groups.groups(impls)
    items = [(area, w.name, impl, tuple(p.items())) for g in found for area in [g.area]
             for w, impl, p in g.items]
    expected = sum(len(list(w.points())) * (len(impls) if w.area else 1)
                   for _, w in groups.workloads())
    assert len(items) == len(set(items)) == expected
    by_label = {g.label: g for g in found}
    sac = by_label["sac_done_states.forward_backward[kind=discrete,skip_done_states=False|True,"
                   "batch=1000]"]
    assert sorted((impl, p["skip_done_states"]) for _, impl, p in sac.items) == [
        ("reference", False), ("reference", True), ("torchrl", False), ("torchrl", True)]
    mode = by_label["tanh_normal_mode.mode+tanh+mode_constructed[dtype=float32,size=10000]"]
    assert [(w.name, impl) for w, impl, _ in mode.items] == [
        ("mode", "reference"), ("mode", "torchrl"), ("tanh", None),
        ("mode_constructed", "reference"), ("mode_constructed", "torchrl")]


def test_a_paired_ratio_is_exact_while_the_machine_changes_speed():
    machine = _Machine(period=56)  # a cycle is 14 calls: the speed flips every 4 cycles
    a = turns.Timing(machine.work(3e-3))
    b = turns.Timing(machine.work(1e-3))
    cycles = turns.run([a, b], machine.clock, budget=0.5, min_cycles=3)
    assert cycles >= 3 and len(a.cycles) == len(b.cycles) == cycles
    assert sum(a.round_seconds) + sum(b.round_seconds) >= 0.5
    # each call's own time swung 2x; their per-cycle ratio did not
    assert max(a.round_seconds) / min(a.round_seconds) == pytest.approx(2.0)
    paired = ratio(Stats(0, 0, 0, 0, tuple(a.cycles), "g"), Stats(0, 0, 0, 0, tuple(b.cycles), "g"))
    assert paired == pytest.approx(3.0)


def test_the_first_call_of_a_cycle_rotates():
    order = []
    timings = [turns.Timing(lambda n=n: order.append(n)) for n in "abc"]
    ticks = iter(range(10**6))
    turns.run(timings, lambda: next(ticks) * 2.0**-10, budget=0, min_cycles=3)
    starts = [order[i] for i in range(0, len(order), len(order) // 3)]
    assert starts == ["a", "b", "c"]


def test_calibration_makes_a_round_of_a_fast_call_last_a_round():
    machine = _Machine(period=10**9)
    timing = turns.Timing(machine.work(1e-6))
    turns.calibrate(timing, machine.clock, first_call=1e-6)
    assert timing.loops == round(turns.ROUND / 1e-6)
    fresh = turns.Timing(machine.work(1e-6), before=lambda: None)
    turns.calibrate(fresh, machine.clock, first_call=1e-6)
    assert fresh.loops == 1  # a fresh-state call is one call per round


def test_ratios_of_points_not_measured_together_divide_medians():
    a, b = Stats(0, 2.0, 0, 1, (1.0,), "g1"), Stats(0, 1.0, 0, 1, (4.0,), "g2")
    assert ratio(a, b) == 2.0 and ratio(2.0, 4.0) == 0.5 and ratio(a, None) is None


@pytest.mark.slow
def test_pytest_benchmark_records_each_point_of_a_group_with_aligned_cycles(tmp_path):
    out = tmp_path / "sbs.json"
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", str(ROOT / "benchtools" / "side_by_side.py"), "-q",
         "-p", "no:cacheprovider", "-k", "ppo_value_clipping", f"--benchmark-json={out}",
         "--benchmark-timer=time.process_time", "--bench-impl=reference,torchrl",
         "--bench-passes=2", "--bench-max-time=0.02"],
        cwd=ROOT, env=child_environment(), capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    from benchtools.results import load

    run = load(out)
    assert run.implementations == ["reference", "torchrl"]
    ref = run.points.get("forward_backward", "reference", size=100)
    base = run.points.get("forward_backward", "torchrl", size=100)
    assert ref.group == base.group == "ppo_value_clipping.forward_backward[size=100]"
    assert len(ref.cycles) == len(base.cycles) >= 2 * 3  # two passes of at least 3 cycles
    assert ref.rounds >= len(ref.cycles)
    entries = json.loads(out.read_text())["benchmarks"]
    from benchmarks.bench_ppo_value_clipping import SIZES

    # pytest-benchmark's own entries: one per group and pass, grouped by the group's label
    assert sorted(e["params"]["group"] for e in entries) == sorted(
        f"ppo_value_clipping.forward_backward[size={s}]" for s in SIZES for _ in range(2))
    assert all(e["stats"]["rounds"] >= 3 for e in entries)


def test_a_size_over_the_call_budget_skips_only_larger_sizes_in_later_passes(monkeypatch):
    from benchtools import side_by_side
    from benchtools.conftest import Options
    from benchtools.workload import Timed, Workload

    work = Workload("w", None, {"size": [1, 2, 3]}, lambda area, dev, size: Timed(lambda: None))
    monkeypatch.setattr(side_by_side, "_OVER_BUDGET", {("w", None, ()): (2, 5.0)})
    options = Options(["reference"], "cpu", 1, 0.1, 3.0, None)
    assert side_by_side._prepare(work, None, {"size": 1}, options)
    for size in (2, 3):
        with pytest.raises(NotImplementedError, match="size=2 already took 5.0 s a call"):
            side_by_side._prepare(work, None, {"size": size}, options)


def test_a_target_line_gives_the_spread_of_its_pairs_and_whether_the_goal_is_within_it():
    from benchtools.targets import Points, Target

    def points(numerator):
        p = Points("cpu")
        p.add("a", "reference", "cpu", {}, Stats(0, 0, 0, 0, tuple(numerator), "g"))
        p.add("a", "torchrl", "cpu", {}, Stats(0, 0, 0, 0, (1.0,) * len(numerator), "g"))
        return p

    target = Target("{impl} / torchrl", "<= 1.0",
                    lambda p, impl: ratio(p.get("a", impl), p.get("a", "torchrl")),
                    lambda v: v <= 1.0, versus="torchrl")
    assert target.lines(points([0.8, 0.9, 0.7, 0.85, 0.95]), ["reference", "torchrl"]) == [
        "- reference / torchrl = **0.85** (median of 5 pairs in turns, spread 0.7 – 0.95; "
        "target <= 1.0: met)"]
    assert target.lines(points([0.8, 1.2, 1.1, 1.05, 0.95]), ["reference"]) == [
        "- reference / torchrl = **1.05** (median of 5 pairs in turns, spread 0.8 – 1.2; the "
        "goal is within its spread; target <= 1.0: NOT met)"]
    # timed apart (no group in common): the ratio of the medians, said to be unpaired
    apart = Points("cpu")
    apart.add("a", "reference", "cpu", {}, Stats(0, 2.0, 0, 0))
    apart.add("a", "torchrl", "cpu", {}, Stats(0, 1.0, 0, 0))
    assert target.lines(apart, ["reference"]) == [
        "- reference / torchrl = **2** (unpaired: a ratio of medians; target <= 1.0: NOT met)"]


def test_an_account_line_gives_its_value_and_spread_and_no_verdict():
    from benchtools.targets import Points, Target

    p = Points("cpu")
    p.add("a", "reference", "cpu", {}, Stats(0, 0, 0, 0, (2.4, 2.6, 2.5, 2.5, 2.7), "g"))
    p.add("a", "torchrl", "cpu", {}, Stats(0, 0, 0, 0, (1.0,) * 5, "g"))
    account = Target("{impl} / torchrl", "what the machinery costs",
                     lambda p, impl: ratio(p.get("a", impl), p.get("a", "torchrl")), None,
                     versus="torchrl")
    assert account.lines(p, ["reference", "torchrl"]) == [
        "- reference / torchrl = **2.5** (median of 5 pairs in turns, spread 2.4 – 2.7; no "
        "target: what the machinery costs)"]


def test_the_composite_account_divides_by_the_faster_raw_form_cycle_by_cycle():
    from benchmarks.bench_composite_log_prob import SIZES, TARGETS
    from benchtools.targets import Points

    p = Points("cpu")
    for s in SIZES:  # the logsumexp form is faster in cycles 1-2, torch.log_softmax in 3-5
        p.add("distribution_log_prob", "reference", "cpu", {"size": s},
              Stats(0, 0, 0, 0, (4.0,) * 5, "g"))
        p.add("raw_log_softmax_gather", None, "cpu", {"size": s},
              Stats(0, 0, 0, 0, (1.0, 1.0, 4.0, 4.0, 4.0), "g"))
        p.add("raw_torch_log_softmax_gather", None, "cpu", {"size": s},
              Stats(0, 0, 0, 0, (2.0, 2.0, 2.0, 2.0, 2.0), "g"))
    target, account, _ = TARGETS
    assert target.lines(p, ["reference"])[0].endswith(
        "= **1** (median of 5 pairs in turns, spread 1 – 4; the goal is within its spread; "
        "target <= 2: met)")
    # per cycle: 4/1, 4/1, 4/2, 4/2, 4/2: the faster form, not the ratio of either median
    assert "= **2** (median of 5 pairs in turns, spread 2 – 4; no target:" in (
        account.lines(p, ["reference"])[0])


def test_every_group_runs_at_least_five_cycles_slow_calls_included():
    machine = _Machine(period=10**9)
    fast, slow = turns.Timing(machine.work(1e-3)), turns.Timing(machine.work(turns.SLOW))
    assert turns.run([fast, slow], machine.clock, budget=0.0) == turns.MIN_PAIRS == 5


def test_the_terminal_summary_is_read_back_from_the_report_it_wrote(tmp_path):
    from benchtools.report import target_summary

    report = tmp_path / "benchmarks.md"
    report.write_text(
        "# Benchmarks\n\n## Ratios\n\n- not a target: met)\n\n"
        "## Targets (measured in this run, not asserted)\n\n**Area**\n\n"
        "- a, reference / torchrl = **0.9** (median of 5 pairs in turns, spread 0.8 – 1; "
        "target <= 1.0: met)\n"
        "- b, reference / torchrl = **1.6** (median of 5 pairs in turns, spread 1.5 – 1.7; "
        "target <= 1.0: NOT met)\n"
        "- c on cuda: not measured: no CUDA device in this cpu run (target <= 3)\n"
        "- d, reference / x = **2.5** (median of 5 pairs in turns, spread 2.4 – 2.6; no target: "
        "an account)\n\n## Floors of this device\n\n- e = **9** (target <= 1: NOT met)\n")
    assert target_summary(report) == [
        "targets: 1 met, 1 NOT met, 1 not measured, 1 accounts",
        "  NOT met: b, reference / torchrl = 1.6 (target <= 1.0)"]
