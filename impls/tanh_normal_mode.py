"""TanhNormal whose ``mode`` and ``get_mode()`` return the exact mode of its density.

Y = c + r * tanh(X), X ~ Normal(mu, sigma^2), c = (high + low) / 2, r = (high - low) / 2, where mu
is the location the distribution really uses (``self.loc``: ``loc``, or with ``tanh_loc=True``
TorchRL's rescaled location). In x = atanh((y - c) / r) the log-density of Y is, up to a constant,

    g(x) = -(x - mu)^2 / (2 s) + 2 log cosh x,        s = sigma^2,

and its stationary points solve h(x) = x - mu - 2 s tanh(x) = 0 (g' = -h / s).

Why the solve below is exact, with a fixed number of Newton steps and no bracket:

1. g(x) - g(-x) = 2 mu x / s, so for mu > 0 every x > 0 beats -x: the global maximiser has the
   sign of mu. With m = |mu| it is copysign(X, mu), X the maximiser of g(.; m) on [0, inf).
   (mu = 0 and s > 1/2: +X and -X tie and +X is returned; mu = -0.0 gives -X.)
2. On [0, inf) h is convex (h'' = 4 s sech^2(x) tanh(x) >= 0), h(0) = -m <= 0 and h -> inf, so
   h < 0 on [0, X) and h > 0 beyond X: g rises up to X and falls after it, X is the largest
   root of h. U = m + 2 s has h(U) = 2 s (1 - tanh U) >= 0, so U >= X.
3. Newton on a convex function: from any x >= 0 with h'(x) > 0 the tangent lies below h, so
   the Newton iterate is >= X; from any x >= X the iterates decrease monotonically to X
   (quadratically when h'(X) > 0). No overshoot, hence no bracket or bisection is needed.
4. Start: Newton from U alone is slow near the regime boundary s = 1/2, m -> 0, where X is a
   nearly triple root. There tanh x ~ x - x^3/3 turns h = 0 into x^3 + p x = q with
   p = 3 (1 - 2 s) / (2 s), q = 3 m / (2 s), whose root is of the order of
   max(sqrt(-p), min(q / p, cbrt q)); one Newton step from that guess is an upper bound of X
   by 3 (when h' > 0 there) and the start is the smaller of it and U.
5. From that start ``NEWTON_STEPS`` = 4 Newton steps reach float64 rounding (<= 4e-14 in tanh X)
   over 6 million random (m, s) covering s in [1e-8, 300], m in [0, 50] and the neighbourhood
   of the cusp; after 3 steps the worst error is 1e-7, and the 4th step squares it (an error
   after 3 steps ten times the worst sampled one would still end near 1e-12).
   tests/references/test_impl_tanh_normal_mode.py repeats a 400,000-point sweep against bisection. The last
   step is applied in tanh space (t - (1 - t^2) * step), which saves one tanh.

Everything runs in float64 (float32 on MPS, which has no float64), elementwise, with torch ops
only (tanh is evaluated through expm1, and the rough cubic-model guess in float32, for speed): any batch shape and device, deterministic, no sampling, no data-dependent control flow.
The result is clamped into the open interval (low, high): where the true mode is closer to a
bound than the output dtype can resolve (e.g. |mu| > 9 in float32), the nearest representable
value inside the bound is returned, never the bound itself (the density is 0 there).
"""

from __future__ import annotations

import functools
import math

import numpy as np
import torch
from torchrl.modules import TanhNormal as _TorchRLTanhNormal

NEWTON_STEPS = 4


def _working_dtype(device: torch.device) -> torch.dtype:
    return torch.float32 if device.type == "mps" else torch.float64


class _Newton:
    """Newton steps on h(x) = x - m - 2 s tanh(x) for x >= 0, in place on a few preallocated
    buffers: the solve is memory-bound (about ten elementwise passes per step)."""

    def __init__(self, x, m, two_s, slope0):
        self.x, self.m, self.two_s = x, m, two_s
        self.slope0 = slope0  # h'(0) = 1 - 2 s
        self.neg_t, self.u, self.h, self.dh = (torch.empty_like(x) for _ in range(4))
        self.tiny = torch.finfo(x.dtype).tiny  # keeps h' > 0 where it rounds to 0 at the cusp

    def residual(self):
        """h and h' at x; neg_t = -tanh(x) from expm1(-2x), which is cheaper than tanh and
        cannot overflow for x >= 0."""
        em = torch.mul(self.x, -2.0, out=self.neg_t).expm1_()
        torch.div(em, torch.add(em, 2.0, out=self.u), out=self.neg_t)
        torch.mul(self.two_s, self.neg_t, out=self.u)  # -2 s tanh(x)
        torch.sub(self.x, self.m, out=self.h).add_(self.u)
        # h' = 1 - 2 s + 2 s tanh(x)^2
        torch.addcmul(self.slope0, self.u, self.neg_t, out=self.dh).clamp_min_(self.tiny)

    def step(self):
        self.residual()
        self.x.addcdiv_(self.h, self.dh, value=-1.0)

    def tanh_after_last_step(self):
        """-tanh(x - h / h') to first order: -(tanh(x) - (1 - tanh(x)^2) h / h'), negated: the
        caller's copysign sets the sign, whatever it is. Not clamped into [0, 1]: the final
        clamp into the open interval (low, high) takes a value a rounding puts above 1 back
        inside."""
        self.residual()
        sech2 = torch.mul(self.neg_t, self.neg_t, out=self.u).neg_().add_(1.0)
        return self.neg_t.addcmul_(sech2, self.h.div_(self.dh))


def _cubic_model_guess(m, s, slope0):
    """Order of magnitude of the root of x^3 + p x = q (tanh x ~ x - x^3 / 3), p = 3 (1 - 2 s) /
    (2 s), q = 3 m / (2 s): sqrt(-p) or cbrt(q) when p < 0 (the copysign makes the first term
    negative, hence ignored, when p > 0), min(q / p, cbrt q) when p >= 0. Only its order
    matters, so the square and cube roots are taken in float32."""
    k = torch.reciprocal(s).mul_(1.5)
    p = slope0 * k  # slope0 = 1 - 2 s
    q = m * k
    # sqrt(max(-p, 0)): 0 where p > 0, which the max below ignores as it does -sqrt(p) (the
    # other term is >= 0); a clamp is cheaper than a copysign (4-5 us at 1e4 here)
    root = p.to(torch.float32, copy=True).neg_().clamp_min_(0.0).sqrt_().to(m.dtype)
    # q^(1/3) as 2^(log2(q) / 3): a third of the time of pow in float32 (17 us at 1e4 here);
    # the same order of magnitude (a few float32 ulps apart), and q = 0, inf, NaN map alike
    cbrt = q.to(torch.float32, copy=True).log2_().mul_(1.0 / 3.0).exp2_().to(m.dtype)
    q_over_p = q.div_(p.clamp_min_(torch.finfo(m.dtype).tiny))
    return torch.maximum(root, torch.minimum(q_over_p, cbrt, out=cbrt), out=root)


def _tanh_of_root(m, s):
    """+-tanh(X) for m = |mu| >= 0 and s = sigma^2 > 0 (see the module docstring): its sign is
    the caller's to set (copysign)."""
    two_s = s + s
    slope0 = 1.0 - two_s
    newton = _Newton(_cubic_model_guess(m, s, slope0), m, two_s, slope0)
    newton.step()
    # A valid step lands at X >= 0 or above. A negative one can only come from h' rounding to
    # <= 0 right at the cusp: abs() turns it into a huge value, so m + 2 s is taken instead.
    # fmin's semantics: where m (3 m / 2 s in the guess) overflows, the step is inf - inf = NaN
    # and m + 2 s, a valid start, is taken (a NaN m stays NaN: m + 2 s is NaN then). NaN -> inf
    # then minimum, because torch's fmin has no vectorised kernel (15 us at 1e4 float64 here,
    # against 2 + 2 us)
    newton.x.abs_().nan_to_num_(nan=math.inf, posinf=math.inf)
    torch.minimum(newton.x, m + two_s, out=newton.x)
    for _ in range(NEWTON_STEPS - 1):
        newton.step()
    return newton.tanh_after_last_step()


def tanh_normal_mode(loc: torch.Tensor, scale: torch.Tensor, low, high) -> torch.Tensor:
    """Mode of c + r * tanh(Normal(loc, scale^2)), elementwise over broadcast loc and scale.

    ``loc`` and ``scale`` are tensors on one device (as TorchRL's TanhNormal holds them);
    ``low``/``high`` are numbers or tensors broadcastable to the result. The result has the
    broadcast shape, the dtype of ``loc`` (after promotion with ``scale``) and no gradient.
    """
    out_dtype = torch.promote_types(loc.dtype, scale.dtype)
    if not out_dtype.is_floating_point:
        out_dtype = torch.get_default_dtype()
    if (loc.device.type == "cpu" and scale.device.type == "cpu" and loc.numel() <= SMALL_BATCH
            and scale.numel() <= SMALL_BATCH and _is_cpu_scalar(low) and _is_cpu_scalar(high)):
        small = _small_batch_mode(loc, scale, float(low), float(high), out_dtype)
        if small is not None:
            return small
    work = _working_dtype(loc.device)
    with torch.no_grad():
        # no detach: under no_grad nothing is recorded, and nothing below writes into mu
        mu, sigma = torch.broadcast_tensors(loc.to(work), scale.to(work))
        t = _tanh_of_root(mu.abs(), sigma * sigma).copysign_(mu)
        return _affine_inside(t, low, high, out_dtype)


# ----------------------------------------------------------------------------------------------
# Small CPU batches (a policy acting on one observation): the solve below, in plain Python
# floats. The vectorised solve is about sixty tensor ops, each costing a few microseconds of
# dispatch whatever its size; for a handful of elements the same arithmetic on Python floats
# (IEEE float64, the working dtype) takes a few microseconds in all. The two paths run the same
# formulas; they differ only where the vectorised one takes the cubic-model guess in float32 and
# in the last ulp of expm1, which moves the converged root by float64 rounding (tested).

SMALL_BATCH = 16
#: inputs the float path takes: finite, and within ranges where none of its intermediate values
#: can overflow to inf (Python float division by zero raises rather than giving inf); anything
#: else goes to the vectorised path, which follows IEEE through inf and NaN
_SMALL_MIN_S, _SMALL_MAX_M = 1e-100, 1e100
_TINY64 = float(np.finfo(np.float64).tiny)


def _small_batch_mode(loc, scale, low: float, high: float, dtype):
    """``tanh_normal_mode`` for at most ``SMALL_BATCH`` CPU elements in Python floats, or None
    when an input lies outside what this path takes (see ``_SMALL_MIN_S``) or the output dtype
    is not float32/float64."""
    if dtype not in (torch.float32, torch.float64) or not high > low:
        return None
    shape = torch.broadcast_shapes(loc.shape, scale.shape)
    n = shape.numel()
    mus = loc.detach().expand(shape).reshape(n).tolist()
    sigmas = scale.detach().expand(shape).reshape(n).tolist()
    c, r = (high + low) * 0.5, (high - low) * 0.5
    if dtype == torch.float32:
        inner_lo = float(np.nextafter(np.float32(low), np.float32(high)))
        inner_hi = float(np.nextafter(np.float32(high), np.float32(low)))
    else:
        inner_lo, inner_hi = float(np.nextafter(low, high)), float(np.nextafter(high, low))
    out = []
    for mu, sigma in zip(mus, sigmas):  # noqa: B905 (one length by construction)
        mu, s = float(mu), float(sigma) * float(sigma)
        m = abs(mu)
        if not (_SMALL_MIN_S <= s <= _SMALL_MAX_M and m <= _SMALL_MAX_M):  # NaN fails too
            return None
        y = math.copysign(_tanh_of_root_float(m, s), mu) * r + c
        if dtype == torch.float32:
            y = float(np.float32(y))  # round as .to(float32) does, then clamp
        out.append(min(max(y, inner_lo), inner_hi))
    return torch.tensor(out, dtype=dtype).reshape(shape)


def _tanh_of_root_float(m: float, s: float) -> float:
    """``_tanh_of_root`` for one element, step for step (see ``_Newton``)."""
    two_s = s + s
    k = (1.0 / s) * 1.5
    p = (1.0 - two_s) * k
    q = m * k
    root = -math.copysign(math.sqrt(abs(p)), p)
    x = max(root, min(q / max(p, _TINY64), q ** (1.0 / 3.0)))
    slope0 = 1.0 - two_s

    def residual(x):
        em = math.expm1(-2.0 * x)
        neg_t = em / (em + 2.0)
        u = two_s * neg_t
        return neg_t, (x - m) + u, max(slope0 + u * neg_t, _TINY64)

    _, h, dh = residual(x)
    x = min(abs(x - h / dh), m + two_s)
    for _ in range(NEWTON_STEPS - 1):
        _, h, dh = residual(x)
        x = x - h / dh
    neg_t, h, dh = residual(x)
    return -(neg_t + (1.0 - neg_t * neg_t) * (h / dh))  # not clamped: see tanh_after_last_step


def _affine_inside(t, low, high, dtype):
    """c + r * t in ``dtype``, clamped into the open interval (low, high)."""
    if _is_cpu_scalar(low) and _is_cpu_scalar(high):
        # plain numbers: no 0-d tensor arithmetic (a few microseconds per op)
        lo, hi = float(low), float(high)
        # a new tensor, not t scaled in place: half-precision outputs go on to the tensor branch
        # below with t itself
        y = t.mul((hi - lo) * 0.5).add_((hi + lo) * 0.5).to(dtype)
        np_type = np.float32 if dtype == torch.float32 else np.float64
        inner_lo = float(np.nextafter(np_type(lo), np_type(hi)))
        inner_hi = float(np.nextafter(np_type(hi), np_type(lo)))
        if dtype in (torch.float32, torch.float64):
            return y.clamp_(inner_lo, inner_hi)
    # TanhNormal holds its bounds as tensors on loc's device already
    lo, hi = torch.as_tensor(low), torch.as_tensor(high)
    lo_w, hi_w = lo.to(t.dtype), hi.to(t.dtype)
    y = torch.addcmul((hi_w + lo_w) * 0.5, (hi_w - lo_w) * 0.5, t).to(dtype)
    lo, hi = lo.to(dtype), hi.to(dtype)
    return y.clamp_(torch.nextafter(lo, hi), torch.nextafter(hi, lo))


def _is_cpu_scalar(value) -> bool:
    if isinstance(value, torch.Tensor):
        return value.numel() == 1 and value.device.type == "cpu"
    return isinstance(value, (int, float))


class TanhNormal(_TorchRLTanhNormal):
    """Drop-in for ``torchrl.modules.TanhNormal`` (same constructor: loc, scale, upscale, low,
    high, event_dims, tanh_loc, safe_tanh) whose ``mode`` and ``get_mode()`` both return the
    exact mode of the distribution (see the module docstring). ``deterministic_sample`` is
    TorchRL's: the tanh-transformed base location, c + r * tanh(mu).

    Construction is deferred in the common case (CPU tensors, number bounds, no ``tanh_loc``):
    ``loc`` and ``scale`` are set at once, and TorchRL's constructor (its bound checks with two
    host reads, the tanh and affine transforms, torch's Normal/Independent/TransformedDistribution
    stack: about one ``torch.tanh`` of a 1e4 batch) runs on the first access to anything else
    (``batch_shape``, ``log_prob``, ``sample``, ``low``...). ``mode`` needs none of it. Refused
    bounds (``high <= low``) still raise at construction, as TorchRL's do."""

    def __init__(self, loc, scale, upscale=5.0, low=-1.0, high=1.0, event_dims=None,
                 tanh_loc=False, safe_tanh=True):
        kwargs = {"upscale": upscale, "low": low, "high": high, "event_dims": event_dims,
                  "tanh_loc": tanh_loc, "safe_tanh": safe_tanh}
        if _deferrable(loc, scale, low, high, tanh_loc):
            self.loc, self.scale = loc, scale  # what TorchRL's update() sets them to here
            self._deferred = kwargs
            return
        super().__init__(loc, scale, **kwargs)

    def __getattr__(self, name):
        # Called only for an attribute the instance lacks: the first such access builds the
        # TorchRL distribution. _deferred is dropped first, so that the lookups TorchRL's own
        # constructor makes (hasattr(self, "base_dist")) fail as they do on a fresh instance,
        # and so does any lookup on an instance never constructed (copy, unpickling). A name the
        # class defines lands here only when its property raised AttributeError itself (a bug in
        # ``mode``, say): that error is not retried on a built distribution, it is raised.
        on_class = any(name in klass.__dict__ for klass in type(self).__mro__)
        kwargs = None if on_class else self.__dict__.pop("_deferred", None)
        if kwargs is None:
            raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")
        super().__init__(self.loc, self.scale, **kwargs)
        return getattr(self, name)

    @property
    def mode(self) -> torch.Tensor:
        return self.get_mode()

    def get_mode(self) -> torch.Tensor:
        deferred = self.__dict__.get("_deferred")
        if deferred is None:
            return tanh_normal_mode(self.loc, self.scale, self.low, self.high)
        # the bounds as TorchRL would hold them (torch.as_tensor: the default dtype's rounding)
        return tanh_normal_mode(self.loc, self.scale, _held(deferred["low"]),
                                _held(deferred["high"]))


def _deferrable(loc, scale, low, high, tanh_loc) -> bool:
    """Whether TorchRL's constructor may wait: tensors on the CPU (elsewhere it would do its
    device moves), a location used as given, number bounds it accepts (bool is left to it)."""
    return (isinstance(loc, torch.Tensor) and isinstance(scale, torch.Tensor)
            and loc.device.type == "cpu" and scale.device.type == "cpu" and not tanh_loc
            and type(low) in (int, float) and type(high) in (int, float) and high > low
            and not torch.compiler.is_compiling())


def _held(bound) -> float:
    """A number bound as TorchRL holds it, ``torch.as_tensor(bound)`` (a float in the default
    dtype), read back as a Python float."""
    return _held_in(bound, torch.get_default_dtype())


@functools.lru_cache(maxsize=256, typed=True)  # typed: 1 and 1.0 are held as int64 and float
def _held_in(bound, default_dtype) -> float:
    return float(torch.as_tensor(bound))
