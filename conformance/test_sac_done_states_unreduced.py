"""§3 without reduction: SAC losses per agent-step (pytorch/rl#3426, issue #2338).

A SAC loss built with no reduction (TorchRL: ``reduction="none"``) is what a user reaches for to
weight each transition (a prioritized replay buffer's update, a per-sample mask, a memory model
whose [B, T] batch must survive). Then:

- each loss (``loss_actor``, ``loss_qvalue``, ``loss_alpha``) keeps one value per agent-step:
  shape [B] for a single agent, [B, N] for per-agent layouts (done [B, N, 1] at the root, or an
  agent group of batch [B, N]), and each value is the oracle's term for that agent-step, with
  ``skip_done_states`` False and True;
- the mean of the unreduced losses is the reduced loss (``reduction="mean"``, the loss of the
  other §3 specs);
- the container the losses come in keeps the input's batch shape (TorchRL: the output
  TensorDict's ``batch_size`` is the input's, pytorch/rl#3426: "the output TensorDict should
  preserve the input batch dimensions. Previously, the output had an empty batch size");
- the scalar outputs are not per-sample: the temperature ``alpha`` and the batch's mean
  ``entropy`` cannot share that batch shape (#3426: "Scalar values like alpha [...] and
  entropy cannot be included in a TensorDict with non-empty batch dimensions without changing
  their shape"). A loss may leave them out (TorchRL's default) or report them as single values,
  which must then be the coefficient and the batch mean of the policy's entropy estimate
  (-log pi(a~|s) at the drawn action; discrete: -sum_a p log p), not broadcast copies and not
  one agent-step's value.

Optional capability ``losses_unreduced`` (``conformance.interface.SACUnreducedLosses``): a
library without it has these specs reported "not applicable".

Oracle: ``conformance/oracles/sac_done_states.py``, whose losses are means of per-agent-step
terms (``SACTerms.per_step``), computed one agent-step at a time in float64. Networks, batches,
the controlled draw and the tolerances are those of ``conformance/test_sac_done_states.py``.
"""

from __future__ import annotations

import math

import pytest

from conformance import capabilities, device
from conformance._assertions import assert_close, message
from conformance.interface import SAC_LAYOUTS
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
    batch,
    networks,
    run,
    transitions,
)

RL_3426 = "https://github.com/pytorch/rl/pull/3426"
RL_2338 = "https://github.com/pytorch/rl/issues/2338"


@pytest.fixture
def unreduced(request, impl, sac_done_states):
    return capabilities.require(request, impl, "sac_done_states", sac_done_states,
                                "losses_unreduced")


def _unreduced(area, kind, layout, b, skip, nets):
    __tracebackhide__ = True
    out = run(area, kind, layout, b, skip, nets, what="the SAC loss with no reduction",
              method="losses_unreduced")
    out.losses = device.host(out.losses, "SACUnreduced.losses")
    out.scalars = device.host(out.scalars, "SACUnreduced.scalars")
    return out


def _params(kind, layout, skip, b):
    return {"kind": kind, "layout": layout, "skip_done_states": skip,
            "terminated": int(b.terminated.sum()), "agent-steps": b.reward[..., 0].numel()}


def _reference(kind, b, bare, nets):
    return oracle.sac_losses(kind, bare, nets.qvalues, transitions(b), alpha=ALPHA, gamma=GAMMA,
                             target_entropy=TARGET_ENTROPY[kind])


_kinds = pytest.mark.parametrize("kind", KINDS)
_layouts = pytest.mark.parametrize("layout", SAC_LAYOUTS)
_skips = pytest.mark.parametrize("skip", [False, True], ids=lambda s: f"skip={s}")


@_skips
@_layouts
@_kinds
def test_unreduced_losses_are_the_per_agent_step_terms(unreduced, kind, layout, skip):
    """Some agent-steps terminated: each loss has one value per agent-step ([B] or [B, N]), equal
    to the oracle's term for that agent-step, with the flag False and True."""
    b = batch(kind, layout, "mixed")
    nets, bare = networks(kind)
    out = _unreduced(unreduced, kind, layout, b, skip, nets)
    ref = _reference(kind, b, bare, nets)
    lead = tuple(b.reward.shape[:-1])
    params = _params(kind, layout, skip, b)
    for name in LOSSES:
        got = out.losses[name]
        if tuple(got.shape) != lead:
            reduced = got.numel() == 1
            raise AssertionError(message(
                f"unreduced {name} does not keep one value per agent-step", params=params,
                expected=lead, actual=tuple(got.shape),
                cause=("the loss is reduced although no reduction was asked for (a term "
                       "averaged before the reduction step)" if reduced else
                       "the per-agent values are reduced over the agents, or the loss is "
                       "shaped by the root batch instead of the agent-steps"),
                link=RL_3426))
        want = ref.per_step[name].detach().reshape(lead)
        assert_close(f"unreduced {name} != the oracle's term per agent-step", got, want,
                     params=params, rtol=RTOL, atol=ATOL, link=RL_3426)


@_layouts
@_kinds
def test_the_mean_of_the_unreduced_losses_is_the_reduced_loss(unreduced, sac_done_states, kind,
                                                              layout):
    """The same networks and batch through the loss with no reduction and with its default
    (mean) reduction: the mean of each unreduced loss is the reduced loss."""
    b = batch(kind, layout, "mixed")
    nets, _ = networks(kind)
    out = _unreduced(unreduced, kind, layout, b, False, nets)
    reduced = run(sac_done_states, kind, layout, b, False, networks(kind)[0],
                  what="the SAC loss (mean)")
    params = _params(kind, layout, False, b)
    for name in LOSSES:
        assert_close(f"mean of the unreduced {name} != the reduced {name}",
                     out.losses[name].mean(), reduced.losses[name], params=params, rtol=RTOL,
                     atol=ATOL, link=RL_3426)


@_layouts
@_kinds
def test_unreduced_output_keeps_the_batch_shape_and_scalars(unreduced, kind, layout):
    """The container of the unreduced losses has the input's batch shape ([B]); ``alpha`` and
    ``entropy``, if reported, are single values: the coefficient and the batch mean of the
    entropy estimate."""
    b = batch(kind, layout, "mixed")
    nets, bare = networks(kind)
    out = _unreduced(unreduced, kind, layout, b, False, nets)
    params = _params(kind, layout, False, b)
    if out.batch_shape is not None and tuple(out.batch_shape) != (B,):
        raise AssertionError(message(
            "the unreduced losses come in a container without the input's batch shape",
            params=params, expected=(B,), actual=tuple(out.batch_shape),
            cause="the output is built with an empty batch size whatever the reduction (the "
                  "behaviour before pytorch/rl#3426): the per-sample losses cannot be indexed "
                  "or stacked with the batch they belong to", link=RL_2338))
    expected = {"alpha": ALPHA, "entropy": _reference(kind, b, bare, nets).entropy}
    for name, value in out.scalars.items():
        if name not in expected:
            continue
        if value.numel() != 1:
            raise AssertionError(message(
                f"the unreduced output's {name} is not a single value", params=params,
                expected="one value (or not reported)", actual=tuple(value.shape),
                cause=f"{name} is broadcast to the batch shape: a per-sample copy of a scalar "
                      "reads as a per-sample quantity", link=RL_3426))
        got = float(value.reshape(()))
        if not math.isclose(got, expected[name], rel_tol=RTOL, abs_tol=ATOL):
            raise AssertionError(message(
                f"the unreduced output's {name} is not the {name} of the batch", params=params,
                expected=expected[name], actual=got,
                cause="the scalar is read from one agent-step, or from a reduced copy of the "
                      "per-sample tensors" if name == "entropy" else
                      "alpha is not the coefficient the loss uses", link=RL_3426))
