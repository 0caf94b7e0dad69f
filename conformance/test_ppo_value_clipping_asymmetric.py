"""§4's policy side: the clipped objective and its clip fraction under an asymmetric clip range.

``ClipPPOLoss(clip_epsilon=(low, high))`` (DAPO's "clip-higher", torchrl 0.14) clips the ratio
``r = pi_new(a) / pi_old(a)`` to ``[1 - low, 1 + high]`` instead of ``[1 - eps, 1 + eps]``; the
loss is ``-mean(min(r A, clip(r) A))`` and ``clip_fraction`` the share of ratios outside the
range (pytorch/rl#4172 checks TorchRL's, #4144 is the audit it answers). The specs build
ratios on both sides of both bounds, with advantages of both signs, so that the two bounds are
told apart: a ratio of 1.25 is clipped by ``eps = 0.2`` and not by ``(0.2, 0.28)``; a symmetric
float threshold is checked by the same law.

Oracle: the clipped surrogate in numpy (float64), PPO's definition (Schulman et al. 2017,
eq. 7) with the two bounds.
"""

from __future__ import annotations

import numpy as np
import pytest

from conformance import capabilities, device
from conformance._assertions import assert_close, message
from conformance.test_ppo_value_clipping import _column

PR_4172 = "https://github.com/pytorch/rl/pull/4172"
RANGES = [(0.2, 0.28), (0.1, 0.3), 0.2]
#: TorchRL keeps the thresholds as float32 buffers: the clipped ratio is exact to ~1e-7; the
#: smallest difference a wrong bound makes here is ~1e-3 of the loss
RTOL = 2e-6


@pytest.fixture
def clip_range(request, impl, ppo_value_clipping):
    return capabilities.require(request, impl, "ppo_value_clipping", ppo_value_clipping,
                                "objective_with")


def _bounds(clip_epsilon) -> tuple[float, float]:
    low, high = clip_epsilon if isinstance(clip_epsilon, tuple) else (clip_epsilon,) * 2
    return 1.0 - low, 1.0 + high


def _batch(clip_epsilon):
    """Ratios below, inside and above the range (none within 1e-3 of a bound) and between the
    two symmetric alternatives; advantages of both signs. Seeded."""
    rng = np.random.default_rng(43)
    lo, hi = _bounds(clip_epsilon)
    ratio = np.concatenate([rng.uniform(0.5, lo - 1e-3, 6), rng.uniform(lo + 1e-3, hi - 1e-3, 6),
                            rng.uniform(hi + 1e-3, 1.6, 6), [1.25, 0.85, 1.15]])
    advantage = np.where(np.arange(ratio.size) % 2 == 0, 1.0, -1.0) * rng.uniform(0.5, 2.0,
                                                                                 ratio.size)
    return np.log(ratio), advantage


def _oracle(log_weight, advantage, clip_epsilon) -> tuple[float, float]:
    lo, hi = _bounds(clip_epsilon)
    r = np.exp(log_weight)
    loss = -float(np.mean(np.minimum(r * advantage, np.clip(r, lo, hi) * advantage)))
    return loss, float(np.mean((r < lo) | (r > hi)))


@pytest.mark.parametrize("clip_epsilon", RANGES, ids=lambda e: f"clip_epsilon={e}".replace(" ", ""))
def test_the_clip_range_sets_the_objective_and_the_clip_fraction(clip_range, clip_epsilon):
    """``loss_objective`` and ``clip_fraction`` of the range ``[1 - low, 1 + high]``."""
    log_weight, advantage = _batch(clip_epsilon)
    params = {"clip_epsilon": clip_epsilon, "B": log_weight.size,
              "range": "[{:g}, {:g}]".format(*_bounds(clip_epsilon))}
    try:
        out = clip_range.objective_with(clip_epsilon=clip_epsilon,
                                        log_weight=device.put(_column(log_weight)),
                                        advantage=device.put(_column(advantage)))
    except Exception as exc:  # noqa: BLE001 -- a refusal of a valid range is the failure
        raise AssertionError(message(
            "the loss raised for a valid clip range", params=params,
            expected="loss_objective and clip_fraction",
            actual=f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}",
            cause="the release takes no (low, high) tuple", link=PR_4172)) from exc
    loss, fraction = _oracle(log_weight, advantage, clip_epsilon)
    cause = None
    if isinstance(clip_epsilon, tuple):  # one bound used on both sides?
        for one in clip_epsilon:
            alternative = _oracle(log_weight, advantage, one)[0]
            if abs(out.loss - alternative) <= RTOL * abs(alternative) + 1e-9:
                cause = (f"the range is symmetric: clip_epsilon={one:g} is used on both sides of "
                         "the ratio")
    assert_close("loss_objective != -mean(min(r A, clip(r, 1 - low, 1 + high) A))", out.loss,
                 loss, params=params, rtol=RTOL, atol=1e-9, cause=cause, link=PR_4172)
    if out.clip_fraction is None:
        raise AssertionError(message("no clip_fraction reported", params=params,
                                     expected=fraction, actual=None, link=PR_4172))
    assert_close("clip_fraction != mean(r outside [1 - low, 1 + high])", out.clip_fraction,
                 fraction, params=params, rtol=0, atol=1e-12, link=PR_4172)
