"""``benchtools.end_to_end``: pairs in turns (alternating who runs first), one verdict line per
algorithm, and ``--report`` appending those lines under a heading once every algorithm ran."""

import sys
import types

import pytest

from benchtools import end_to_end


def test_pairs_alternate_who_runs_first_after_one_warm_up_each(monkeypatch):
    calls = []
    seconds = {"torchrl": 2.0, "reference": 1.0}
    monkeypatch.setattr(end_to_end, "_run", lambda main, algo, impl, env, frames:
                        calls.append(impl) or seconds[impl])
    ratios = end_to_end.paired(None, "sac", "mock", 10, 3)
    assert ratios == [0.5, 0.5, 0.5]
    assert calls == ["torchrl", "reference", "torchrl", "reference", "reference", "torchrl",
                     "torchrl", "reference"]


def test_a_line_gives_the_median_its_spread_and_the_verdict():
    assert end_to_end.line("ppo", "mock", 100, "reference", [0.9, 1.2, 1.01]) == (
        "ppo on mock, 100 frames: reference / torchrl = 1.010 (median of 3 pairs in turns, "
        "spread 0.900 – 1.200; target <= 1.0: NOT met)")


@pytest.mark.parametrize("interrupted", [False, True])
def test_the_report_is_appended_only_when_every_algorithm_ran(tmp_path, monkeypatch,
                                                              interrupted):
    monkeypatch.setitem(sys.modules, "dropin_training", types.SimpleNamespace(main=None))

    def paired(main, algo, env, frames, pairs, candidate):
        if interrupted and algo == "ppo":
            raise KeyboardInterrupt
        return [0.98, 0.99, 1.0]

    monkeypatch.setattr(end_to_end, "paired", paired)
    report = tmp_path / "end-to-end.md"
    report.write_text("# kept\n")
    argv = ["--env", "mock", "--frames", "10", "--report", str(report)]
    if interrupted:
        with pytest.raises(KeyboardInterrupt):
            end_to_end.main(argv)
        assert report.read_text() == "# kept\n"
        return
    end_to_end.main(argv)
    text = report.read_text()
    assert text.startswith("# kept\n\n## ") and "`python -m benchtools.end_to_end --env mock" in text
    assert text.count("target <= 1.0: met") == 2 and "- sac on mock, 10 frames" in text


def test_a_gym_env_without_gymnasium_is_refused_in_one_line(monkeypatch, capsys):
    monkeypatch.setattr(end_to_end.importlib.util, "find_spec", lambda name: None)
    with pytest.raises(SystemExit) as stop:
        end_to_end.main(["--env", "Pendulum-v1"])
    assert stop.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()[-1]
    assert err.endswith("--env Pendulum-v1 needs gymnasium (pip install gymnasium), which the "
                        "stack does not hold; --env mock needs nothing beyond torchrl")
