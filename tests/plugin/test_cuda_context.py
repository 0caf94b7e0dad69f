"""A test that leaves the CUDA context unusable fails itself, and no later test is blamed for it.

Seen on an H200 (reports/gpu/): TorchRL's composite distribution under ExplorationType.MEAN
feeds a NaN-cast index to a CUDA gather, a device-side assert, and every later spec of that
pytest-xdist worker failed with "device-side assert triggered", the reference's included. A GPU
is not needed to check what the suite does about it: ``tests/plugin/fake_cuda.py`` stages the
lost context (``$FAKE_CUDA_LOST_IN``) in the call of one chosen test.
"""

from __future__ import annotations

import torch

from conformance.plugin import cuda_context

PPO = "conformance/test_ppo_value_clipping.py"
FAKE = ("-p", "tests.plugin.fake_cuda")
CULPRIT = "test_negative_clip_value_is_rejected[reference]"


def test_a_cpu_device_is_never_reported_lost():
    assert cuda_context.lost(torch.device("cpu")) is None


def test_the_message_names_the_implementation_and_the_consequence():
    text = cuda_context.message("torchrl", "AcceleratorError: CUDA error: device-side assert")
    assert "'torchrl'" in text and "device-side assert" in text and "no other spec runs" in text


def _staged(suite, *extra):
    env = {"FAKE_CUDA": "one", "FAKE_CUDA_LOST_IN": CULPRIT}
    return suite(*FAKE, PPO, "--impl", "reference", "--device", "cuda", *extra, env=env)


def test_single_process_blames_the_culprit_and_stops(suite):
    run = _staged(suite, "-p", "no:xdist")
    assert run.returncode != 0, run.output[-2000:]
    culprit = [r for r in run.rows() if r["nodeid"].endswith(CULPRIT)]
    assert len(culprit) == 1 and culprit[0]["outcome"] == "error", run.output[-2000:]
    assert "left this process's CUDA context unusable" in culprit[0]["message"]
    assert "'reference'" in culprit[0]["message"]
    # nothing after it ran (so nothing after it is blamed), and the run says it is incomplete
    assert all(r["outcome"] in ("pass", "error") for r in run.rows()), run.output[-2000:]
    assert "the run is incomplete" in run.output


def test_xdist_worker_is_replaced_and_the_others_still_run(suite):
    run = _staged(suite, "--numprocesses", "2")
    assert run.returncode != 0, run.output[-2000:]
    rows = run.rows()
    culprit = [r for r in rows if r["nodeid"].endswith(CULPRIT)]
    assert culprit and all(r["outcome"] in ("error", "fail") for r in culprit), run.output[-2000:]
    others = [r for r in rows if not r["nodeid"].endswith(CULPRIT)]
    # every other spec of the file ran, in the surviving or the replacement worker, and passed
    assert others and all(r["outcome"] == "pass" for r in others), [
        (r["nodeid"], r["outcome"], r["message"][:200]) for r in others if r["outcome"] != "pass"]
