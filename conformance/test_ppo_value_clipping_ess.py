"""§4's policy diagnostics: the effective sample size ``ClipPPOLoss`` logs (``"ESS"``).

PPO is importance sampling from the collecting policy; TorchRL logs the effective sample size
of the ratios ``w = pi_new(a) / pi_old(a)`` of a minibatch, as a share of its size:
``ESS = (sum_b w_b)^2 / sum_b w_b^2 / B`` (Kish), 1 while the policy has not moved, falling
towards 1/B as it drifts (pytorch/rl#1708). When the policy's log-probability is not summed over
some dimensions (a factorised policy, the tokens of an action chunk: a ratio per element), the
sum runs over the batch only, one ESS per element, and the output has the shape of those
dimensions whatever the minibatch size: a last minibatch of one sample reports 1 per element,
in the same shape as the others (pytorch/rl#3936: ``squeeze()`` dropped the batch dimension of a
singleton minibatch, so the sum ran over the features, and the shapes of full and partial
minibatches could not be stacked).

Oracle: ``conformance.oracles.ppo_value_clipping.effective_sample_size`` (numpy, float64).
Every input is seeded.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

from conformance import capabilities, device
from conformance._assertions import assert_close, message
from conformance.oracles import ppo_value_clipping as oracle

PR_3936 = "https://github.com/pytorch/rl/pull/3936"
#: [B, *F]: a singleton minibatch and a full one, without feature dimensions, with one of size 1
#: (squeeze() drops it too), with one and with two
SHAPES = [(1,), (6,), (6, 1), (1, 3), (6, 3), (1, 4, 2), (6, 4, 2)]


@pytest.fixture
def ess(request, impl, ppo_value_clipping):
    return capabilities.require(request, impl, "ppo_value_clipping", ppo_value_clipping,
                                "ess_of")


@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: "B,F=" + ",".join(map(str, s)))
def test_ess_is_kish_over_the_batch_per_element(ess, shape):
    """``"ESS"`` has the shape of the feature dimensions F and holds, per element, Kish's
    effective sample size of the ratios over the batch, divided by B (1 for B = 1)."""
    rng = np.random.default_rng(3936 + sum(shape))
    log_weight = rng.normal(0.0, 0.4, shape)
    expected = oracle.effective_sample_size(log_weight)
    params = {"B": shape[0], "F": shape[1:], "log_weight": "N(0, 0.4), seeded"}
    actual = ess.ess_of(log_weight=device.put(torch.as_tensor(log_weight)))
    if actual is None:
        raise AssertionError(message("no ESS reported", params=params, expected=expected,
                                     actual=None, link=PR_3936))
    actual = device.host(actual, "ESS")
    if tuple(actual.shape) != expected.shape:
        pooled = "the batch dimension was squeezed away" if shape[0] == 1 else (
            "the per-element values were reduced (or a feature dimension of size 1 dropped)")
        raise AssertionError(message(
            "ESS shape != the feature dimensions of the log-ratio", params=params,
            expected=expected.shape, actual=tuple(actual.shape), cause=pooled, link=PR_3936))
    assert_close("ESS != (sum w)^2 / sum w^2 / B over the batch, per element", actual,
                 expected, params=params, rtol=1e-9, atol=1e-12, link=PR_3936)
