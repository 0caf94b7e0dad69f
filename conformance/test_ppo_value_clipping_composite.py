"""§4 with a composite value network: one clipped critic loss per value head (pytorch/rl#3031).

Since pytorch/rl#3031 (torchrl 0.9.2 and 0.10) ``ClipPPOLoss`` takes a critic that writes several values,
``("state_value", head)`` (several reward channels, several discount factors), with a
composite ``"value_target"`` beside them: ``loss_critic`` is computed per head. A user who
trains with it calls the loss's forward and adds up its ``loss_*`` outputs, as TorchRL's
examples do; each head's entry must then be what the loss's reduction makes of every other
loss term:

- per head, the reduced (mean) Baselines value-clipped loss of that head:
  ``critic_scale * critic_coeff * vf_loss(v_h, v_old_h, R_h, c)``, a scalar whose gradient
  reaches that head's parameters only;
- per head, ``value_clip_fraction``: the share of that head's predictions that moved more
  than ``c``.

A per-sample tensor per head (the loss unreduced) fails: it is not the loss the reduction
promises, and a sum of the outputs is no scalar to backpropagate.

Oracle: ``conformance.oracles.ppo_value_clipping.vf_loss`` (Baselines ppo2, numpy) per head.
Every input is seeded.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

from conformance import capabilities, device
from conformance._assertions import assert_close, message
from conformance.oracles import ppo_value_clipping as oracle
from conformance.test_ppo_value_clipping import ATOL, RTOL, _column

PR_3031 = "https://github.com/pytorch/rl/pull/3031"
CLIP = 0.25  # float32-exact: TorchRL keeps the threshold as a float32 buffer
COEFF = 0.5


class _Heads(torch.nn.Module):
    """One affine head per observation column, identity at start: head h predicts column h."""

    def __init__(self, k):
        super().__init__()
        self.weight = torch.nn.Parameter(torch.ones(k, dtype=torch.float64))
        self.bias = torch.nn.Parameter(torch.zeros(k, dtype=torch.float64))

    def forward(self, observation):
        out = observation * self.weight + self.bias
        return tuple(out[..., i : i + 1] for i in range(out.shape[-1]))


@pytest.fixture
def composite(request, impl, ppo_value_clipping):
    return capabilities.require(request, impl, "ppo_value_clipping", ppo_value_clipping,
                                "critic_loss_composite")


def _batch(k, size=32):
    rng = np.random.default_rng(3031 + k)
    old = rng.normal(0.0, 2.0, (size, k)) * np.arange(1, k + 1)  # heads of different scales
    v = old + rng.normal(0.0, 0.3, (size, k))
    R = old + rng.normal(0.0, 3.0, (size, k))
    return v, old, R


HEADS = [("reward",), ("reward", "cost"), ("a", "b", "c")]


def _run(composite, heads):
    k = len(heads)
    v, old, R = _batch(k)
    net = device.put(_Heads(k))
    report = composite.critic_loss_composite(
        value_net=net, heads=heads, observation=device.put(torch.as_tensor(v)),
        old_value={h: device.put(_column(old[:, i])) for i, h in enumerate(heads)},
        returns={h: device.put(_column(R[:, i])) for i, h in enumerate(heads)},
        clip_value=CLIP, critic_coeff=COEFF)
    params = {"heads": heads, "B": len(v), "clip_value": CLIP, "critic_coeff": COEFF}
    refs = {h: oracle.vf_loss(v[:, i], old[:, i], R[:, i], CLIP) for i, h in enumerate(heads)}
    if not isinstance(report.loss, dict) or set(report.loss) != set(heads):
        scale = composite.critic_scale * COEFF
        raise AssertionError(message(
            "loss_critic of a composite critic is not one loss per head", params=params,
            expected={h: scale * r.loss for h, r in refs.items()},
            actual=report.loss if not isinstance(report.loss, dict) else sorted(report.loss),
            link=PR_3031))
    return report, net, (v, old, R), refs, params


@pytest.mark.parametrize("heads", HEADS, ids=lambda h: "heads=" + ",".join(h))
def test_each_head_is_clipped_against_its_stored_prediction(composite, heads):
    """Per head: the loss (its mean, if the loss returns one per sample: the reduction is the
    next spec's), its gradient on that head's parameters, and the clip fraction, against
    Baselines' value clipping of the head's new prediction around its stored one."""
    report, net, (v, old, R), refs, params = _run(composite, heads)
    scale = composite.critic_scale * COEFF
    fractions = report.value_clip_fraction
    inert = {h: oracle.vf_loss(v[:, i], v[:, i], R[:, i], CLIP) for i, h in enumerate(heads)}
    total = 0
    for h in heads:
        loss = report.loss[h].mean()
        actual = float(device.host(loss, f"loss_critic[{h}]").detach())
        cause = ("the stored prediction is the new one (clipped around itself: no clipping), "
                 "as when the critic writes its output into the composite entry the stored "
                 "values were read from" if abs(actual - scale * inert[h].loss)
                 <= 1e-9 * abs(scale * inert[h].loss) else None)
        assert_close(f"loss_critic[{h!r}] != {scale:g} * Baselines vf_loss of the head",
                     actual, scale * refs[h].loss, params=params, rtol=RTOL, atol=ATOL,
                     cause=cause, link=PR_3031)
        total = total + loss
    total.backward()
    for i, h in enumerate(heads):
        g = scale * refs[h].dloss_dv
        for name, p, x in (("weight", net.weight, v[:, i]), ("bias", net.bias, 1.0)):
            actual = float(device.host(p.grad, f"the {name} gradient")[i])
            assert_close(f"d (sum of the heads' losses) / d {name}[{h!r}] != Baselines' "
                         "gradient of that head", actual, float(np.sum(g * x)),
                         params=params, rtol=RTOL, atol=ATOL, link=PR_3031)
    expected = {h: r.clip_fraction for h, r in refs.items()}
    if not isinstance(fractions, dict) or set(fractions) != set(heads):
        raise AssertionError(message("value_clip_fraction of a composite critic is not one "
                                     "share per head", params=params, expected=expected,
                                     actual=fractions, link=PR_3031))
    for h in heads:
        assert_close(f"value_clip_fraction[{h!r}] != mean(|v - v_old| > c) of the head",
                     fractions[h], expected[h], params=params, atol=1e-12, link=PR_3031)


@pytest.mark.parametrize("heads", HEADS, ids=lambda h: "heads=" + ",".join(h))
def test_each_heads_loss_is_reduced(composite, heads):
    """Per head, ``loss_critic`` is one number, the batch's mean (the loss's reduction, as
    for every other loss term): a training loop's sum of the losses is a scalar."""
    report, _, _, refs, params = _run(composite, heads)
    scale = composite.critic_scale * COEFF
    for h in heads:
        loss = device.host(report.loss[h], f"loss_critic[{h}]")
        if loss.numel() != 1:
            raise AssertionError(message(
                f"loss_critic[{h!r}] of a composite critic is not reduced", params=params,
                expected=f"a scalar, {scale * refs[h].loss:.10g}",
                actual=f"a tensor of shape {tuple(loss.shape)}",
                cause="the loss's reduction reaches only the outputs whose own name starts "
                      "with 'loss_', not the heads nested under 'loss_critic'", link=PR_3031))
