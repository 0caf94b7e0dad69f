"""§1 TanhNormal mode, checked against scipy.

The distribution: Y = c + r * tanh(X), X ~ Normal(mu, sigma^2), c = (high + low) / 2,
r = (high - low) / 2. Here mu is ``loc``; with ``tanh_loc=True`` it is
``upscale * tanh(loc / upscale)`` (checked with the default bounds only: for other bounds TorchRL
also adds (low + high) / 2 to it, a convention this file does not pin down).

The mode is the argmax of the density of Y over the open interval (low, high):
c + r * tanh(x*), x* = argmax of g(x) = -(x - mu)^2 / (2 sigma^2) + 2 log cosh x. For
sigma^2 <= 1/2 there is one local maximum; for sigma^2 > 1/2 and small |mu| there are two, one on
each side of 0, and the mode is the higher one; for mu = 0 they tie and either is correct. The
density is 0 at both bounds, so the mode is strictly inside.

Expected values come from conformance/oracles/tanh_normal_mode.py (scipy, float64, dense grid and
bounded Brent), evaluated at the parameters exactly as the implementation received them (float32
inputs are widened exactly).

Tolerances (r = (high - low) / 2):
- y: |mode - expected| <= 1e-9 r for float64 inputs (tight enough that a float32 solve fails)
  and <= 1e-4 r for float32 inputs;
- ties: the other local maximum is accepted when its log-density is within 1e-10 (float64) or
  1e-5 (float32) nats of the global one;
- log-density: log f(mode) >= the maximum over a dense grid - 1e-9 (float64) or 1e-6 (float32)
  nats - the log-density lost at the worst of the dtype's values within 4 ulps of the exact mode;
- always low < mode < high; where the exact mode is closer to a bound than the dtype resolves,
  the representable value next to the bound is right (it is within the y tolerance).
On the seed example (loc 0.2, scale 1) tanh(loc) is off by 0.78 and the bound 1.0 by 0.027.
"""

from __future__ import annotations

import functools

import numpy as np
import pytest
import torch

from conformance import device
from conformance._assertions import message
from conformance.oracles import tanh_normal_mode as oracle

ISSUE_2186 = "https://github.com/pytorch/rl/issues/2186"
GET_MODE_2198 = ("https://github.com/pytorch/rl/blob/00b7c2e8f38730747f9484e7fa3b763e509cc914/"
                 "torchrl/modules/distributions/continuous.py#L499-L528")

DTYPES = [torch.float64, torch.float32]
# half precision: 4 ulps of the dtype just below 1 (the specs of half precision avoid ties)
TOL_Y = {torch.float64: 1e-9, torch.float32: 1e-4, torch.float16: 4 * 2.0**-11,
         torch.bfloat16: 4 * 2.0**-8}
TIE_NATS = {torch.float64: 1e-10, torch.float32: 1e-5, torch.float16: 0.0, torch.bfloat16: 0.0}
LOG_DENSITY_NATS = {torch.float64: 1e-9, torch.float32: 1e-6}


def _dtype_id(dtype):
    return str(dtype).removeprefix("torch.")


dtypes = pytest.mark.parametrize("dtype", DTYPES, ids=_dtype_id)


# ---------------------------------------------------------------- calling the implementation


GLOBAL_SEED = 0


def call_mode(area, loc, scale, *, dtype, low=-1.0, high=1.0, upscale=5.0, tanh_loc=False,
              global_seed: int | None = GLOBAL_SEED):
    """make() + mode(); returns (loc, scale, mode) as float64 numpy, exactly as used.

    ``low``/``high``: numbers, or tensors (per-dimension bounds, handed over as they are).
    The mode must have the broadcast shape of loc and scale (loc's own, when scale broadcasts
    to it) and loc's dtype. The global torch RNG is seeded first so that a stochastic
    implementation (TorchRL's get_mode() samples) fails reproducibly; determinism itself is
    specified separately.
    """
    if global_seed is not None:
        torch.manual_seed(global_seed)
    loc_t = torch.as_tensor(np.asarray(loc, dtype=np.float64)).to(dtype)
    scale_t = torch.as_tensor(np.asarray(scale, dtype=np.float64)).to(dtype)
    shape = torch.broadcast_shapes(loc_t.shape, scale_t.shape)
    params = {"low": _bound_id(low), "high": _bound_id(high), "dtype": _dtype_id(dtype),
              "shape": tuple(loc_t.shape)}
    if scale_t.shape != loc_t.shape:
        params["scale shape"] = tuple(scale_t.shape)
    if tanh_loc:
        params.update(tanh_loc=True, upscale=upscale)
    dist = area.make(device.put(loc_t), device.put(scale_t), low=device.put(low),
                     high=device.put(high), upscale=upscale, tanh_loc=tanh_loc)
    out = area.mode(dist)
    if not isinstance(out, torch.Tensor) or out.shape != shape or out.dtype != dtype:
        got = (f"{type(out).__name__} of shape {tuple(out.shape)} and dtype {out.dtype}"
               if isinstance(out, torch.Tensor) else repr(out))
        raise AssertionError(message(
            "mode() must return a tensor of the shape and dtype of loc", params=params,
            expected=f"tensor of shape {tuple(shape)} and dtype {dtype}", actual=got))
    out = device.host(out, "mode()")
    as64 = functools.partial(np.asarray, dtype=np.float64)
    # .double() first: numpy has no bfloat16 (widening is exact)
    return (as64(loc_t.double().numpy()), as64(scale_t.double().numpy()),
            as64(out.detach().double().numpy()))


def _bound_id(bound):
    return bound.tolist() if isinstance(bound, torch.Tensor) else bound


@functools.lru_cache(maxsize=64)
def _cached_modes(mu_bytes, sigma_bytes, shape, low, high):
    mu = np.frombuffer(mu_bytes, dtype=np.float64).reshape(shape)
    sigma = np.frombuffer(sigma_bytes, dtype=np.float64).reshape(shape)
    return oracle.modes(mu, sigma, low, high)


def expected_modes(mu, sigma, low, high) -> oracle.Modes:
    mu, sigma = np.broadcast_arrays(np.asarray(mu, np.float64), np.asarray(sigma, np.float64))
    return _cached_modes(np.ascontiguousarray(mu).tobytes(), np.ascontiguousarray(sigma).tobytes(),
                         mu.shape, float(low), float(high))


def check_modes(actual, mu, sigma, *, dtype, low=-1.0, high=1.0, what="mode", params=None,
                raw_loc=None, link=ISSUE_2186):
    """Every element is strictly inside (low, high) and within the y tolerance of the oracle's
    mode (or of the other local maximum when the two tie); otherwise one message for the batch."""
    __tracebackhide__ = True
    a = np.asarray(actual, dtype=np.float64)
    mu, sigma = np.broadcast_arrays(np.asarray(mu, np.float64), np.asarray(sigma, np.float64))
    exp = expected_modes(mu, sigma, low, high)
    r = (high - low) / 2.0
    tol = TOL_Y[dtype] * r
    near = np.abs(a - exp.y) <= tol
    tie = (exp.n_maxima == 2) & (exp.g - exp.g_other <= TIE_NATS[dtype])
    near_other = tie & (np.abs(a - exp.y_other) <= tol)
    inside = (a > low) & (a < high)
    bad = ~((near | near_other) & inside)
    if not bad.any():
        return exp
    idx = tuple(int(i) for i in np.argwhere(bad)[0])
    cause = oracle.diagnose(a, exp, mu, low=low, high=high, tol=tol,
                            float64_inputs=dtype == torch.float64, failing=bad,
                            sigma=sigma if raw_loc is not None else None, raw_loc=raw_loc)
    expected = float(exp.y[idx])
    if tie[idx]:
        expected = f"{exp.y[idx]:.10g} or {exp.y_other[idx]:.10g} (the two local maxima tie)"
    first = {"mu": float(mu[idx]), "scale": float(sigma[idx])}
    if raw_loc is not None:
        first["loc"] = float(np.broadcast_to(raw_loc, a.shape)[idx])
    n_out = int((~inside).sum())
    detail = (f"{int(bad.sum())} of {a.size} elements wrong, max |error| "
              f"{np.nanmax(np.abs(a - exp.y)[bad]):.3g} (tolerance {tol:.3g}); first at index "
              f"{idx}")
    if n_out:
        detail += f"; {n_out} on or outside [low, high]"
    raise AssertionError(message(
        f"{what} is not the argmax of the TanhNormal density", params={**(params or {}), **first},
        expected=expected, actual=float(a[idx]), detail=detail, cause=cause, link=link))


def seeded_parameters(seed, n, *, loc_std=1.5, scale_range=(0.05, 2.0)):
    """loc = loc_std * N(0, 1), scale = U(scale_range): the batch of the upstream probe that found
    the bug (a wide spread of locations, from near-degenerate to wide scales)."""
    rng = np.random.default_rng(seed)
    return loc_std * rng.standard_normal(n), rng.uniform(*scale_range, n)


ROUNDING_ULPS = 4


def rounding_loss(exp, mu, sigma, low, high, dtype):
    """Log-density lost by the worst representable value within ROUNDING_ULPS of the exact mode
    (inside the bounds): what an answer rounded in the dtype, as c + r * tanh(x) is, may lose."""
    np_type = np.float32 if dtype == torch.float32 else np.float64
    nearest = exp.y.astype(np_type)
    candidates = [nearest]
    for direction in (np_type(-np.inf), np_type(np.inf)):
        step = nearest
        for _ in range(ROUNDING_ULPS):
            step = np.nextafter(step, direction)
            candidates.append(step)
    best = oracle.log_density_at_x(exp.x, mu, sigma, low, high)
    worst = np.full(exp.y.shape, np.inf)
    for cand in candidates:
        dens = oracle.log_density(cand.astype(np.float64), mu, sigma, low, high)
        worst = np.where(np.isfinite(dens), np.minimum(worst, dens), worst)
    return np.maximum(best - worst, 0.0)


# ---------------------------------------------------------------- the seed example


@dtypes
def test_seed_example(tanh_normal_mode, dtype):
    """pytorch/rl#2186: loc 0.2, scale 1 on [-1, 1]. The density peaks at y = 0.97302 (a second,
    lower peak sits at -0.9303); tanh(loc) = 0.1974 is not the mode, and neither is the bound 1.0
    (density 0) that get_mode() returns."""
    exp = expected_modes([0.2], [1.0], -1.0, 1.0)
    assert abs(exp.y[0] - 0.97302) < 5e-6 and exp.n_maxima[0] == 2  # the oracle agrees
    loc, scale, got = call_mode(tanh_normal_mode, [0.2], [1.0], dtype=dtype)
    check_modes(got, loc, scale, dtype=dtype, params={"dtype": _dtype_id(dtype)},
                link=f"{ISSUE_2186} and {GET_MODE_2198}")


# ---------------------------------------------------------------- regimes

UNIMODAL = [(0.0, 0.5), (0.5, 0.3), (-1.2, 0.7), (2.0, 0.1), (0.3, 0.05), (-0.25, 0.69)]
BIMODAL = [(0.2, 1.0), (-0.05, 0.8), (0.05, 1.5), (-0.5, 2.0), (1.0, 2.0), (-2.5, 1.8)]


@dtypes
def test_unimodal_regime(tanh_normal_mode, dtype):
    """sigma^2 <= 1/2: g is strictly concave, one local maximum."""
    mu, sigma = np.array(UNIMODAL).T
    assert np.all(expected_modes(mu, sigma, -1, 1).n_maxima == 1)
    loc, scale, got = call_mode(tanh_normal_mode, mu, sigma, dtype=dtype)
    check_modes(got, loc, scale, dtype=dtype, params={"dtype": _dtype_id(dtype)})


# (mu, sigma) around the cusp sigma^2 = 1/2, mu = 0, where the two local maxima are born: the
# log-density is flattest there (a quartic top), so a solver's starting point matters most
S = 0.5 ** 0.5
CUSP = [(1e-4, S), (-5e-4, S), (1e-3, S * (1 - 1e-3)), (-2e-4, S * (1 + 1e-3)),
        (3e-4, 0.49 ** 0.5), (-1e-3, 0.51 ** 0.5), (1e-5, 0.52 ** 0.5), (5e-4, 0.5 ** 0.5 * 1.02)]


@dtypes
def test_near_the_cusp(tanh_normal_mode, dtype):
    """Eight elements (a policy's small batch, whose mode some implementations compute on a
    separate path) within 2 % of sigma^2 = 1/2 and |mu| <= 1e-3: the mode still within the
    tolerance of the oracle's, or of the other maximum where the two tie."""
    mu, sigma = np.array(CUSP).T
    loc, scale, got = call_mode(tanh_normal_mode, mu, sigma, dtype=dtype)
    check_modes(got, loc, scale, dtype=dtype, params={"dtype": _dtype_id(dtype), "near": "cusp"})


def cusp_parameters(seed, n):
    """n seeded (mu, sigma) next to the cusp: half with |mu| = 10^U(-9, -3.5) and
    sigma^2 = 1/2 (1 + N(0, 3e-4)) (a nearly triple root), half with |mu| = 10^U(-3.5, -2) and
    sigma^2 = 1/2 (1 + U(-0.03, 0.03)); random signs."""
    rng = np.random.default_rng(seed)
    half = n // 2
    mu = np.concatenate([10 ** rng.uniform(-9, -3.5, half), 10 ** rng.uniform(-3.5, -2, n - half)])
    eps = np.concatenate([rng.normal(0, 3e-4, half), rng.uniform(-0.03, 0.03, n - half)])
    return mu * rng.choice([-1.0, 1.0], n), np.sqrt(0.5 * (1 + eps))


@dtypes
@pytest.mark.parametrize("batch", [16, 128], ids=lambda b: f"batch={b}")
def test_near_the_cusp_seeded(tanh_normal_mode, dtype, batch):
    """128 seeded parameter sets next to the cusp (see ``cusp_parameters``), asked for in
    batches of 16 (a few policies' actions, the size some implementations solve on a separate
    path) or in one batch of 128: every mode within the tolerance of the oracle's, or of the
    other maximum where the two tie."""
    mu, sigma = cusp_parameters(131, 128)
    for start in range(0, 128, batch):
        part = slice(start, start + batch)
        loc, scale, got = call_mode(tanh_normal_mode, mu[part], sigma[part], dtype=dtype)
        check_modes(got, loc, scale, dtype=dtype,
                    params={"dtype": _dtype_id(dtype), "near": "cusp", "seed": 131,
                            "batch": batch, "first element": start})


@dtypes
def test_bimodal_regime(tanh_normal_mode, dtype):
    """sigma^2 > 1/2 and small |mu|: two local maxima with different heights; the higher one
    (on the side of mu) is the mode."""
    mu, sigma = np.array(BIMODAL).T
    exp = expected_modes(mu, sigma, -1, 1)
    assert np.all(exp.n_maxima == 2) and np.all(exp.g - exp.g_other > 1e-3)
    loc, scale, got = call_mode(tanh_normal_mode, mu, sigma, dtype=dtype)
    check_modes(got, loc, scale, dtype=dtype, params={"dtype": _dtype_id(dtype)},
                link=GET_MODE_2198)


@dtypes
@pytest.mark.parametrize("scale", [0.8, 1.0, 2.0])
def test_tie_at_zero_loc(tanh_normal_mode, dtype, scale):
    """loc = 0 and scale^2 > 1/2: the two maxima +-y* tie and either is the mode; y = 0 is the
    local minimum between them, not a mode."""
    exp = expected_modes([0.0], [scale], -1, 1)
    assert exp.n_maxima[0] == 2 and abs(exp.y[0] + exp.y_other[0]) < 1e-9
    loc, scale_, got = call_mode(tanh_normal_mode, [0.0], [scale], dtype=dtype)
    check_modes(got, loc, scale_, dtype=dtype, params={"dtype": _dtype_id(dtype)})


# ---------------------------------------------------------------- extremes


@dtypes
@pytest.mark.parametrize("bounds", [(-1.0, 1.0), (0.0, 2.0)], ids=lambda b: f"[{b[0]:g},{b[1]:g}]")
def test_large_abs_loc_mode_strictly_inside(tanh_normal_mode, dtype, bounds):
    """|loc| up to 40: the mode is within 1e-8 (or much less) of a bound, yet strictly inside;
    where the dtype cannot resolve it, the representable value next to the bound is right."""
    mu = np.array([5.0, -5.0, 10.0, -10.0, 20.0, -20.0, 40.0, -40.0] * 2)
    sigma = np.repeat([0.1, 1.0], 8)
    low, high = bounds
    loc, scale, got = call_mode(tanh_normal_mode, mu, sigma, dtype=dtype, low=low, high=high)
    check_modes(got, loc, scale, dtype=dtype, low=low, high=high,
                params={"low": low, "high": high, "dtype": _dtype_id(dtype)}, link=GET_MODE_2198)


@dtypes
@pytest.mark.parametrize("scale", [1e-3, 1e-2])
def test_tiny_scale_mode_approaches_tanh_loc(tanh_normal_mode, dtype, scale):
    """As scale -> 0 the mode tends to c + r tanh(mu): |x* - mu| <= 2 scale^2, hence
    |mode - tanh(mu)| <= 2 scale^2 on [-1, 1] (and it is still the exact mode)."""
    mu = np.array([-2.0, -0.3, 0.0, 0.4, 1.5])
    loc, scale_, got = call_mode(tanh_normal_mode, mu, np.full_like(mu, scale), dtype=dtype)
    check_modes(got, loc, scale_, dtype=dtype, params={"dtype": _dtype_id(dtype)})
    gap = np.abs(got - np.tanh(loc))
    limit = 2 * scale_**2 + TOL_Y[dtype]
    if not np.all(gap <= limit):
        i = int(np.argmax(gap - limit))
        raise AssertionError(message(
            "mode is farther from tanh(loc) than 2 scale^2 for a tiny scale",
            params={"loc": float(loc[i]), "scale": scale}, expected=f"within {limit[i]:.3g}",
            actual=float(gap[i])))


@dtypes
@pytest.mark.parametrize("bounds", [(0.0, 2.0), (-3.0, 7.0)], ids=lambda b: f"[{b[0]:g},{b[1]:g}]")
def test_asymmetric_bounds(tanh_normal_mode, dtype, bounds):
    """Non-symmetric bounds map the same x* through c + r tanh(x*), c != 0, r != 1."""
    mu, sigma = np.array(UNIMODAL[:3] + BIMODAL[:3] + [(0.0, 1.0)]).T
    low, high = bounds
    loc, scale, got = call_mode(tanh_normal_mode, mu, sigma, dtype=dtype, low=low, high=high)
    check_modes(got, loc, scale, dtype=dtype, low=low, high=high,
                params={"low": low, "high": high, "dtype": _dtype_id(dtype)})


@dtypes
def test_largest_finite_locations(tanh_normal_mode, dtype):
    """|loc| up to the dtype's largest finite value (a diverged policy network): the mode is
    within far less than the dtype resolves of the bound on loc's side, so the representable
    value next to that bound is the answer (anything within the y tolerance and strictly inside
    passes), never NaN and never the bound itself. The two largest alone, in a batch of 8 and
    in one of 24."""
    big = float(torch.finfo(dtype).max)
    mu = np.array([big, -big, 1e300 if dtype == torch.float64 else 1e37, -1e38, 1e6, -1e6,
                   big / 3, -big / 3])
    sigma = np.array([0.01, 0.01, 1.0, 2.0, 0.5, 0.05, 1.0, 0.2])
    low, high = -3.0, 7.0
    tol = TOL_Y[dtype] * (high - low) / 2
    for batch in (2, 8, 24):
        loc, scale, got = call_mode(tanh_normal_mode, np.resize(mu, batch),
                                    np.resize(sigma, batch), dtype=dtype, low=low, high=high)
        near = np.where(loc > 0, high, low)
        bad = ~((got > low) & (got < high) & (np.abs(got - near) <= tol))
        if bad.any():
            i = int(np.argmax(bad))
            raise AssertionError(message(
                "mode of a distribution with a huge |loc| is not next to the bound on loc's side",
                params={"loc": float(loc[i]), "scale": float(scale[i]), "low": low, "high": high,
                        "dtype": _dtype_id(dtype), "batch": batch},
                expected=f"strictly inside, within {tol:.3g} of {near[i]}",
                actual=float(got[i]),
                detail=f"{int(bad.sum())} of {bad.size} elements; all: {got.tolist()}"))


# ---------------------------------------------------------------- bounds given as tensors
# TorchRL's TanhNormal takes low/high as numbers or tensors; a ProbabilisticActor built from a
# bounded action spec passes the spec's per-dimension bounds (float32 tensors of shape [D]).

ACTION_LOW = [-0.3, 0.1]
ACTION_HIGH = [0.7, 2.9]


@dtypes
@pytest.mark.parametrize("high_given_as", ["tensor", "number"])
@pytest.mark.parametrize("rows", [4, 30], ids=lambda r: f"rows={r}")
def test_per_dimension_bounds(tanh_normal_mode, dtype, high_given_as, rows):
    """Bounds as float32 tensors of shape [2] (an action spec's), loc of shape [4, 2] (one step
    of a few environments) or [30, 2] in
    float32 or float64, or low a tensor and high the number 3 (exact in every dtype: TorchRL
    holds a number bound as a float32 tensor): every column is the mode of
    its own bounds (the oracle's, at the float32 bounds widened exactly), strictly inside them,
    with |loc| = 30 in some rows (mode next to the bound)."""
    low = torch.tensor(ACTION_LOW, dtype=torch.float32)
    high = (torch.tensor(ACTION_HIGH, dtype=torch.float32) if high_given_as == "tensor"
            else 3.0)
    mu, sigma = seeded_parameters(41, 2 * rows)
    mu, sigma = mu.reshape(rows, 2), sigma.reshape(rows, 2)
    mu[:2], sigma[:2] = [[30.0] * 2, [-30.0] * 2], 0.05
    loc, scale, got = call_mode(tanh_normal_mode, mu, sigma, dtype=dtype, low=low, high=high)
    lows = low.double().numpy()
    highs = (high.double().numpy() if isinstance(high, torch.Tensor)
             else np.full(2, float(np.float64(high))))
    for j in range(2):
        check_modes(got[:, j], loc[:, j], scale[:, j], dtype=dtype, low=float(lows[j]),
                    high=float(highs[j]),
                    params={"dtype": _dtype_id(dtype), "low": ACTION_LOW,
                            "high": ACTION_HIGH if high_given_as == "tensor" else high,
                            "rows": rows, "column": j, "seed": 41})


# ---------------------------------------------------------------- batches and dtypes


@pytest.mark.parametrize(("loc_shape", "scale_shape"), [((4, 3), (3,)), ((40, 3), (3,)),
                                                        ((4, 3), ()), ((3,), (4, 3))],
                         ids=lambda s: "x".join(map(str, s)) or "scalar")
def test_scale_broadcast_over_loc(tanh_normal_mode, loc_shape, scale_shape):
    """A scale of another shape than loc (a state-independent scale of shape [D], one number,
    or a batch of scales for one loc): the mode has the broadcast shape, each element the mode
    of its own (loc, scale) pair."""
    rng = np.random.default_rng(53)
    loc_in = 1.5 * rng.standard_normal(loc_shape)
    scale_in = rng.uniform(0.05, 2.0, scale_shape)
    loc, scale, got = call_mode(tanh_normal_mode, loc_in, scale_in, dtype=torch.float64)
    mu, sigma = np.broadcast_arrays(loc, scale)
    check_modes(got, mu, sigma, dtype=torch.float64,
                params={"loc shape": loc_shape, "scale shape": scale_shape, "seed": 53})


def test_integer_parameters(tanh_normal_mode):
    """Integer loc and scale (TorchRL's TanhNormal accepts them): the mode is a real number, in
    torch's default dtype as for any function of integer tensors that returns reals
    (torch.tanh of an integer tensor is float32), and it is the mode of those parameters."""
    loc = torch.tensor([0, 2, -3, 1, 0])
    scale = torch.tensor([1, 1, 2, 3, 1])
    params = {"loc": loc.tolist(), "scale": scale.tolist(), "dtype": "int64"}
    torch.manual_seed(GLOBAL_SEED)
    out = tanh_normal_mode.mode(tanh_normal_mode.make(device.put(loc), device.put(scale)))
    default = torch.get_default_dtype()
    if not isinstance(out, torch.Tensor) or out.shape != loc.shape or out.dtype != default:
        got = (f"{type(out).__name__} of shape {tuple(out.shape)} and dtype {out.dtype}"
               if isinstance(out, torch.Tensor) else repr(out))
        raise AssertionError(message(
            "mode() of integer parameters must be a tensor of loc's shape in the default dtype",
            params=params, expected=f"tensor of shape {tuple(loc.shape)} and dtype {default}",
            actual=got))
    got = device.host(out, "mode()").double().numpy()
    check_modes(got, loc.double().numpy(), scale.double().numpy(), dtype=default, params=params)


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16], ids=_dtype_id)
@pytest.mark.parametrize("copies", [1, 3], ids=lambda c: f"batch={12 * c}")
def test_half_precision(tanh_normal_mode, dtype, copies):
    """float16 and bfloat16 parameters (a half-precision policy): the mode in loc's dtype,
    within 4 of its ulps below 1 (r = 1) of the exact mode at the parameters as given, and
    strictly inside: where the mode is closer to a bound than the dtype resolves, the
    representable value next to the bound, never the bound (a value computed in float64 and
    rounded to half precision becomes the bound). Four of the twelve sit next to the cusp
    (scale 0.70703125, exact in both dtypes: sigma^2 = 0.49989), where a solve in half
    precision is off by up to 0.03 r."""
    mu = np.tile([0.2, -1.2, 2.0, 30.0, -30.0, 0.5, -0.05, 1.0, -1e-6, 3e-7, 1e-4, -2e-4],
                 copies)
    sigma = np.tile([1.0, 0.7, 0.1, 0.1, 0.1, 0.3, 0.8, 2.0] + [0.70703125] * 4, copies)
    loc, scale, got = call_mode(tanh_normal_mode, mu, sigma, dtype=dtype)
    check_modes(got, loc, scale, dtype=dtype,
                params={"dtype": _dtype_id(dtype), "batch": 12 * copies})


@pytest.mark.parametrize("shape", [(7,), (5, 3), (6, 1)], ids=lambda s: "x".join(map(str, s)))
def test_batch_shapes(tanh_normal_mode, shape):
    """Any batch shape: the mode has loc's shape and every element is its own exact mode,
    whatever the other elements are."""
    n = int(np.prod(shape))
    mu, sigma = seeded_parameters(31, n)
    loc, scale, got = call_mode(tanh_normal_mode, mu.reshape(shape), sigma.reshape(shape),
                                dtype=torch.float64)
    check_modes(got, loc, scale, dtype=torch.float64, params={"shape": shape, "seed": 31})


@dtypes
def test_random_batch_matches_scipy(tanh_normal_mode, dtype):
    """2,000 seeded parameter sets, loc = 1.5 N(0, 1), scale = U(0.05, 2.0), shape [2000, 1]
    (about 44 % of them are bimodal, so the mode is not the mean's image)."""
    mu, sigma = seeded_parameters(2024, 2000)
    loc, scale, got = call_mode(tanh_normal_mode, mu[:, None], sigma[:, None], dtype=dtype)
    check_modes(got, loc, scale, dtype=dtype,
                params={"n": 2000, "seed": 2024, "dtype": _dtype_id(dtype)}, link=GET_MODE_2198)


@dtypes
def test_log_density_at_mode_beats_dense_grid(tanh_normal_mode, dtype):
    """The density at the returned mode is at least the density at every point of a dense grid
    (20,001 points uniform in y plus 2,001 points uniform in x over [mu - 2 s^2, mu + 2 s^2]),
    within LOG_DENSITY_NATS plus the loss at the worst value within ROUNDING_ULPS of the mode."""
    mu, sigma = seeded_parameters(7, 120)
    low, high = -3.0, 7.0
    loc, scale, got = call_mode(tanh_normal_mode, mu, sigma, dtype=dtype, low=low, high=high)
    exp = expected_modes(loc, scale, low, high)
    r = (high - low) / 2
    y_grid = np.linspace(low, high, 20003)[1:-1]
    x_grid = loc[:, None] + 2 * scale[:, None] ** 2 * np.linspace(-1, 1, 2001)[None, :]
    grid_max = np.maximum(
        np.max(oracle.log_density(y_grid[None, :], loc[:, None], scale[:, None], low, high), 1),
        np.max(oracle.log_density_at_x(x_grid, loc[:, None], scale[:, None], low, high), 1))
    at_mode = oracle.log_density(got, loc, scale, low, high)
    slack = LOG_DENSITY_NATS[dtype] + rounding_loss(exp, loc, scale, low, high, dtype)
    bad = ~(at_mode >= grid_max - slack)
    if bad.any():
        i = int(np.argmax(bad))
        cause = oracle.diagnose(got, exp, loc, low=low, high=high, tol=TOL_Y[dtype] * r,
                                float64_inputs=dtype == torch.float64, failing=bad)
        raise AssertionError(message(
            "log-density at the returned mode is below the best point of a dense grid",
            params={"mu": float(loc[i]), "scale": float(scale[i]), "low": low, "high": high,
                    "dtype": _dtype_id(dtype), "seed": 7},
            expected=f">= {grid_max[i]:.10g} - {slack[i]:.3g} (mode {exp.y[i]:.10g})",
            actual=f"{at_mode[i]:.10g} at y = {got[i]:.10g}",
            detail=f"{int(bad.sum())} of {bad.size} parameter sets", cause=cause,
            link=GET_MODE_2198))


# ---------------------------------------------------------------- determinism


def test_deterministic_whatever_the_global_rng(tanh_normal_mode):
    """The same distribution gives bitwise the same mode under different global RNG states."""
    mu, sigma = seeded_parameters(11, 64)
    answers = []
    for seed in (0, 1, 12345):
        answers.append(call_mode(tanh_normal_mode, mu, sigma, dtype=torch.float32,
                                 global_seed=seed)[2])
    diffs = [float(np.max(np.abs(a - answers[0]))) for a in answers[1:]]
    if any(d != 0 for d in diffs):
        raise AssertionError(message(
            "mode depends on the global RNG state", params={"global seeds": (0, 1, 12345),
                                                            "n": 64, "dtype": "float32"},
            expected="identical answers", actual=f"max differences {diffs}",
            cause="the mode is estimated from random samples (get_mode() starts from the mean "
                  "of 1000 samples)", link=GET_MODE_2198))


def test_mode_does_not_consume_global_rng(tanh_normal_mode):
    """Computing a mode draws nothing from the global RNG: a seeded training run stays
    reproducible whether or not it evaluates modes."""
    mu, sigma = seeded_parameters(12, 16)
    dist = tanh_normal_mode.make(device.put(torch.as_tensor(mu, dtype=torch.float32)),
                                 device.put(torch.as_tensor(sigma, dtype=torch.float32)))
    torch.manual_seed(0)
    before = device.rng_state()
    tanh_normal_mode.mode(dist)
    after = device.rng_state()
    if not all(torch.equal(b, a) for b, a in zip(before, after, strict=True)):
        raise AssertionError(message(
            "mode() advanced the global torch RNG",
            params={"n": 16},
            expected="unchanged RNG state", actual="a different RNG state",
            cause="the mode is estimated from random samples (get_mode() draws 1000 samples)",
            link=GET_MODE_2198))


# ---------------------------------------------------------------- which mu


@dtypes
@pytest.mark.parametrize("upscale", [5.0, 2.0])
def test_tanh_loc_mode_uses_rescaled_location(tanh_normal_mode, dtype, upscale):
    """With tanh_loc=True (default bounds) the Normal's location is
    mu = upscale * tanh(loc / upscale), and the mode is that distribution's mode."""
    loc = np.array([0.2, 3.0, 8.0, -12.0, 0.0])
    sigma = np.array([1.0, 0.5, 0.3, 1.2, 0.9])
    loc_used, scale, got = call_mode(tanh_normal_mode, loc, sigma, dtype=dtype,
                                     upscale=upscale, tanh_loc=True)
    mu = upscale * np.tanh(loc_used / upscale)
    check_modes(got, mu, scale, dtype=dtype, raw_loc=loc_used,
                params={"tanh_loc": True, "upscale": upscale, "dtype": _dtype_id(dtype)})
