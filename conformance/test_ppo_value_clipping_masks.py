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

The same holds at the edges of a mask: a batch with one valid step (its fraction is 0 or 1,
never halved), a batch that carries both masks TorchRL writes, ``("collector", "mask")`` and the
value estimators' ``"shifted_valid"`` (``loss_mask_key="auto"`` ANDs them: a position counts
only where both are True), and a 0/1 mask of another dtype than bool (uint8, int64, float32: a
mask a user writes as ``(t < length).float()``), which is read as its truth value, or refused
with an error that names the mask; never misread.

Oracle: ``conformance.oracles.ppo_value_clipping.vf_loss`` (Baselines ppo2, numpy, float64)
on the valid positions. Every input is seeded.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

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
    rng = np.random.default_rng({"padded-tail": 11, "scattered": 12, "one-valid": 13}[pattern])
    old = rng.normal(0.0, 2.0, size)
    v = old + rng.normal(0.0, 0.3, size)
    R = old + rng.normal(0.0, 3.0, size)
    if pattern == "padded-tail":  # a slice shorter than the others, padded at its end
        valid = np.arange(size) < size - 7
    elif pattern == "one-valid":  # one real step, then padding; the step is clipped
        valid = np.arange(size) == 0
        # the unclipped term is the larger: the loss does not depend on how c is rounded (a
        # float32 threshold buffer moves the clipped prediction by ~1e-9)
        v[0], R[0] = old[0] + 3 * CLIP, old[0] - 1.0
    else:
        valid = rng.random(size) > 0.35
        valid[0] = True
    # what padding holds is arbitrary: a prediction 40 away from its old value and the return
    # (after the single step: its old value, so that counting the padding dilutes the fraction)
    v = np.where(valid, v, old + (0.0 if pattern == "one-valid" else 40.0))
    R = np.where(valid, R, old - 40.0)
    return v, old, R, valid


def _run(masks, pattern, critic_coeff=1.0, *, dtype=torch.bool, shifted=None):
    """Call the capability; ``dtype``: the collector mask's; ``shifted``: a second mask (bool
    array), handed as ``"shifted_valid"``. The valid positions returned are those of both."""
    v, old, R, valid = _batch(pattern)
    net = device.put(_value_net())
    extra = {} if shifted is None else {"shifted_valid": device.put(_column(shifted).bool())}
    report = masks.critic_loss_masked(
        value_net=net, observation=device.put(_column(v)), old_value=device.put(_column(old)),
        returns=device.put(_column(R)), clip_value=CLIP, critic_coeff=critic_coeff,
        valid=device.put(_column(valid).to(dtype)), **extra)
    loss = device.host(report.loss, "CriticReport.loss")
    loss.backward()
    grads = tuple(float(device.host(p.grad, f"the value network's {name} gradient").sum())
                  if p.grad is not None else float("nan")
                  for name, p in (("weight", net.weight), ("bias", net.bias)))
    params = {"B": len(v), "valid": int(valid.sum()), "padding": pattern, "clip_value": CLIP,
              "critic_coeff": critic_coeff, "mask": f"('collector', 'mask') of {dtype}"}
    if shifted is not None:
        params["mask"] += " and 'shifted_valid'"
        valid = valid & shifted
        params["valid"] = int(valid.sum())
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


def _check_loss_and_fraction(masks, pattern, **options):
    """Loss, gradient and value clip fraction of ``_run`` against Baselines over the valid
    positions (of both masks)."""
    __tracebackhide__ = True
    loss, grads, frac, (v, old, R, valid), params = _run(masks, pattern, **options)
    k = masks.critic_scale * 1.0
    ref = oracle.vf_loss(v[valid], old[valid], R[valid], CLIP)
    assert_close(f"critic loss under a validity mask != {k:g} * Baselines vf_loss over the "
                 "valid positions", loss, k * ref.loss, params=params, rtol=RTOL, atol=ATOL,
                 cause=oracle.diagnose(loss / k, v[valid], old[valid], R[valid], CLIP),
                 link=PR_4057)
    check_gradient(grads, v[valid], old[valid], R[valid], CLIP, k, params=params,
                   cause="positions outside the mask reach the gradient")
    if frac is None:
        raise AssertionError(message("no value clip fraction reported while clipping is on",
                                     params=params, expected=ref.clip_fraction, actual=None,
                                     link=PR_4057))
    assert_close("value clip fraction under a validity mask != mean over the valid positions "
                 "of (|v - v_old| > c)", frac, ref.clip_fraction, params=params, rtol=0,
                 atol=1e-12, cause=oracle.diagnose_clip_fraction(frac, v[valid], old[valid],
                                                                 CLIP), link=PR_4057)


def test_a_single_valid_step(masks):
    """One real step, clipped, then padding: the loss is that step's, the fraction 1."""
    _check_loss_and_fraction(masks, "one-valid")


def test_both_of_torchrls_masks_are_anded(masks):
    """``("collector", "mask")`` (a padded tail) and ``"shifted_valid"`` (steps whose target
    crosses an episode boundary, some inside the tail, some before it): a position counts only
    where both are True, as ``loss_mask_key="auto"`` reads them."""
    rng = np.random.default_rng(14)
    size = len(_batch("padded-tail")[0])
    shifted = rng.random(size) > 0.3
    shifted[[0, size - 1]] = True, False  # one valid step at least; the masks overlap
    _check_loss_and_fraction(masks, "padded-tail", shifted=shifted)


@pytest.mark.parametrize("dtype", [torch.uint8, torch.int64, torch.float32],
                         ids=lambda d: str(d).removeprefix("torch."))
def test_a_numeric_mask_is_read_as_its_truth_value(masks, dtype):
    """A 0/1 ``("collector", "mask")`` of another dtype: the bool mask's loss, gradient and
    fraction, or an error naming the mask. A silent misreading (the mask ignored, or taken as
    weights that change the count) fails."""
    try:
        _run(masks, "scattered", dtype=dtype)
    except AssertionError:
        raise
    except Exception as error:  # noqa: BLE001 - any refusal is checked for its words below
        if "mask" not in str(error):
            raise AssertionError(message(
                f"a 0/1 validity mask of dtype {dtype} is refused with an error that does not "
                "name the mask", params={"mask": "('collector', 'mask')", "dtype": str(dtype)},
                expected="the bool mask's loss, or an error naming the mask",
                actual=f"{type(error).__name__}: {error}", link=PR_4057)) from error
        return
    _check_loss_and_fraction(masks, "scattered", dtype=dtype)
