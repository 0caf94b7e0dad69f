"""OpenAI Baselines ppo2 value clipping, transcribed to numpy in float64.

Source: openai/baselines@ea25b9e8, baselines/ppo2/model.py lines 66-75::

    vpredclipped = OLDVPRED + clip(vpred - OLDVPRED, -CLIPRANGE, CLIPRANGE)
    vf_losses1   = (vpred - R)^2
    vf_losses2   = (vpredclipped - R)^2
    vf_loss      = 0.5 * mean(max(vf_losses1, vf_losses2))

Baselines has no value clip fraction; the one defined here mirrors its policy ``clipfrac``
(a strict ``|vpred - OLDVPRED| > CLIPRANGE``). The gradient is the analytic derivative of the
formula, where the subgradient at ties follows TensorFlow's/torch's choice (``maximum`` passes
the gradient to the first argument on ties, ``clip`` passes it through at the bounds) and the
elements where the loss is not differentiable are flagged (``kink``): there any subgradient
between 0 and the unclipped branch's derivative is right.

``WRONG_VARIANTS`` are formulas other libraries (or historical bugs) use instead; specs use
them only to *name* a likely cause in a failure message, never as the expected value.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class ValueLoss:
    loss: float  # 0.5 * mean(max(l1, l2))
    dloss_dv: np.ndarray  # d loss / d vpred, same shape as vpred
    clip_fraction: float  # mean(|vpred - OLDVPRED| > c)
    # Elements where the loss has a kink (the two branches tie while the clip is active, e.g.
    # vpred exactly at OLDVPRED +- c): the derivative there is any value between 0 and
    # the unclipped branch's, and ``dloss_dv`` holds the unclipped branch's.
    kink: np.ndarray | None = None


def _as64(x) -> np.ndarray:
    return np.asarray(x, dtype=np.float64)


def vf_loss(vpred, oldvpred, returns, cliprange: float) -> ValueLoss:
    """Baselines ppo2 ``vf_loss`` (with its 0.5), its gradient and the value clip fraction."""
    v, old, R = _as64(vpred), _as64(oldvpred), _as64(returns)
    c = float(cliprange)
    if not c >= 0:
        raise ValueError(f"cliprange must be >= 0, got {cliprange!r}")
    delta = v - old
    clipped = np.clip(delta, -c, c)
    vclip = old + clipped
    l1 = (v - R) ** 2
    l2 = (vclip - R) ** 2
    n = v.size
    loss = 0.5 * float(np.mean(np.maximum(l1, l2)))
    # d/dv of l2 is 2 (vclip - R) inside the clip range and 0 where the clip saturates.
    inside = np.abs(delta) <= c
    g1 = 2.0 * (v - R)
    g2 = np.where(inside, 2.0 * (vclip - R), 0.0)
    grad = 0.5 * np.where(l1 >= l2, g1, g2) / n
    frac = float(np.mean(np.abs(delta) > c))
    kink = (l1 == l2) & (np.abs(delta) >= c)
    return ValueLoss(loss=loss, dloss_dv=grad, clip_fraction=frac, kink=kink)


def unclipped_vf_loss(vpred, returns) -> ValueLoss:
    """The value loss with clipping off: 0.5 * mean((vpred - R)^2)."""
    v, R = _as64(vpred), _as64(returns)
    return ValueLoss(
        loss=0.5 * float(np.mean((v - R) ** 2)),
        dloss_dv=(v - R) / v.size,
        clip_fraction=0.0,
    )


def _clipped_only(vpred, oldvpred, returns, c) -> float:
    # stable-baselines3: MSE of the clipped prediction, no max with the unclipped loss
    v, old, R = _as64(vpred), _as64(oldvpred), _as64(returns)
    return 0.5 * float(np.mean((old + np.clip(v - old, -c, c) - R) ** 2))


def _min_instead_of_max(vpred, oldvpred, returns, c) -> float:
    # ray-project/ray#2233 and the openai/baselines#91 question: the optimistic minimum
    v, old, R = _as64(vpred), _as64(oldvpred), _as64(returns)
    vclip = old + np.clip(v - old, -c, c)
    return 0.5 * float(np.mean(np.minimum((v - R) ** 2, (vclip - R) ** 2)))


def _no_clipping(vpred, oldvpred, returns, c) -> float:
    return unclipped_vf_loss(vpred, returns).loss


WRONG_VARIANTS = {
    "the clipped prediction alone, without max() against the unclipped loss "
    "(stable-baselines3 style; openai/baselines#765)": _clipped_only,
    "min() instead of max() (optimistic instead of pessimistic; openai/baselines#91)": _min_instead_of_max,
    "no clipping at all (the threshold is ignored)": _no_clipping,
}


def diagnose(loss_in_baselines_units: float, vpred, oldvpred, returns, c, *, rtol=1e-9) -> str | None:
    """Name the known-wrong formula(s) that reproduce an observed loss."""
    hits = [
        name
        for name, f in WRONG_VARIANTS.items()
        if np.isclose(loss_in_baselines_units, f(vpred, oldvpred, returns, c), rtol=rtol, atol=1e-12)
    ]
    if not hits:
        return None
    return hits[0] if len(hits) == 1 else "one of: " + "; or ".join(hits)


def _ties_counted(vpred, oldvpred, c) -> float:
    return float(np.mean(np.abs(_as64(vpred) - _as64(oldvpred)) >= c))


def _relative_change(vpred, oldvpred, c) -> float:
    with np.errstate(divide="ignore", invalid="ignore"):
        return float(np.mean(np.abs(_as64(vpred) / _as64(oldvpred) - 1.0) > c))


def _complement(vpred, oldvpred, c) -> float:
    return 1.0 - float(np.mean(np.abs(_as64(vpred) - _as64(oldvpred)) > c))


CLIP_FRACTION_VARIANTS = {
    "the relative change |v / v_old - 1| > c is counted instead of the absolute change "
    "(the unreleased formula of pytorch/rl#2005, fixed by pytorch/rl#2021)": _relative_change,
    "predictions exactly at +-c are counted as clipped (>= instead of >)": _ties_counted,
    "the share of predictions NOT clipped is reported": _complement,
}


def diagnose_clip_fraction(actual: float, vpred, oldvpred, c) -> str | None:
    hits = [name for name, f in CLIP_FRACTION_VARIANTS.items()
            if np.isclose(actual, f(vpred, oldvpred, c), rtol=0, atol=1e-12)]
    return hits[0] if len(hits) == 1 else None


def explained_variance(returns, values) -> np.ndarray:
    """``1 - Var(R - v) / Var(R)`` per column (over the batch, axis 0), population variances:
    the share of the returns' variance the value prediction explains (Baselines'
    ``explained_variance``, column by column). ``-inf`` where the returns are constant and the
    residual is not; NaN where both are constant."""
    R, v = _as64(returns), _as64(values)
    with np.errstate(divide="ignore", invalid="ignore"):
        return 1.0 - np.var(R - v, axis=0) / np.var(R, axis=0)


def effective_sample_size(log_weight) -> np.ndarray:
    """Kish's effective sample size of the importance weights ``w = exp(log_weight)`` over the
    batch (axis 0), per remaining element, as a share of the batch: ``(sum w)^2 / sum w^2 / B``
    (1 when every weight is equal, 1/B when one weight dominates). Computed from ``w / max w``,
    which leaves the ratio unchanged and keeps ``exp`` finite."""
    lw = _as64(log_weight)
    w = np.exp(lw - lw.max(axis=0, keepdims=True))
    return w.sum(axis=0) ** 2 / (w**2).sum(axis=0) / lw.shape[0]


def value_norm_stats(kind: str, *batches, beta: float = 0.99999,
                     eps: float = 1e-5) -> tuple[float, float]:
    """Mean and standard deviation a value normaliser holds after folding in ``batches`` (each
    an array of value targets, one update per batch), from a fresh state:

    - ``"running"`` (exact running statistics, Welford/Chan): the population mean and variance
      of every target seen;
    - ``"popart"`` (PopArt, van Hasselt et al. 2016): exponential moving averages, rate
      ``1 - beta``, of each batch's mean and mean of squares, debiased by the sum of the
      weights (``1 - beta^T``), the variance ``mean_sq - mean^2``.

    The variance is floored at ``eps`` in both (a constant batch keeps a finite scale)."""
    arrays = [_as64(b).ravel() for b in batches]
    if kind == "running":
        pooled = np.concatenate(arrays)
        mean, var = float(pooled.mean()), float(pooled.var())
    elif kind == "popart":
        weights = np.array([(1 - beta) * beta ** (len(arrays) - 1 - t)
                            for t in range(len(arrays))])
        means = np.array([a.mean() for a in arrays])
        squares = np.array([(a**2).mean() for a in arrays])
        debias = weights.sum()
        mean = float(weights @ means / debias)
        var = float(weights @ squares / debias - mean**2)
    else:
        raise ValueError(f"unknown value normaliser {kind!r}")
    return mean, float(np.sqrt(max(var, eps)))
