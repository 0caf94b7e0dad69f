"""§4 under a validity mask: padding is not part of the clipped critic loss or its clip fraction.

A batch of trajectory slices (TorchRL's ``SliceSampler(pad_output=True)``) carries padding,
marked False at ``("collector", "mask")``; since pytorch/rl#4057 (torchrl 0.14) TorchRL's losses
read that mask in their reductions. What the padding holds is arbitrary (here: predictions
far outside the clip range and returns far from them). A user then expects, from
``ClipPPOLoss(clip_value=c)``:

- the critic loss and its gradient of Baselines' value clipping over the valid positions alone
  (the masked mean: ``critic_scale * critic_coeff * 0.5 * mean_valid(max(...))``);
- ``value_clip_fraction``: the share of *valid* predictions that moved more than ``c``. A
  fraction counted over the padding too is diluted (or inflated) by it, and is what a user
  tunes ``c`` by.

Oracle: ``conformance.oracles.ppo_value_clipping.vf_loss`` (Baselines ppo2, numpy, float64)
on the valid positions. Every input is seeded.
"""

from __future__ import annotations

import numpy as np
import pytest

from conformance import capabilities, device
from conformance._assertions import assert_close, message
from conformance.oracles import ppo_value_clipping as oracle
from conformance.test_ppo_value_clipping import (
    ATOL,
    RTOL,
    _column,
    _value_net,
    check_gradient,
)

PR_4057 = "https://github.com/pytorch/rl/pull/4057"
CLIP = 0.2
PATTERNS = ("padded-tail", "scattered")


@pytest.fixture
def masks(request, impl, ppo_value_clipping):
    return capabilities.require(request, impl, "ppo_value_clipping", ppo_value_clipping,
                                "critic_loss_masked")


def _batch(pattern: str, size: int = 24):
    """(v, old, R, valid): seeded valid positions; padding far outside the clip range."""
    rng = np.random.default_rng({"padded-tail": 11, "scattered": 12}[pattern])
    old = rng.normal(0.0, 2.0, size)
    v = old + rng.normal(0.0, 0.3, size)
    R = old + rng.normal(0.0, 3.0, size)
    if pattern == "padded-tail":  # a slice shorter than the others, padded at its end
        valid = np.arange(size) < size - 7
    else:
        valid = rng.random(size) > 0.35
        valid[0] = True
    # what padding holds is arbitrary: a prediction 40 away from its old value and the return
    v = np.where(valid, v, old + 40.0)
    R = np.where(valid, R, old - 40.0)
    return v, old, R, valid


def _run(masks, pattern, critic_coeff=1.0):
    v, old, R, valid = _batch(pattern)
    net = device.put(_value_net())
    report = masks.critic_loss_masked(
        value_net=net, observation=device.put(_column(v)), old_value=device.put(_column(old)),
        returns=device.put(_column(R)), clip_value=CLIP, critic_coeff=critic_coeff,
        valid=device.put(_column(valid).bool()))
    loss = device.host(report.loss, "CriticReport.loss")
    loss.backward()
    grads = tuple(float(device.host(p.grad, f"the value network's {name} gradient").sum())
                  if p.grad is not None else float("nan")
                  for name, p in (("weight", net.weight), ("bias", net.bias)))
    params = {"B": len(v), "valid": int(valid.sum()), "padding": pattern, "clip_value": CLIP,
              "critic_coeff": critic_coeff, "mask": "('collector', 'mask')"}
    return float(loss.detach()), grads, report.value_clip_fraction, (v, old, R, valid), params


@pytest.mark.parametrize("pattern", PATTERNS)
def test_padding_is_left_out_of_the_clipped_critic_loss(masks, pattern):
    """Loss and gradient: Baselines' clipped critic over the valid positions alone."""
    loss, grads, _, (v, old, R, valid), params = _run(masks, pattern)
    k = masks.critic_scale * 1.0
    ref = oracle.vf_loss(v[valid], old[valid], R[valid], CLIP)
    whole = oracle.vf_loss(v, old, R, CLIP).loss
    cause = ("the padding is averaged in: the loss of the whole batch is "
             f"{k * whole:.6g}") if abs(loss - k * whole) <= 1e-9 * max(1.0, abs(k * whole)) \
        else oracle.diagnose(loss / k, v[valid], old[valid], R[valid], CLIP)
    assert_close(f"critic loss under a validity mask != {k:g} * Baselines vf_loss over the "
                 "valid positions", loss, k * ref.loss, params=params, rtol=RTOL, atol=ATOL,
                 cause=cause, link=PR_4057)
    check_gradient(grads, v[valid], old[valid], R[valid], CLIP, k, params=params,
                   cause="the padding's predictions reach the gradient")


@pytest.mark.parametrize("pattern", PATTERNS)
def test_padding_is_left_out_of_the_value_clip_fraction(masks, pattern):
    """``value_clip_fraction``: the share of valid predictions that moved more than c."""
    _, _, frac, (v, old, R, valid), params = _run(masks, pattern)
    expected = oracle.vf_loss(v[valid], old[valid], R[valid], CLIP).clip_fraction
    if frac is None:
        raise AssertionError(message("no value clip fraction reported while clipping is on",
                                     params=params, expected=expected, actual=None,
                                     link=PR_4057))
    whole = oracle.vf_loss(v, old, R, CLIP).clip_fraction
    cause = (f"counted over every position, padding included (= {whole:.6g}): the mask the "
             "loss's reductions honour is not applied to the fraction"
             if abs(frac - whole) <= 1e-12 else
             oracle.diagnose_clip_fraction(frac, v[valid], old[valid], CLIP))
    assert_close("value clip fraction under a validity mask != mean over the valid positions "
                 "of (|v - v_old| > c)", frac, expected, params=params, rtol=0, atol=1e-12,
                 cause=cause, link=PR_4057)
