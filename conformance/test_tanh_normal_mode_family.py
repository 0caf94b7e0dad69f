"""§1 family: the score a SAC actor trains on, at saturation.

SAC's actor loss is ``alpha * log pi(a|s) - Q(s, a)`` with ``a`` a reparametrised draw and
``log pi(a|s)`` its score. For Y = c + r tanh(X) the score must be that of the pre-tanh value X
that produced the action: once tanh saturates (float32 rounds tanh(x) to 1 from |x| ~ 9), the
action no longer determines X, and scoring the rounded action (``rsample()`` then
``log_prob()``, which inverts the clamped action) evaluates the Normal density far from the
draw. pytorch/rl#4080 (TorchRL 0.14) reported scores off by ~16 000 and fixed the actor path by
sampling and scoring the same pre-tanh value (``rsample_and_log_prob``).

Oracle: ``conformance.oracles.tanh_normal_mode.score_bounds``, closed form in float64: the score
of any draw within 6 standard deviations of ``mu`` (seeded draws; the probability of a draw
beyond is ~2e-9 per element), whatever the draw was. A score computed from the rounded action
lies hundreds of nats outside. The action itself must lie within the image of those draws, up
to 1e-5 r (TorchRL's ``safe_tanh`` keeps saturated float32 actions ~1e-6 inside the bounds).
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

from conformance import capabilities, device
from conformance._assertions import message
from conformance.oracles import tanh_normal_mode as oracle

RL_4080 = "https://github.com/pytorch/rl/pull/4080"
Z_MAX = 6.0
B, D = 4, 3
SCALE = 0.05
ROUNDED = ("the score was computed from the rounded action (rsample() then log_prob(): the "
           "action is inverted through a clamped atanh, a pre-tanh value far from the draw) "
           "instead of the pre-tanh draw itself")


@pytest.fixture
def scoring(request, impl, tanh_normal_mode):
    return capabilities.require(request, impl, "tanh_normal_mode", tanh_normal_mode,
                                "sample_and_score")


def _loc(magnitude: float, seed: int) -> torch.Tensor:
    """[B, D] locations of the given magnitude with seeded signs and a small seeded spread."""
    g = torch.Generator().manual_seed(seed)
    sign = torch.randint(0, 2, (B, D), generator=g) * 2 - 1
    return (sign * (magnitude + 0.5 * torch.rand(B, D, generator=g))).float()


@pytest.mark.parametrize("bounds", [(-1.0, 1.0), (0.0, 4.0)], ids=lambda b: f"bounds={b}")
@pytest.mark.parametrize("magnitude", [0.5, 4.0, 9.0, 15.0], ids=lambda m: f"abs_loc={m}")
def test_score_of_a_draw_is_the_score_of_its_pre_tanh_value(scoring, magnitude, bounds):
    """float32 TanhNormal with |loc| from 0.5 (no saturation) to 15 (tanh(x) == 1 in float32),
    scale 0.05: the score the actor trains on lies within the closed-form bounds of the
    scores of draws within 6 standard deviations."""
    low, high = bounds
    loc = _loc(magnitude, seed=int(magnitude * 10))
    scale = torch.full_like(loc, SCALE)
    dist = scoring.make(device.put(loc), device.put(scale), low=low, high=high)
    action, log_prob = device.host(scoring.sample_and_score(dist, seed=3), "sample_and_score()")
    params = {"|loc|": magnitude, "scale": SCALE, "low": low, "high": high, "dtype": "float32",
              "batch": (B, D)}
    lower, upper = oracle.score_bounds(loc.double().numpy(), scale.double().numpy(), low=low,
                                       high=high, z_max=Z_MAX)
    got = log_prob.detach().double().reshape(-1).numpy()
    if got.shape != lower.shape:
        raise AssertionError(message("score shape != batch shape (summed over the last "
                                     "dimension)", params=params, expected=lower.shape,
                                     actual=got.shape))
    tol = 1e-4 * np.maximum(1.0, np.abs(upper))  # float32 sums of D terms
    outside = ~((got >= lower - tol) & (got <= upper + tol)) | ~np.isfinite(got)
    if outside.any():
        i = int(np.flatnonzero(outside)[0])
        raise AssertionError(message(
            "score of a reparametrised draw is not the score of any draw within 6 standard "
            "deviations of loc", params=params,
            expected=f"within [{lower[i]:.6g}, {upper[i]:.6g}] (row {i})", actual=float(got[i]),
            detail=f"{int(outside.sum())} of {len(got)} rows outside; all: {np.round(got, 3)}",
            cause=ROUNDED if magnitude >= 9 else None, link=RL_4080))
    a = action.detach().double().numpy()
    c, r = (high + low) / 2, (high - low) / 2
    lo_img = c + r * np.tanh(loc.double().numpy() - Z_MAX * SCALE)
    hi_img = c + r * np.tanh(loc.double().numpy() + Z_MAX * SCALE)
    slack = 1e-5 * r  # a "safe" tanh may keep saturated actions ~1e-6 inside the bounds
    if not ((a >= lo_img - slack) & (a <= hi_img + slack)).all():
        raise AssertionError(message(
            "action outside the image of draws within 6 standard deviations of loc",
            params=params, expected="c + r tanh(loc +- 6 scale)", actual=a))
