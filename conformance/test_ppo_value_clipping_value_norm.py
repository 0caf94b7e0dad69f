"""§4 with a value normaliser: value clipping in normalised space (MAPPO/IPPO, pytorch/rl#3748).

TorchRL's multi-agent PPO losses (``MAPPOLoss``, ``IPPOLoss``, torchrl 0.13) take
``value_norm=``, a running normaliser of the value targets (``RunningValueNorm``: exact
running mean and variance; ``PopArtValueNorm``: debiased moving averages, van Hasselt et al.
2016). MAPPO (Yu et al. 2022) trains the critic on normalised targets; TorchRL's critic
predicts on the returns' scale and the loss normalises target, prediction and stored
prediction alike, after folding this batch's targets into the statistics, "so the clip radius
stays in normalised space". A user expects, from ``clip_value=c``:

- the critic loss and its gradient of Baselines' value clipping applied to the normalised
  values ``x' = (x - mean) / std``, with the statistics of every target folded in so far (a
  warm-up batch the user folded in first, then this batch's);
- ``value_clip_fraction``: the share of predictions whose *normalised* change exceeds ``c``.

The returns are on a scale (mean 50, std 10) where the two spaces differ: a clip of 0.2 in raw
units clips nearly every prediction, in normalised units about half of them.

Oracle: ``conformance.oracles.ppo_value_clipping.value_norm_stats`` (the normalisers'
statistics in numpy) and ``vf_loss`` (Baselines ppo2) on the normalised arrays. The
normalisers keep float32 statistics: the tolerance is float32's. Every input is seeded.
"""

from __future__ import annotations

import numpy as np
import pytest

from conformance import capabilities, device
from conformance._assertions import assert_close, message
from conformance.interface.ppo_value_clipping import VALUE_NORM_LOSS_CLASSES, VALUE_NORMS
from conformance.oracles import ppo_value_clipping as oracle
from conformance.test_ppo_value_clipping import _column, _value_net

PR_3748 = "https://github.com/pytorch/rl/pull/3748"
CLIP = 0.2
RTOL = 2e-5  # float32 statistics
COEFF = 0.5


@pytest.fixture
def norms(request, impl, ppo_value_clipping):
    return capabilities.require(request, impl, "ppo_value_clipping", ppo_value_clipping,
                                "critic_loss_value_norm")


def _batch():
    """(v, old, R, warm-up targets), seeded; no normalised change within 1e-4 of the clip."""
    rng = np.random.default_rng(3748)
    R = 50.0 + 10.0 * rng.normal(size=24)
    old = R + 5.0 * rng.normal(size=24)
    v = old + 3.0 * rng.normal(size=24)
    warm = 20.0 + 5.0 * rng.normal(size=32)
    return v, old, R, warm


def _expected(v, old, R, stats):
    mean, std = stats
    return oracle.vf_loss((v - mean) / std, (old - mean) / std, (R - mean) / std, CLIP)


def _cause(loss, v, old, R, warm, norm):
    """Names the space a wrong loss was clipped in, when it is one of these."""
    k = 2.0 * COEFF
    mean, std = oracle.value_norm_stats(norm, *([warm] if warm is not None else []), R)
    alternatives = {
        "clipped and compared in raw units (no normalisation)": oracle.vf_loss(v, old, R, CLIP),
        "the stored prediction left unnormalised (the clip radius mixes the two spaces)":
            oracle.vf_loss((v - mean) / std, old, (R - mean) / std, CLIP)}
    if warm is not None:
        alternatives["normalised by this batch's statistics alone (the warm-up lost)"] = \
            _expected(v, old, R, oracle.value_norm_stats(norm, R))
        alternatives["normalised by the statistics before this batch was folded in"] = \
            _expected(v, old, R, oracle.value_norm_stats(norm, warm))
    for words, ref in alternatives.items():
        if abs(loss - k * ref.loss) <= 1e-4 * abs(k * ref.loss):
            return words
    return None


@pytest.mark.parametrize("warmup", [False, True], ids=["fresh", "warmed-up"])
@pytest.mark.parametrize("norm", VALUE_NORMS)
@pytest.mark.parametrize("loss_class", VALUE_NORM_LOSS_CLASSES)
def test_value_clipping_in_normalised_space(norms, loss_class, norm, warmup):
    """Loss, gradient and value clip fraction: Baselines' clipping of the normalised values,
    the statistics including this batch's targets (and the warm-up's)."""
    v, old, R, warm = _batch()
    warm = warm if warmup else None
    stats = oracle.value_norm_stats(norm, *([warm] if warmup else []), R)
    ref = _expected(v, old, R, stats)
    delta = np.abs((v - old) / stats[1])
    assert np.min(np.abs(delta - CLIP)) > 1e-4, "the spec's batch has a change at the clip"
    net = device.put(_value_net())
    report = norms.critic_loss_value_norm(
        loss_class=loss_class, norm=norm,
        warmup=None if warm is None else device.put(_column(warm)), value_net=net,
        observation=device.put(_column(v)), old_value=device.put(_column(old)),
        returns=device.put(_column(R)), clip_value=CLIP, critic_coeff=COEFF)
    loss = device.host(report.loss, "CriticReport.loss")
    loss.backward()
    loss = float(loss.detach())
    frac = report.value_clip_fraction
    params = {"loss": loss_class, "value_norm": norm, "warm-up": warmup, "clip_value": CLIP,
              "critic_coeff": COEFF, "B": len(v), "mean": stats[0], "std": stats[1]}
    k = 2.0 * COEFF  # TorchRL's "l2" has no 0.5: twice Baselines' vf_loss, times the coeff
    cause = _cause(loss, v, old, R, warm, norm)
    assert_close(f"critic loss with value_norm != {k:g} * Baselines vf_loss of the normalised "
                 "values", loss, k * ref.loss, params=params, rtol=RTOL, cause=cause,
                 link=PR_3748)
    # d loss / d theta: the normalised prediction moves by 1/std per unit of the prediction
    g = k * ref.dloss_dv / stats[1]
    for name, x, p in (("weight", v, net.weight), ("bias", np.ones_like(v), net.bias)):
        actual = float(device.host(p.grad, f"the value network's {name} gradient").sum())
        assert_close(f"d critic loss / d {name} with value_norm != Baselines' gradient through "
                     "the normalisation", actual, float(np.sum(g * x)), params=params,
                     rtol=RTOL, atol=1e-9, cause=cause, link=PR_3748)
    if frac is None:
        raise AssertionError(message("no value clip fraction reported while clipping is on",
                                     params=params, expected=ref.clip_fraction, actual=None,
                                     link=PR_3748))
    assert_close("value clip fraction with value_norm != mean(|v' - v_old'| > c) of the "
                 "normalised values", frac, ref.clip_fraction, params=params, atol=1e-12,
                 cause=cause, link=PR_3748)


def _loss_of(v, old, R, stats, clip):
    """Baselines' clipped loss of the normalised values, or the unclipped one (clip None)."""
    if clip is not None:
        return _expected(v, old, R, stats)
    mean, std = stats
    return oracle.unclipped_vf_loss((v - mean) / std, (R - mean) / std)


@pytest.mark.parametrize("clip", [CLIP, None], ids=["clip=0.2", "clip=off"])
@pytest.mark.parametrize("norm", VALUE_NORMS)
@pytest.mark.parametrize("loss_class", VALUE_NORM_LOSS_CLASSES)
def test_padding_is_left_out_of_the_normaliser(norms, loss_class, norm, clip):
    """Under TorchRL's validity mask (a padded tail, pytorch/rl#4057) the normaliser folds in
    the valid targets only (the padding's are arbitrary: here 10 standard deviations off), and
    the loss (clipped or not) and the clip fraction are those of the valid positions,
    normalised by them."""
    v, old, R, _ = _batch()
    valid = np.arange(len(v)) < len(v) - 7
    R = np.where(valid, R, 500.0)
    v, old = np.where(valid, v, 500.0), np.where(valid, old, 480.0)
    stats = oracle.value_norm_stats(norm, R[valid])
    ref = _loss_of(v[valid], old[valid], R[valid], stats, clip)
    net = device.put(_value_net())
    report = norms.critic_loss_value_norm(
        loss_class=loss_class, norm=norm, warmup=None, value_net=net,
        observation=device.put(_column(v)), old_value=device.put(_column(old)),
        returns=device.put(_column(R)), clip_value=clip, critic_coeff=COEFF,
        valid=device.put(_column(valid).bool()))
    loss = float(device.host(report.loss, "CriticReport.loss").detach())
    params = {"loss": loss_class, "value_norm": norm, "clip_value": clip, "B": len(v),
              "valid": int(valid.sum()), "padding": "tail of 7, targets 500",
              "mean": stats[0], "std": stats[1]}
    k = 2.0 * COEFF
    whole = oracle.value_norm_stats(norm, R)
    counted = _loss_of(v[valid], old[valid], R[valid], whole, clip)
    cause = (f"the padding's targets are folded into the normaliser (mean {whole[0]:.4g}, std "
             f"{whole[1]:.4g} instead of {stats[0]:.4g}, {stats[1]:.4g})"
             if abs(loss - k * counted.loss) <= 1e-4 * abs(k * counted.loss) else None)
    assert_close(f"critic loss with value_norm under a validity mask != {k:g} * Baselines "
                 "vf_loss of the valid positions, normalised by their statistics", loss,
                 k * ref.loss, params=params, rtol=RTOL, cause=cause, link=PR_3748)
    if clip is None:
        return
    frac = report.value_clip_fraction
    assert_close("value clip fraction with value_norm under a validity mask != the share of "
                 "valid normalised changes above c", np.nan if frac is None else frac,
                 ref.clip_fraction, params=params, atol=1e-12, link=PR_3748)
