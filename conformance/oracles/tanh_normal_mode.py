"""The mode of a tanh-squashed Normal, found by scipy in float64: dense grid + bounded refinement.

Y = c + r * tanh(X), X ~ Normal(mu, sigma^2), c = (high + low) / 2, r = (high - low) / 2. With
x = atanh((y - c) / r) the log-density of Y is, up to a constant,

    g(x) = -(x - mu)^2 / (2 sigma^2) + 2 log cosh x        (the log(1 - tanh^2) Jacobian)

so the mode of Y is c + r * tanh(argmax g). Every stationary point of g lies in
[mu - 2 sigma^2, mu + 2 sigma^2] (it satisfies x - mu = 2 sigma^2 tanh x), and g' > 0 at the left
end of that interval and g' < 0 at its right end, so the maximiser is inside it.

Per parameter set: g is evaluated on ``GRID_POINTS`` equally spaced points of that interval
(vectorised numpy); the best grid local maximum on each side of 0 (the two local maxima of g,
when there are two, have opposite signs) is refined with
``scipy.optimize.minimize_scalar(method="bounded")`` between its two grid neighbours; the best
refined point wins. The refinement minimises ``g(x0) - g(x0 + u)`` with the difference written
without cancellation (``log cosh(x0 + u) - log cosh(x0) = log1p(2 sinh^2(u/2) + tanh(x0) sinh u)``),
so that its rounding noise shrinks with the offset u; a second pass re-centred on the first
result then finds the maximiser to ~1e-12 in x (measured against 50-digit mpmath in
tests/oracles/test_oracle_tanh_normal_mode.py) instead of the sqrt(eps) ~ 1e-8 of refining g itself.

Nothing here solves the stationarity equation: the oracle shares no method with the reference
implementation (impls/tanh_normal_mode.py, a Newton solve of that equation).

``diagnose`` names the known-wrong answers (tanh(loc), the boundary, the other local maximum,
a float32 solve) that reproduce an observed mode; specs use it only for the "likely cause" line.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy.optimize import minimize_scalar

GRID_POINTS = 4001
_CHUNK = 512  # rows of the (batch, grid) array evaluated at once: ~16 MB of float64
_HALF_LOG_2PI = 0.5 * math.log(2.0 * math.pi)


@dataclass(frozen=True)
class Modes:
    """The oracle's answer for a batch (all float64 arrays of the broadcast input shape).

    y, x, g: the global mode in y, its pre-image x and g(x).
    n_maxima: number of local maxima of the density (1 or 2).
    y_other, x_other, g_other: the other local maximum when n_maxima == 2, else NaN. When
        g - g_other is (close to) 0, e.g. mu = 0 with sigma^2 > 1/2, both are modes.
    """

    y: np.ndarray
    x: np.ndarray
    g: np.ndarray
    n_maxima: np.ndarray
    y_other: np.ndarray
    x_other: np.ndarray
    g_other: np.ndarray


def _log_cosh(x):
    ax = np.abs(x)
    return ax + np.log1p(np.exp(-2.0 * ax)) - math.log(2.0)


def g(x, mu, sigma):
    """Log-density of Y in pre-image coordinates, up to an additive constant."""
    x, mu, sigma = (np.asarray(v, dtype=np.float64) for v in (x, mu, sigma))
    return -((x - mu) ** 2) / (2.0 * sigma**2) + 2.0 * _log_cosh(x)


def _bounds(low, high):
    low, high = np.float64(low), np.float64(high)
    if not high > low:
        raise ValueError(f"need low < high, got low={low}, high={high}")
    return low, high, (high + low) / 2.0, (high - low) / 2.0


def log_density(y, mu, sigma, low=-1.0, high=1.0):
    """log f_Y(y) in float64; -inf outside the open interval (low, high)."""
    low, high, _, r = _bounds(low, high)
    y, mu, sigma = np.broadcast_arrays(*(np.asarray(v, dtype=np.float64) for v in (y, mu, sigma)))
    inside = (y > low) & (y < high)
    with np.errstate(divide="ignore", invalid="ignore"):
        # 1 - t and 1 + t from the distances to the bounds: exact where t is close to +-1
        below, above = (y - low) / r, (high - y) / r
        x = 0.5 * (np.log(below) - np.log(above))
        z = (x - mu) / sigma
        value = -0.5 * z * z - np.log(sigma) - _HALF_LOG_2PI - np.log(r) - np.log(below * above)
    return np.where(inside, value, -np.inf)


def log_density_at_x(x, mu, sigma, low=-1.0, high=1.0):
    """log f_Y at y = c + r tanh(x), computed from x (exact even where tanh(x) rounds to +-1)."""
    _, _, _, r = _bounds(low, high)
    x, mu, sigma = (np.asarray(v, dtype=np.float64) for v in (x, mu, sigma))
    z = (x - mu) / sigma
    return -0.5 * z * z - np.log(sigma) - _HALF_LOG_2PI - np.log(r) + 2.0 * _log_cosh(x)


def _grid_peaks(mu, sigma):
    """Grid, g on it and its local maxima (bool mask), for 1-D arrays mu, sigma."""
    s = sigma**2
    steps = np.linspace(-1.0, 1.0, GRID_POINTS)
    xs = mu[:, None] + 2.0 * s[:, None] * steps[None, :]
    gs = g(xs, mu[:, None], sigma[:, None])
    peaks = np.zeros_like(gs, dtype=bool)
    peaks[:, 1:-1] = (gs[:, 1:-1] >= gs[:, :-2]) & (gs[:, 1:-1] > gs[:, 2:])
    # never the case for a true maximiser (see the module docstring); kept so none is lost
    peaks[:, 0] = gs[:, 0] > gs[:, 1]
    peaks[:, -1] = gs[:, -1] >= gs[:, -2]
    return xs, gs, peaks


def _brent(x_left, x0, x_right, mu, sigma):
    """argmax of g on [x_left, x_right] by bounded Brent on the offset u from x0."""
    s2 = 2.0 * sigma * sigma
    d0 = x0 - mu
    t0 = math.tanh(x0)

    def loss(u):  # g(x0) - g(x0 + u), without cancellation
        sh = math.sinh(0.5 * u)
        gain = 2.0 * math.log1p(2.0 * sh * sh + t0 * math.sinh(u))
        return (u * u + 2.0 * u * d0) / s2 - gain

    res = minimize_scalar(loss, bounds=(x_left - x0, x_right - x0), method="bounded",
                          options={"xatol": 1e-15, "maxiter": 500})
    return x0 + float(res.x)


def _refine(x_left, x0, x_right, mu, sigma):
    """Two bounded refinements: between the grid neighbours, then re-centred on the first result.

    The rounding noise of the loss grows with |u|, so the second pass (u ~ 1e-9 instead of a
    grid step) removes what is left of it; its result is kept only if it is not at the edge of
    its small bracket (which would mean the first pass was off by more than that bracket).
    """
    x1 = _brent(x_left, x0, x_right, mu, sigma)
    w = 1e-6 * max(1.0, abs(x1))
    lo, hi = max(x_left, x1 - w), min(x_right, x1 + w)
    x2 = _brent(lo, x1, hi, mu, sigma)
    inside = (x2 - lo > 0.01 * w or lo == x_left) and (hi - x2 > 0.01 * w or hi == x_right)
    return x2 if inside else x1


def _row_maxima(xs, gs, peaks, mu, sigma):
    """Refined local maxima of one row, best first.

    The two local maxima of g (when there are two) lie on opposite sides of 0 (the left one below
    -acosh(sqrt(2 sigma^2)), the right one above +acosh(...)), so the best grid peak on each side
    is refined; extra grid peaks on one side can only be rounding noise of a very flat g.
    """
    found = []
    for side in (xs <= 0.0, xs > 0.0):
        cols = np.flatnonzero(peaks & side)
        if cols.size == 0:
            continue
        j = int(cols[np.argmax(gs[cols])])
        lo_x, hi_x = xs[max(j - 1, 0)], xs[min(j + 1, xs.size - 1)]
        x_star = _refine(lo_x, xs[j], hi_x, mu, sigma)
        found.append((float(g(x_star, mu, sigma)), x_star))
    found.sort(reverse=True)
    if len(found) == 2 and abs(found[0][1] - found[1][1]) <= 1e-9 * max(1.0, abs(found[0][1])):
        found = found[:1]  # one maximum next to 0, reached from both sides
    return found


def modes(mu, sigma, low=-1.0, high=1.0) -> Modes:
    """The mode of Y for every (mu, sigma) pair (numpy broadcasting; bounds are scalars)."""
    low, high, c, r = _bounds(low, high)
    mu_b, sigma_b = np.broadcast_arrays(np.asarray(mu, dtype=np.float64),
                                        np.asarray(sigma, dtype=np.float64))
    if not np.all(sigma_b > 0):
        raise ValueError("sigma must be > 0")
    shape = mu_b.shape
    mu1, sigma1 = mu_b.ravel(), sigma_b.ravel()
    n = mu1.size
    x, gx, x_other, g_other = (np.full(n, np.nan) for _ in range(4))
    n_max = np.zeros(n, dtype=np.int64)
    for start in range(0, n, _CHUNK):
        stop = min(start + _CHUNK, n)
        xs, gs, peaks = _grid_peaks(mu1[start:stop], sigma1[start:stop])
        for row, k in enumerate(range(start, stop)):
            found = _row_maxima(xs[row], gs[row], peaks[row], mu1[k], sigma1[k])
            gx[k], x[k] = found[0]
            n_max[k] = len(found)
            if len(found) == 2:
                g_other[k], x_other[k] = found[1]
    return Modes(
        y=(c + r * np.tanh(x)).reshape(shape), x=x.reshape(shape), g=gx.reshape(shape),
        n_maxima=n_max.reshape(shape), y_other=(c + r * np.tanh(x_other)).reshape(shape),
        x_other=x_other.reshape(shape), g_other=g_other.reshape(shape),
    )


def mode(mu, sigma, low=-1.0, high=1.0) -> float:
    """The global mode of Y for one parameter set."""
    return float(modes(np.float64(mu), np.float64(sigma), low, high).y)


# ---------------------------------------------------------------- known-wrong answers

TANH_LOC = ("tanh(loc) returned as the mode: that is the transformed location "
            "(deterministic_sample), not the argmax of the density (pytorch/rl#2186)")
BOUNDARY = ("the answer lies on the bound low/high, where the density is 0: an optimiser clamped "
            "to [low, high] stopped there (get_mode() of pytorch/rl#2198)")
WRONG_BRANCH = ("the answer is at the lower of the two local maxima of a bimodal density "
                "(sigma^2 > 1/2): wrong branch")
FLOAT32 = ("solved in float32 precision although loc/scale are float64: every answer is "
           "float32-representable and off by about float32 rounding")
RAW_LOC = ("tanh_loc=True ignored: the mode of Normal(loc, scale) was computed instead of "
           "Normal(upscale * tanh(loc / upscale), scale)")
NOT_CONVERGED = ("close to the mode but not on it: an iterative optimiser stopped before "
                 "converging (get_mode(): Adam with lr 1e-2 for at most 200 steps, stopping "
                 "when the step of the whole batch has norm < 1e-3)")


def diagnose(actual, expected: Modes, mu, *, low=-1.0, high=1.0, tol: float,
             float64_inputs: bool = False, failing=None, sigma=None,
             raw_loc=None) -> str | None:
    """Name the known-wrong answers that reproduce the failing elements of ``actual``.

    ``tol`` is the absolute tolerance in y used to match a wrong value; ``failing`` (bool mask)
    selects the elements that failed (default: all). ``raw_loc`` and ``sigma``: the loc and scale
    given to a ``tanh_loc=True`` distribution (to recognise an ignored ``tanh_loc``). Each failing
    element gets the first matching cause of: boundary, tanh(loc), ignored tanh_loc, float32
    solve, wrong branch (nearer the other local maximum), not converged (within 0.1 r).
    Returns e.g. "<cause> (7 of 9 failing elements); <cause> (2 of 9 ...)" or None.
    """
    low, high, c, r = _bounds(low, high)
    a = np.asarray(actual, dtype=np.float64)
    mu = np.broadcast_to(np.asarray(mu, dtype=np.float64), a.shape)
    bad = np.ones(a.shape, dtype=bool) if failing is None else np.asarray(failing, dtype=bool)
    n_bad = int(bad.sum())
    if n_bad == 0:
        return None
    err = np.abs(a - expected.y)
    to_bound = np.minimum(a - low, high - a)
    mode_to_bound = np.minimum(expected.y - low, high - expected.y)
    variants: list[tuple[str, np.ndarray]] = [
        (BOUNDARY, (to_bound <= 0) | ((to_bound <= tol) & (mode_to_bound > 10 * tol))),
        (TANH_LOC, np.abs(a - (c + r * np.tanh(mu))) <= tol),
    ]
    if raw_loc is not None and sigma is not None:
        ignored = modes(raw_loc, sigma, low, high).y
        variants.append((RAW_LOC, np.abs(a - np.broadcast_to(ignored, a.shape)) <= tol))
    if float64_inputs and np.all(np.isfinite(a)) and np.all(a.astype(np.float32) == a):
        variants.append((FLOAT32, err <= 1e-5 * r))
    variants += [
        (WRONG_BRANCH, (expected.n_maxima == 2) & (np.abs(a - expected.y_other) < err)),
        (NOT_CONVERGED, err <= 0.1 * r),
    ]
    named = []
    claimed = np.zeros_like(bad)
    for name, hit in variants:
        hit = np.asarray(hit, dtype=bool) & bad & ~claimed
        if hit.any():
            claimed |= hit
            named.append((int(hit.sum()), name))
    if not named:
        return None
    named.sort(key=lambda item: -item[0])
    return "; ".join(f"{name} ({k} of {n_bad} failing element{'s' if n_bad > 1 else ''})"
                     for k, name in named)


# ---------------------------------------------------------------- the score of a draw


def _log_abs_dtanh(x: np.ndarray) -> np.ndarray:
    """log(1 - tanh(x)^2) = log 4 - 2|x| - 2 log(1 + exp(-2|x|)), exact for any |x|."""
    a = np.abs(x)
    return np.log(4.0) - 2.0 * a - 2.0 * np.log1p(np.exp(-2.0 * a))


def score_bounds(mu, scale, *, low: float, high: float, z_max: float) -> tuple[np.ndarray,
                                                                                 np.ndarray]:
    """Bounds on log p(y) of Y = c + r tanh(X), X ~ Normal(mu, scale^2), summed over the last
    dimension, for every pre-tanh draw x within ``z_max`` standard deviations of ``mu``:

        log p(y) = log N(x; mu, scale) - log r - log(1 - tanh(x)^2)

    The first term lies in [-log(scale sqrt(2 pi)) - z_max^2 / 2, -log(scale sqrt(2 pi))], the
    last is monotone in |x|, so its extremes sit at the ends of the interval or at x = 0. The
    score of a draw scored at its own pre-tanh value lies within these bounds whatever the
    draw; a score computed from the rounded action (tanh(x) = 1 in float32 from |x| ~ 9) does
    not."""
    mu = np.asarray(mu, dtype=np.float64)
    s = np.asarray(scale, dtype=np.float64)
    r = (high - low) / 2.0
    lo_x, hi_x = mu - z_max * s, mu + z_max * s
    far = np.maximum(np.abs(lo_x), np.abs(hi_x))
    near = np.where((lo_x <= 0) & (hi_x >= 0), 0.0, np.minimum(np.abs(lo_x), np.abs(hi_x)))
    log_n_max = -np.log(s) - 0.5 * np.log(2.0 * np.pi)
    log_n_min = log_n_max - 0.5 * z_max**2
    # -log(1 - tanh(x)^2) grows with |x|: smallest at the nearest point to 0, largest farthest
    lower = log_n_min - np.log(r) - _log_abs_dtanh(near)
    upper = log_n_max - np.log(r) - _log_abs_dtanh(far)
    return lower.sum(-1), upper.sum(-1)
