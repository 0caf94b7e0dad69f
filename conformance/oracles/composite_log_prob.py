"""Log-probabilities of a composite (multi-head) action, from first principles in float64.

A composite action is a dict of independent heads, so its log-probability is the sum of the
heads' log-probabilities, each reduced over its own event dims and nothing else::

    categorical:  log p(a) = logits[a] - logsumexp(logits)          (log_softmax, gathered)
    normal:       log p(x) = sum_d -(x_d - mu_d)^2 / (2 s_d^2) - log s_d - log(2 pi) / 2
    aggregate:    sum over heads, one value per element of the distribution's batch shape

Everything is computed in float64 from the (float32) inputs, with plain tensor arithmetic: no
``torch.distributions``, no tensordict. Gradients come from float64 autograd through these
formulas. ``WRONG_VARIANTS`` are the historical ways of getting the aggregate wrong; specs use
them only to *name* a likely cause in a failure message, never as an expected value.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping

import torch

RL_2487 = "https://github.com/pytorch/rl/issues/2487"
TD_1054 = "https://github.com/pytorch/tensordict/pull/1054"

_LOG_SQRT_2PI = 0.5 * math.log(2.0 * math.pi)


def _f64(x) -> torch.Tensor:
    return torch.as_tensor(x).detach().to(torch.float64)


def categorical_log_prob(logits, action) -> torch.Tensor:
    """``log_softmax(logits)[..., action]`` in float64; ``action`` has the batch shape."""
    z = _f64(logits) if not (torch.is_tensor(logits) and logits.dtype == torch.float64) else logits
    log_pmf = z - torch.logsumexp(z, dim=-1, keepdim=True)
    index = torch.as_tensor(action).long()
    if index.shape != z.shape[:-1]:
        raise ValueError(f"oracle: action shape {tuple(index.shape)} is not the batch shape "
                         f"{tuple(z.shape[:-1])} of logits {tuple(z.shape)}")
    return log_pmf.gather(-1, index.unsqueeze(-1)).squeeze(-1)


def normal_log_prob(loc, scale, x) -> torch.Tensor:
    """Element-wise Normal log-density in float64 (shape of ``loc``)."""
    def as64(t):
        return t if torch.is_tensor(t) and t.dtype == torch.float64 else _f64(t)
    mu, s, v = as64(loc), as64(scale), _f64(x)
    return -((v - mu) ** 2) / (2.0 * s**2) - torch.log(s) - _LOG_SQRT_2PI


def head_log_prob(kind: str, params: Mapping, action, *, elementwise: bool = False) -> torch.Tensor:
    """One head's log-prob; a Normal head is summed over its last (event) dim unless
    ``elementwise``."""
    if kind == "categorical":
        return categorical_log_prob(params["logits"], action)
    if kind == "normal":
        lp = normal_log_prob(params["loc"], params["scale"], action)
        return lp if elementwise else lp.sum(-1)
    raise ValueError(f"oracle: unknown head kind {kind!r}")


def per_head(heads: Mapping, actions: Mapping) -> dict[str, torch.Tensor]:
    """Each head's event-reduced log-prob, ``[*batch]`` float64. ``heads[h]`` has ``.kind`` and
    ``.params``."""
    return {h: head_log_prob(heads[h].kind, heads[h].params, actions[h]) for h in heads}


def aggregate(heads: Mapping, actions: Mapping) -> torch.Tensor:
    """The joint log-prob: the sum of the heads' log-probs, ``[*batch]`` float64."""
    return sum(per_head(heads, actions).values())


def gradients(heads: Mapping, actions: Mapping, weights) -> dict[str, dict[str, torch.Tensor]]:
    """d sum(weights * aggregate) / d params, by float64 autograd (head -> param -> grad)."""
    leaves = {h: {k: _f64(v).clone().requires_grad_(True) for k, v in heads[h].params.items()}
              for h in heads}
    total = 0.0
    for h, params in leaves.items():
        total = total + head_log_prob(heads[h].kind, params, actions[h])
    objective = (_f64(weights) * total).sum()
    flat = [(h, k, t) for h, params in leaves.items() for k, t in params.items()]
    grads = torch.autograd.grad(objective, [t for _, _, t in flat], allow_unused=True)
    out: dict[str, dict[str, torch.Tensor]] = {h: {} for h in heads}
    for (h, k, t), g in zip(flat, grads, strict=True):
        out[h][k] = torch.zeros_like(t) if g is None else g
    return out


def least_likely(logits) -> torch.Tensor:
    """The least likely category per batch element (the largest-magnitude log-prob)."""
    return torch.as_tensor(logits).argmin(-1)


def mode(heads: Mapping) -> dict[str, torch.Tensor]:
    """The deterministic action: argmax for categorical heads, loc for normal heads."""
    return {h: (head.params["logits"].argmax(-1) if head.kind == "categorical"
                else head.params["loc"].detach().clone())
            for h, head in heads.items()}


# ------------------------------------------------------------------ known-wrong aggregates
# Each variant takes (heads, actions as stored, sample_batch_shape) and returns what a broken
# implementation would report as the aggregate. Stored actions may carry a trailing singleton.

def _stored_as_torch_broadcasts(head, action) -> torch.Tensor:
    """A head's log-prob the way torch.distributions broadcasts a stored action: an int64
    action of shape [*batch, 1] against logits [*batch, n] gives [*batch, *batch]."""
    if head.kind == "categorical":
        z = _f64(head.params["logits"])
        log_pmf = z - torch.logsumexp(z, dim=-1, keepdim=True)
        value = torch.as_tensor(action).long().unsqueeze(-1)
        value, log_pmf = torch.broadcast_tensors(value, log_pmf)
        return log_pmf.gather(-1, value[..., :1]).squeeze(-1)
    return normal_log_prob(head.params["loc"], head.params["scale"], action)


def batch_action(head, action):
    """A stored categorical action ``[*batch, 1]`` as the ``[*batch]`` index it stands for."""
    a = torch.as_tensor(action)
    if head.kind == "categorical" and a.ndim > len(head.params["logits"].shape) - 1:
        a = a.reshape(head.params["logits"].shape[:-1])
    return a


def _mean_over_heads(heads, actions, sample_batch_shape):
    lps = [head_log_prob(heads[h].kind, heads[h].params, batch_action(heads[h], actions[h]))
           for h in heads]
    return sum(lps) / len(lps)


def _drop(name):
    def variant(heads, actions, sample_batch_shape):
        return sum(head_log_prob(heads[h].kind, heads[h].params, batch_action(heads[h], actions[h]))
                   for h in heads if h != name)
    return variant


def _unnormalised(heads, actions, sample_batch_shape):
    total = 0.0
    for h, head in heads.items():
        a = batch_action(head, actions[h])
        if head.kind == "categorical":
            total = total + _f64(head.params["logits"]).gather(-1, a.long().unsqueeze(-1)).squeeze(-1)
        else:
            total = total + head_log_prob(head.kind, head.params, a)
    return total


def _over_sample_ndim(heads, actions, sample_batch_shape):
    ndim = len(sample_batch_shape)
    total = 0.0
    for h, head in heads.items():
        lp = _stored_as_torch_broadcasts(head, actions[h])
        if lp.ndim > ndim:
            lp = lp.flatten(ndim, -1).sum(-1)
        total = total + lp
    return total


def wrong_variants(heads: Mapping) -> dict[str, Callable]:
    variants = {
        "the heads' log-probs are averaged instead of summed": _mean_over_heads,
        "log-probs of categorical heads taken from un-normalised logits (logits[a] without "
        "log_softmax)": _unnormalised,
        "the aggregate reduces over the sample tensordict's ndim instead of the distribution's "
        f"batch shape (summing over the batch, or over a broadcast [B, B]) - rl#2487, "
        f"{RL_2487}": _over_sample_ndim,
    }
    for h in heads:
        variants[f"head {h!r} is left out of the aggregate"] = _drop(h)
    return variants


def diagnose(actual, heads: Mapping, actions: Mapping, sample_batch_shape=None, *,
             rtol: float = 1e-4, atol: float = 1e-4) -> str | None:
    """Name the known-wrong aggregate that reproduces ``actual``, if exactly one does."""
    a = _f64(actual)
    if sample_batch_shape is None:
        sample_batch_shape = tuple(next(iter(heads.values())).batch_shape)
    hits = []
    for name, f in wrong_variants(heads).items():
        try:
            w = f(heads, actions, tuple(sample_batch_shape))
        except (RuntimeError, ValueError):
            continue
        w = torch.as_tensor(w, dtype=torch.float64)
        if w.shape == a.shape and torch.allclose(a, w, rtol=rtol, atol=atol):
            hits.append(name)
    right = None
    try:
        right = aggregate(heads, {h: batch_action(heads[h], actions[h]) for h in heads})
    except (RuntimeError, ValueError):
        pass
    if right is not None and right.shape == a.shape and torch.allclose(a, right, rtol=rtol, atol=atol):
        return None  # the variants coincide with the right answer here (e.g. an n=1 head dropped)
    return hits[0] if len(hits) == 1 else None


def diagnose_head(actual, head, action) -> str | None:
    """Name what is wrong with one head's log-prob, if a known variant reproduces it."""
    a = _f64(actual)
    if head.kind != "categorical":
        return None
    raw = _f64(head.params["logits"]).gather(-1, torch.as_tensor(action).long().unsqueeze(-1)).squeeze(-1)
    if raw.shape == a.shape and torch.allclose(a, raw, rtol=1e-4, atol=1e-4):
        return "log-prob taken from un-normalised logits (logits[a] without log_softmax)"
    return None


def _broadcast_rows(heads: Mapping, stored_actions: Mapping):
    """For each categorical head stored as [B, 1]: (row sums of its [B, B] broadcast log-probs
    log p_j(a_i), its right log-probs [B]). Empty when no action carries a trailing singleton."""
    out = []
    for h, head in heads.items():
        a = torch.as_tensor(stored_actions[h])
        if head.kind == "categorical" and a.ndim == head.params["logits"].ndim and a.shape[-1] == 1:
            matrix = _stored_as_torch_broadcasts(head, a)
            if matrix.ndim == 2:
                out.append((matrix.sum(-1), head_log_prob(head.kind, head.params, a.squeeze(-1))))
    return out


RATIO_BROADCAST = (
    "the loss re-scores the stored [B, 1] categorical actions broadcast against [B, n] logits "
    f"([B, B] log-probs summed per row, then compared with the stored log-prob) - rl#2487, {RL_2487}"
)


def diagnose_ratio(ratio, heads: Mapping, stored_actions: Mapping) -> str | None:
    """Name the cause of a PPO importance ratio != 1 for an unchanged policy: the loss
    re-scoring the stored actions one of the known-wrong ways while collection scored them
    right."""
    r = _f64(ratio)
    right = aggregate(heads, {h: batch_action(heads[h], stored_actions[h]) for h in heads})
    candidates = {}
    broadcast = _broadcast_rows(heads, stored_actions)
    if broadcast and all(rows.shape == right.shape for rows, _ in broadcast):
        # the re-scored [B, B] heads summed per row, against the stored per-row log-prob (a
        # tensor) or, when per-head log-probs are tensordicts, broadcast against all rows
        per_row = sum(rows - good for rows, good in broadcast)
        all_rows = sum(rows - good.sum() for rows, good in broadcast)
        candidates[RATIO_BROADCAST] = [torch.exp(per_row), torch.exp(all_rows)]
    for name, f in wrong_variants(heads).items():
        if "rl#2487" in name:
            continue
        try:
            w = torch.as_tensor(f(heads, stored_actions, tuple(right.shape)), dtype=torch.float64)
        except (RuntimeError, ValueError):
            continue
        if w.shape == right.shape:
            candidates[name] = [torch.exp(w - right)]
    hits = []
    for name, expected in candidates.items():
        for e in expected:
            if (e.shape == r.shape and torch.allclose(r, e, rtol=1e-3, atol=1e-30)
                    and not torch.allclose(e, torch.ones_like(e))):
                hits.append(name)
                break
    return hits[0] if len(hits) == 1 else None


# ------------------------------------------------------------------ PPO terms (§2 family)

def head_entropy(kind: str, params: Mapping) -> torch.Tensor:
    """One head's entropy ``[*batch]`` in float64: ``-sum_a p log p`` (0 log 0 = 0) for a
    categorical head, ``sum_d (1/2 + log(2 pi)/2 + log s_d)`` for an element-wise Normal."""
    if kind == "categorical":
        z = _f64(params["logits"])
        log_p = z - torch.logsumexp(z, dim=-1, keepdim=True)
        return -torch.special.xlogy(log_p.exp(), log_p.exp()).sum(-1)
    if kind == "normal":
        return (0.5 + _LOG_SQRT_2PI + torch.log(_f64(params["scale"]))).sum(-1)
    raise ValueError(f"oracle: unknown head kind {kind!r}")


def entropy_loss(heads: Mapping, coeff) -> float:
    """PPO's entropy term ``-mean_batch sum_h c_h H_h`` (``coeff`` one value or one per head)."""
    c = coeff if isinstance(coeff, Mapping) else {h: coeff for h in heads}
    return -float(sum(c[h] * head_entropy(heads[h].kind, heads[h].params) for h in heads).mean())


def clipped_objective(ratio, advantage, clip_epsilon: float) -> float:
    """``loss_objective`` of clipped PPO: ``-mean(min(r A, clip(r, 1 - e, 1 + e) A))``."""
    r = _f64(ratio)
    a = _f64(advantage).reshape(r.shape)
    clipped = r.clamp(1.0 - clip_epsilon, 1.0 + clip_epsilon)
    return -float(torch.minimum(r * a, clipped * a).mean())


def entropy_loss_broadcast(heads: Mapping, coeff) -> float:
    """Known-wrong, for diagnosis only: each head's entropy kept element-wise (a categorical
    head's as ``[*batch, 1]``, a Normal head's ``[*batch, d]``), weighted, broadcast together
    and averaged, so a Normal head's entropy is averaged over ``d`` instead of summed."""
    c = coeff if isinstance(coeff, Mapping) else {h: coeff for h in heads}
    total = 0.0
    for h, head in heads.items():
        if head.kind == "normal":
            elementwise = 0.5 + _LOG_SQRT_2PI + torch.log(_f64(head.params["scale"]))
        else:
            elementwise = head_entropy(head.kind, head.params).unsqueeze(-1)
        total = total + c[h] * elementwise
    return -float(total.mean())
