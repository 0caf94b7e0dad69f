"""§3 with importance weights: the SAC losses of a batch drawn by a prioritized sampler
(pytorch/rl#3235, "Weight loss outputs when using prioritized sampler", merged 2025-11-15).

A prioritized replay buffer draws transitions with probability P(i) and hands back one
importance weight per drawn row (§5 specifies the weights themselves); since #3235 TorchRL's
losses read them (``"priority_weight"``) and weight their reduction, so a user who samples a
SAC batch from a ``TensorDictPrioritizedReplayBuffer`` gets weighted losses without asking. The
weight belongs to the *row* (the transition the sampler drew): in a multi-agent batch, where
each agent-step has its own term, every agent-step of a row carries that row's weight.

- Unreduced (reduction "none"): each agent-step's term times its row's weight, [B] or [B, N].
- Reduced (reduction "mean"): the weighted mean over the agent-steps. Its normalisation is a
  convention the implementation declares (``SACWeighted.normalisation``): TorchRL's ``_reduce``
  docstring (torchrl 0.14.1, objectives/utils.py): "When provided with reduction="mean",
  computes: (tensor * weights).sum() / weights.sum()"; Schaul et al. (2016, Algorithm 1) scale
  the weights by 1 / max w and accumulate ``w_i * delta_i``, a mean normalised by the count.
  Either is held exactly; a mixture of the two is not.

Optional capability ``losses_weighted`` (``conformance.interface.SACWeightedLosses``). Oracle:
``conformance/oracles/sac_done_states.py`` (``sac_losses`` per agent-step, then ``weighted``).
Weights 1, 1/2, 1/4, 1/8 for the four rows (max-normalised, as a sampler's are).
"""

from __future__ import annotations

import pytest
import torch

from conformance import capabilities, device
from conformance._assertions import assert_close, message
from conformance.interface import SAC_LAYOUTS, WEIGHT_NORMALISATIONS
from conformance.oracles import sac_done_states as oracle
from conformance.test_sac_done_states import (
    ALPHA,
    ATOL,
    GAMMA,
    KINDS,
    LOSSES,
    RTOL,
    TARGET_ENTROPY,
    B,
    _chain,
    batch,
    networks,
    transitions,
)

RL_3235 = "https://github.com/pytorch/rl/pull/3235"
WEIGHTS = torch.tensor([1.0, 0.5, 0.25, 0.125], dtype=torch.float64)
assert len(WEIGHTS) == B


@pytest.fixture
def weighted(request, impl, sac_done_states):
    return capabilities.require(request, impl, "sac_done_states", sac_done_states,
                                "losses_weighted")


def _call(area, kind, layout, b, nets, reduction, params):
    __tracebackhide__ = True
    try:
        out = area.losses_weighted(networks=device.put(nets), batch=device.put(b), alpha=ALPHA,
                                   gamma=GAMMA, target_entropy=TARGET_ENTROPY[kind],
                                   weights=device.put(WEIGHTS), reduction=reduction)
    except (AssertionError, NotImplementedError):
        raise
    except Exception as exc:  # noqa: BLE001 - a loss that raises fails the spec
        text = " | ".join(str(e).splitlines()[0] for e in _chain(exc) if str(e))
        raise AssertionError(message(
            f"the SAC loss on a batch with importance weights raised {type(exc).__name__}",
            params=params, expected="weighted losses", actual=text[:300],
            cause=None if layout == "single" else
            "the weights [B] (one per row) are applied as they are to losses of one term per "
            "agent-step [B, N], not broadcast over each row's agents", link=RL_3235)) from None
    if out.normalisation not in WEIGHT_NORMALISATIONS:
        raise AssertionError(f"SACWeighted.normalisation must be one of {WEIGHT_NORMALISATIONS}, "
                             f"got {out.normalisation!r}")
    out.losses = device.host(out.losses, "SACWeighted.losses")
    return out


def _expected(kind, b, bare, nets, normalisation):
    t = transitions(b)
    terms = oracle.sac_losses(kind, bare, nets.qvalues, t, alpha=ALPHA, gamma=GAMMA,
                              target_entropy=TARGET_ENTROPY[kind])
    unweighted = {k: float(v.detach().mean()) for k, v in terms.per_step.items()}
    return (*oracle.weighted(terms, WEIGHTS, t.row, normalisation), unweighted)


def _params(kind, layout, b, reduction):
    return {"kind": kind, "layout": layout, "reduction": reduction,
            "row weights": WEIGHTS.tolist(), "agent-steps": b.reward[..., 0].numel()}


_kinds = pytest.mark.parametrize("kind", KINDS)
_layouts = pytest.mark.parametrize("layout", SAC_LAYOUTS)


@_layouts
@_kinds
def test_unreduced_losses_carry_their_rows_weight(weighted, kind, layout):
    """Reduction "none": each agent-step's loss is its oracle term times its row's weight."""
    b = batch(kind, layout, "mixed")
    nets, bare = networks(kind)
    params = _params(kind, layout, b, "none")
    out = _call(weighted, kind, layout, b, nets, "none", params)
    per_step, _, _ = _expected(kind, b, bare, nets, out.normalisation)
    lead = tuple(b.reward.shape[:-1])
    for name in LOSSES:
        got = out.losses[name]
        want = per_step[name].reshape(lead)
        unweighted = want / WEIGHTS.reshape(-1, *([1] * (len(lead) - 1)))
        same_as_unweighted = (tuple(got.shape) == lead
                              and torch.allclose(got, unweighted, rtol=RTOL, atol=ATOL))
        assert_close(f"unreduced {name} with importance weights != weight of the row x term",
                     got, want, params=params, rtol=RTOL, atol=ATOL, link=RL_3235,
                     cause="the weights are ignored (losses before pytorch/rl#3235 read none)"
                     if same_as_unweighted else None)


@_layouts
@_kinds
def test_the_reduced_loss_is_the_weighted_mean(weighted, kind, layout):
    """Reduction "mean": the weighted mean of the agent-step terms, normalised as the
    implementation declares (by the weights, or by the count)."""
    b = batch(kind, layout, "mixed")
    nets, bare = networks(kind)
    params = _params(kind, layout, b, "mean")
    out = _call(weighted, kind, layout, b, nets, "mean", params)
    _, want, unweighted = _expected(kind, b, bare, nets, out.normalisation)
    other = "count" if out.normalisation == "weights" else "weights"
    _, as_other, _ = _expected(kind, b, bare, nets, other)
    params = {**params, "normalisation": out.normalisation}
    for name in LOSSES:
        got = float(out.losses[name])
        cause = None
        if abs(got - unweighted[name]) <= ATOL + RTOL * abs(unweighted[name]):
            cause = "the weights are ignored (losses before pytorch/rl#3235 read none)"
        elif abs(got - as_other[name]) <= ATOL + RTOL * abs(as_other[name]):
            cause = (f"normalised by the {other}, not by the {out.normalisation} the "
                     "implementation declares")
        assert_close(f"{name} with importance weights != the weighted mean", got, want[name],
                     params=params, rtol=RTOL, atol=ATOL, cause=cause, link=RL_3235)
