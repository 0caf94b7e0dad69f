"""§1 TanhNormal with its scale given as a callable of ``loc`` (pytorch/rl#3296).

TorchRL's ``TanhNormal`` takes ``scale`` as a tensor, a number, or (from 0.11 on) a callable
that it calls on ``loc``: its docstring recommends ``torch.ones_like`` or
``functools.partial(torch.full_like, fill_value=0.1)`` to keep device transfers and graph breaks
out of ``torch.compile``. A distribution built that way must be the distribution of the called
scale, ``scale_fn(loc)``:

- its mode is the mode of the distribution built with the tensor ``scale_fn(loc)`` (the same
  library, the same global seed: TorchRL's ``get_mode()`` samples; whether that mode is the
  argmax of the density is the other §1 specs' question);
- the score of a reparametrised draw (what SAC's actor trains on) is the log-density of the
  drawn action under Normal(loc, scale_fn(loc)) pushed through c + r tanh, computed by the
  oracle (``conformance.oracles.tanh_normal_mode.log_density``, float64, with ``scale_fn``'s
  numpy twin): a scale that was not the callable's result is off by log(sigma'/sigma) and more
  per dimension.

The callables: ``torch.ones_like``, ``partial(torch.full_like, fill_value=0.5)`` and one of
loc's values (0.1 + 0.5 sigmoid(loc): a state-dependent scale). ``tanh_loc`` is left open here:
TorchRL's constructor calls the callable on the raw ``loc`` and its ``update()`` on the rescaled
one, which coincide for the shape-only callables TorchRL documents.
"""

from __future__ import annotations

import functools

import numpy as np
import pytest
import torch

from conformance import capabilities, device
from conformance._assertions import message
from conformance.oracles import tanh_normal_mode as oracle

RL_3296 = "https://github.com/pytorch/rl/pull/3296"
B, D = 8, 3  # 24 elements: the batched solve of an exact mode (past its 16-element float path)
TOL_Y = 1e-4  # float32 modes, times r (conformance/test_tanh_normal_mode.py's TOL_Y)


def _sigmoid_scale(loc):
    return 0.1 + 0.5 * torch.sigmoid(loc)


#: id -> (the callable handed to the library, its numpy twin for the oracle)
SCALE_FNS = {
    "ones_like": (torch.ones_like, np.ones_like),
    "full_like(0.5)": (functools.partial(torch.full_like, fill_value=0.5),
                       functools.partial(np.full_like, fill_value=0.5)),
    "of_loc": (_sigmoid_scale, lambda x: 0.1 + 0.5 / (1.0 + np.exp(-x))),
}
BOUNDS = [(-1.0, 1.0), (0.0, 4.0)]


@pytest.fixture
def callable_scale(request, impl, tanh_normal_mode):
    return capabilities.require(request, impl, "tanh_normal_mode", tanh_normal_mode,
                                "make_with_scale_fn")


def _loc(seed: int) -> torch.Tensor:
    """[B, D] float32 locations, 1.2 N(0, 1), seeded (moderate: no draw saturates tanh)."""
    g = torch.Generator().manual_seed(seed)
    return 1.2 * torch.randn(B, D, generator=g)


def _build(area, loc, fn_id, low, high, params):
    """``make_with_scale_fn`` on the run's device; a refusal is the spec's failure."""
    scale_fn = SCALE_FNS[fn_id][0]
    try:
        return area.make_with_scale_fn(device.put(loc), scale_fn, low=low, high=high)
    except Exception as exc:  # noqa: BLE001 - any refusal is the finding, named in the message
        raise AssertionError(message(
            "a callable scale was refused: the distribution could not be built", params=params,
            expected=f"the distribution of scale = {fn_id}(loc)",
            actual=f"{type(exc).__name__}: {exc}",
            cause="TanhNormal takes the scale as a tensor or a number only (a callable scale "
                  "came with TorchRL 0.11)", link=RL_3296)) from exc


@pytest.mark.parametrize("bounds", BOUNDS, ids=lambda b: f"bounds={b}")
@pytest.mark.parametrize("fn_id", list(SCALE_FNS), ids=lambda f: f"scale_fn={f}")
def test_callable_scale_has_the_mode_of_the_called_scale(callable_scale, fn_id, bounds):
    """The mode of the distribution built with ``scale_fn`` equals the mode of the one built
    with the tensor ``scale_fn(loc)``, within 1e-4 r (float32)."""
    low, high = bounds
    loc = _loc(seed=7)
    params = {"scale_fn": fn_id, "low": low, "high": high, "dtype": "float32", "batch": (B, D)}
    dist = _build(callable_scale, loc, fn_id, low, high, params)
    torch.manual_seed(0)  # TorchRL's get_mode() samples: the same draws for both
    got = device.host(callable_scale.mode(dist), "mode()").detach().double().numpy()
    scale = SCALE_FNS[fn_id][0](loc)
    called = callable_scale.make(device.put(loc), device.put(scale), low=low, high=high)
    torch.manual_seed(0)
    want = device.host(callable_scale.mode(called), "mode()").detach().double().numpy()
    tol = TOL_Y * (high - low) / 2
    if got.shape != want.shape or not (np.abs(got - want) <= tol).all():
        raise AssertionError(message(
            "the mode with a callable scale is not the mode with the scale it returns",
            params=params, expected=want, actual=got,
            detail=f"tolerance {tol:.3g}; the scale {fn_id}(loc): {scale.numpy().round(4)}",
            link=RL_3296))


@pytest.mark.parametrize("fn_id", list(SCALE_FNS), ids=lambda f: f"scale_fn={f}")
def test_callable_scale_scores_draws_under_the_called_scale(callable_scale, tanh_normal_mode,
                                                            request, impl, fn_id):
    """The score of a seeded reparametrised draw is the oracle's log-density of the drawn
    action under Normal(loc, scale_fn(loc)) through c + r tanh, summed over the last dim."""
    scoring = capabilities.require(request, impl, "tanh_normal_mode", tanh_normal_mode,
                                   "sample_and_score")
    low, high = -1.0, 1.0
    loc = _loc(seed=11)
    params = {"scale_fn": fn_id, "low": low, "high": high, "dtype": "float32", "batch": (B, D)}
    dist = _build(callable_scale, loc, fn_id, low, high, params)
    action, log_prob = device.host(scoring.sample_and_score(dist, seed=5), "sample_and_score()")
    a = action.detach().double().numpy()
    got = log_prob.detach().double().reshape(-1).numpy()
    mu = loc.double().numpy()
    sigma = SCALE_FNS[fn_id][1](mu)
    per_dim = oracle.log_density(a, mu, sigma, low, high)
    expected = per_dim.sum(-1)
    # The action is the draw rounded to float32: the score of the unrounded draw may differ
    # from the density at the action by what half an ulp of the action changes it, plus
    # float32 arithmetic over D terms.
    a32 = action.detach().cpu().numpy().astype(np.float32)
    steps = [np.nextafter(a32, np.float32(s)).astype(np.float64) for s in (-np.inf, np.inf)]
    moved = [np.abs(oracle.log_density(x, mu, sigma, low, high) - per_dim) for x in steps]
    tol = np.maximum(*moved).sum(-1) + 1e-4 * np.maximum(1.0, np.abs(expected))
    bad = ~(np.abs(got - expected) <= tol)
    if got.shape != expected.shape or bad.any():
        i = int(np.flatnonzero(bad)[0]) if got.shape == expected.shape else 0
        raise AssertionError(message(
            "the score of a draw is not its log-density under the scale the callable returns",
            params=params, expected=expected, actual=got,
            detail=f"first at row {i}: |error| {abs(got[i] - expected[i]):.3g} > tolerance "
                   f"{tol[i]:.3g}; sigma = {fn_id}(loc): {np.round(sigma, 4)}", link=RL_3296))
