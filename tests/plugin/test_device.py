"""``--device``: the guard (one-line usage errors, exit code 4), the CPU run unchanged, the device
in results rows and report headers, and implementations that get the device wrong.

No GPU is needed: ``tests/plugin/fake_cuda.py`` decides in the suite's process whether torch sees
a CUDA device (see its docstring for what a fake-CUDA run does and does not prove).
"""

from __future__ import annotations

import pytest
import torch

from conformance import device
from conformance.implementations.torchrl_areas import prioritized_replay as torchrl_replay
from conformance.interface import Untestable
from conformance.plugin import survey
from conformance.reporting.matrix import load_rows
from tests.mutants import devices as mutants

PPO = "conformance/test_ppo_value_clipping.py"
TANH = "conformance/test_tanh_normal_mode.py"
REPLAY = "conformance/test_prioritized_replay.py"
NO_CUDA = {"FAKE_CUDA": "none"}
ONE_CUDA = {"FAKE_CUDA": "one"}
FAKE = ("-p", "tests.plugin.fake_cuda")


def _one_line_error(run) -> str:
    __tracebackhide__ = True
    assert run.returncode == 4, run.output[-2000:]
    lines = [line for line in run.output.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("ERROR: "), run.output[-2000:]
    assert "Traceback" not in run.output
    return lines[0]


# ------------------------------------------------------------------ the guard (subprocess)


def test_cuda_without_cuda_is_a_one_line_usage_error(suite):
    line = _one_line_error(suite(*FAKE, PPO, "--device", "cuda", env=NO_CUDA))
    assert "--device cuda" in line and "CUDA" in line and "--device cpu" in line, line


def test_environment_variable_asks_for_cuda_the_same_way(suite):
    line = _one_line_error(suite(*FAKE, PPO, env={**NO_CUDA, device.ENV_VAR: "cuda:0"}))
    assert f"${device.ENV_VAR}=cuda:0: torch " in line and "CUDA" in line, line


@pytest.mark.parametrize("value", ["gpu", "cuda:x", "cpu:0", "cuda:-1", ""])
def test_malformed_device_is_a_one_line_usage_error(suite, value):
    line = _one_line_error(suite(PPO, f"--device={value}"))
    assert "not a device; give cpu, cuda or cuda:N" in line, line


def test_missing_device_index_is_a_one_line_usage_error(suite):
    line = _one_line_error(suite(*FAKE, PPO, "--device", "cuda:3", env=ONE_CUDA))
    assert "--device cuda:3: this machine has 1 CUDA device(s), cuda:0 to cuda:0" in line, line


def test_option_wins_over_the_environment_variable(suite):
    run = suite(PPO, "--impl", "reference", "-k", "counterexample", "--device", "cpu",
                env={device.ENV_VAR: "gpu"})
    assert run.returncode == 0, run.output[-2000:]
    assert [r["device"] for r in run.rows()] == ["cpu"]


# ------------------------------------------------------------------ the CPU run is unchanged


def test_device_cpu_gives_the_verdicts_of_no_option(suite, tmp_path):
    args = (PPO, TANH, "--impl", "reference,torchrl")
    default = suite(*args)
    explicit = suite(*args, "--device", "cpu", "-v")  # -v: the header
    assert default.returncode == explicit.returncode == 0, explicit.output[-2000:]
    assert default.outcomes() == explicit.outcomes()
    assert {r["device"] for r in explicit.rows()} == {"cpu"} == {r["device"] for r in default.rows()}
    assert "device: cpu" in explicit.output
    md = (tmp_path / "conformance.md").read_text()
    assert "| reference 0.1.0 |" in md and "· cpu" not in md  # CPU columns keep their header


# ------------------------------------------------------------------ a fake CUDA device


def test_fake_cuda_run_labels_rows_reports_and_header(suite, tmp_path):
    """The guard accepts cuda when torch sees one; the device reaches the specs (a CPU-only
    plug-in is "not applicable" on it), the rows, the results and the report's columns."""
    run = suite(*FAKE, PPO, "--impl", "reference,tests.mutants.devices:CPU_ONLY", "-k",
                "counterexample", "--device", "cuda", "-v", env=ONE_CUDA)
    assert run.returncode == 0, run.output[-2000:]
    assert "device: cuda (fake GPU (self-test), CUDA " in run.output
    assert run.results["device"].startswith("cuda (fake GPU (self-test)")
    assert {r["device"] for r in run.rows()} == {"cuda"}
    assert [r["outcome"] for r in run.rows(implementation="reference")] == ["pass"]
    (cpu_only,) = run.rows(implementation="CPU_ONLY")
    assert cpu_only["outcome"] == "not applicable", cpu_only
    assert ("not applicable: CPU_ONLY ppo_value_clipping does not run on cuda (it declares the "
            "devices cpu)") in cpu_only["message"]
    md = (tmp_path / "conformance.md").read_text()
    assert "| reference 0.1.0 · cuda |" in md and "| CPU_ONLY mutant · cuda |" in md, md[:2000]


# ------------------------------------------------------------------ implementations at fault


def test_loss_returned_on_another_device_fails_naming_both(suite):
    run = suite(PPO, "--impl", "tests.mutants.devices:LOSS_ELSEWHERE", "-k", "counterexample")
    assert run.returncode == 1, run.output[-2000:]
    (row,) = run.rows()
    assert row["outcome"] == "fail"
    assert "CriticLoss.loss is not on the run's device" in row["message"]
    assert "a tensor on meta" in row["message"] and "device:     cpu" in row["message"]


def test_mode_returned_on_another_device_fails(suite):
    run = suite(TANH, "--impl", "tests.mutants.devices:MODE_ELSEWHERE", "-k", "seed_example")
    assert run.returncode == 1, run.output[-2000:]
    assert {r["outcome"] for r in run.rows()} == {"fail"}
    assert all("mode() is not on the run's device" in r["message"] for r in run.rows())


def test_buffer_that_ignores_the_device_fails(suite):
    run = suite(REPLAY, "--impl", "tests.mutants.devices:REPLAY_ELSEWHERE", "-k",
                "empty_buffer")
    assert run.returncode == 1, run.output[-2000:]
    (row,) = run.rows()
    assert "the buffer is not on the run's device" in row["message"], row["message"]
    assert "the implementation ignores device=" in row["message"]


def test_call_that_cannot_run_here_is_untestable_not_passed(suite):
    run = suite(PPO, "--impl", "tests.mutants.devices:NO_KERNELS", "-k", "counterexample")
    assert run.returncode == 1, run.output[-2000:]  # an unlisted "cannot be tested here"
    (row,) = run.rows()
    assert row["outcome"] == "untestable" and row["expected"] is False
    assert row["message"].startswith("cannot be tested here: NO-KERNELS"), row["message"]


# ------------------------------------------------------------------ in process


def test_parse_accepts_cpu_cuda_and_an_index():
    assert device.parse("cpu") == torch.device("cpu")
    assert device.parse(" CUDA ") == torch.device("cuda")
    assert device.parse("cuda:2") == torch.device("cuda", 2)


def test_put_keeps_cpu_inputs_the_same_objects():
    """On the CPU the specs hand implementations exactly what they handed them before."""
    t = torch.ones(2)
    net = torch.nn.Linear(1, 1)
    nested = {"a": [t, net], "b": 3}
    assert device.put(t) is t and device.put(net) is net and device.put(nested) is nested


def test_malformed_devices_declaration_is_an_interface_problem():
    assert survey.device_problems(mutants.BadDeclaration()) == [
        ".devices must be a non-empty tuple of device types among cpu, cuda, got 'cuda'"]
    assert survey.device_problems(mutants.CpuOnlyPPO()) == []


def test_replay_area_declaring_devices_must_take_the_device_keyword():
    class NoKeyword:
        devices = ("cpu", "cuda")

        def buffer(self, *, capacity, alpha, beta, eps, upper_priority=None, row_width=1):
            raise AssertionError("never called")

    assert survey.device_problems(NoKeyword()) == [
        "buffer() does not accept keyword 'device', which an area that declares .devices "
        "receives"]


def test_results_without_a_device_are_cpu_and_others_are_labelled():
    row = {"nodeid": "conformance/test_x.py::t[reference]", "area": "x", "spec": "t",
           "parameters": "", "implementation": "reference", "implementation_version": "0.1.0",
           "outcome": "pass", "expected": True, "message": ""}
    old = {"schema": 1, "started": 1.0, "finished": 2.0, "rows": [row]}
    cuda = {"schema": 1, "started": 3.0, "finished": 4.0, "rows": [{**row, "device": "cuda"}]}
    assert sorted(load_rows([old, cuda])["column"]) == ["reference 0.1.0",
                                                        "reference 0.1.0 · cuda"]


def test_torchrl_cuda_replay_without_cuda_trees_cannot_be_tested_here():
    """TorchRL's CUDA prioritized sampler is its own case: where the installed torchrl._torchrl
    lacks the CUDA trees, a CUDA buffer says so (before touching any GPU)."""
    from torchrl.data import PrioritizedSampler

    problem = torchrl_replay.cuda_trees_problem()
    if problem is None:
        pytest.skip("this torchrl._torchrl has the CUDA trees")
    area = torchrl_replay.make(None)
    assert area.devices == ("cpu", "cuda")  # 0.14.1's PrioritizedSampler takes device=
    with pytest.raises(Untestable, match="built without CUDA .*CudaSumSegmentTreeFp32"):
        area.buffer(capacity=4, alpha=0.6, beta=0.4, eps=1e-3, device=torch.device("cuda"))
    with pytest.raises(Untestable, match="PrioritizedSliceSampler on cuda"):
        area.slice_buffer(capacity=4, alpha=0.6, beta=0.4, eps=1e-3, slice_len=2, traj_len=2,
                          device=torch.device("cuda"))
    assert PrioritizedSampler is area.sampler_cls
