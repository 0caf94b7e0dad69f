"""Soft Actor-Critic targets and losses, brute force in float64, one agent-step at a time.

Written from the SAC papers (Haarnoja et al. 2018, arXiv:1801.01290 and 1812.05905; discrete
SAC: Christodoulou 2019, arXiv:1910.07207), not from any library's loss code::

    y        = r + gamma * (1 - terminated) * V(s')
    V(s')    = min_i Qbar_i(s', a') - alpha * log pi(a'|s')          a' drawn at s'
    L_Q      = mean_t sum_i (Q_i(s_t, a_t) - y_t)^2
    L_pi     = mean_t alpha * log pi(a~|s_t) - min_i Q_i(s_t, a~)      a~ drawn at s_t
    L_alpha  = -log(alpha) * mean_t (log pi(a~|s_t) + target_entropy)

Continuous policies are diagonal Normals drawn as ``a = loc + scale * noise`` with the noise the
actor returns, and ``log pi`` is the Normal density written out. Discrete SAC replaces each
draw by the exact expectation over actions (``V = sum_a p(a)(min_i Qbar_i(s', a) - alpha log
p(a))``, ``L_pi = mean sum_a p(a)(alpha log p(a) - min_i Q_i(s, a))``, the alpha term uses
``sum_a p log p``). The Q-parameters seen by the actor term are detached (only the actor
learns from it), targets carry no gradient, and ``Qbar`` are the Q-networks themselves (a
freshly built loss has target copies equal to the online networks).

Each transition ``t`` is one agent-step: the networks are called on single rows (1-D inputs),
and **never on the next state of a terminated step** (the oracle is defined on batches whose
terminal next observations are NaN). ``row`` says which batch row an agent-step belongs to,
for the wrong variants that mix agents of a row.

``WRONG_VARIANTS`` are known-wrong target rules (historical bugs); the specs use them only to
name a likely cause in failure messages, never as expected values.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass

import torch
from torch.func import functional_call

LOG_SQRT_2PI = 0.5 * math.log(2.0 * math.pi)


@dataclass(frozen=True)
class Transitions:
    """One agent-step per entry: observations [M, O], actions [M, A] (one-hot when discrete),
    reward / done / terminated [M], row [M] (batch row of the agent-step)."""

    observation: torch.Tensor
    action: torch.Tensor
    next_observation: torch.Tensor
    reward: torch.Tensor
    done: torch.Tensor
    terminated: torch.Tensor
    row: torch.Tensor

    def __len__(self) -> int:
        return int(self.reward.shape[0])


@dataclass
class SACTerms:
    loss_actor: torch.Tensor  # scalar, attached to the actor parameters
    loss_qvalue: torch.Tensor  # scalar, attached to the Q parameters
    loss_alpha: torch.Tensor  # scalar (alpha is fixed: no graph)
    target: torch.Tensor  # y per agent-step [M]
    next_value: torch.Tensor  # V(s') per agent-step [M]; NaN where it was not needed
    #: the three losses per agent-step [M], before the mean (each loss above is their mean):
    #: what a loss built with reduction "none" reports, one value per agent-step
    per_step: dict[str, torch.Tensor] = dataclasses.field(default_factory=dict)
    #: the batch mean of the policy's entropy estimate (-log pi(a~|s) at the drawn action;
    #: discrete: the exact -sum_a p log p), the "entropy" a loss reports beside its losses
    entropy: float = math.nan


def _detached(module: torch.nn.Module) -> dict[str, torch.Tensor]:
    return {n: p.detach() for n, p in module.named_parameters()}


def normal_log_prob(x, loc, scale) -> torch.Tensor:
    """log density of a diagonal Normal at x, summed over the last dimension."""
    z = (x - loc) / scale
    return (-0.5 * z * z - torch.log(scale) - LOG_SQRT_2PI).sum(-1)


def _continuous_draw(actor, obs):
    loc, scale, noise = actor(obs)
    action = loc + scale * noise
    return action, normal_log_prob(action, loc, scale)


def _discrete_policy(actor, obs):
    """Probabilities and log-probabilities, with 0 log 0 = 0: a masked action (logit -inf) has
    p = 0 and contributes nothing to an expectation, its log-prob is set to 0 (not -inf, whose
    product with p = 0 is NaN, in the values and in the gradients)."""
    logits = actor(obs)
    log_p = logits - torch.logsumexp(logits, -1, keepdim=True)
    p = log_p.exp()
    return p, torch.where(p > 0, log_p, torch.zeros_like(log_p))


# ---------------------------------------------------------------- next-state values V(s')


def continuous_next_value(actor, qvalues, next_obs, alpha, *, action=None) -> torch.Tensor:
    """V(s') = min_i Q_i(s', a') - alpha log pi(a'|s'); ``action`` forces a' (and log pi = 0,
    the zero-filled values of a masked row)."""
    with torch.no_grad():
        if action is None:
            a, log_p = _continuous_draw(actor, next_obs)
        else:
            a, log_p = action, torch.zeros((), dtype=next_obs.dtype)
        q = torch.stack([qf(next_obs, a).reshape(()) for qf in qvalues])
        return q.min() - alpha * log_p


def discrete_next_value(actor, qvalues, next_obs, alpha) -> torch.Tensor:
    with torch.no_grad():
        p, log_p = _discrete_policy(actor, next_obs)
        q = torch.stack([qf(next_obs) for qf in qvalues]).amin(0)
        return (p * (q - alpha * log_p)).sum()


# ---------------------------------------------------------------- target rules


def _v(kind, actor, qvalues, obs, alpha, **kw):
    f = continuous_next_value if kind == "continuous" else discrete_next_value
    return f(actor, qvalues, obs, alpha, **kw)


def _targets(kind, actor, qvalues, t: Transitions, alpha, gamma, variant: str):
    """y and V per agent-step under a target rule (``"correct"`` or a WRONG_VARIANTS key)."""
    m = len(t)
    y = torch.empty(m, dtype=torch.float64)
    v = torch.full((m,), math.nan, dtype=torch.float64)
    rows_with_terminal = {int(r) for r, term in zip(t.row, t.terminated, strict=True) if bool(term)}
    for i in range(m):
        r, term, done = t.reward[i], bool(t.terminated[i]), bool(t.done[i])
        if term:
            y[i] = r  # no bootstrap: V(s') is never computed at a terminal state
            continue
        if variant == "truncation_as_termination" and done:
            y[i] = r
            continue
        if variant == "mask_broadcast_over_agents" and int(t.row[i]) in rows_with_terminal:
            v[i] = 0.0
        elif variant == "zero_action_at_truncation" and done:
            zero = torch.zeros_like(t.action[i])
            v[i] = _v(kind, actor, qvalues, t.next_observation[i], alpha, action=zero)
        else:
            v[i] = _v(kind, actor, qvalues, t.next_observation[i], alpha)
        y[i] = r + gamma * v[i]
    return y, v


# ---------------------------------------------------------------- losses


def sac_losses(kind: str, actor, qvalues, t: Transitions, *, alpha: float, gamma: float,
               target_entropy: float, variant: str = "correct") -> SACTerms:
    """All three SAC losses of ``kind`` ("continuous" / "discrete") for the transitions."""
    if kind not in ("continuous", "discrete"):
        raise ValueError(f"kind must be 'continuous' or 'discrete', got {kind!r}")
    y, v = _targets(kind, actor, qvalues, t, alpha, gamma, variant)
    frozen = [_detached(qf) for qf in qvalues]
    q_terms, actor_terms, alpha_terms = [], [], []
    for i in range(len(t)):
        s, a = t.observation[i], t.action[i]
        if kind == "continuous":
            preds = [qf(s, a).reshape(()) for qf in qvalues]
            a_new, log_p = _continuous_draw(actor, s)
            q_new = torch.stack([functional_call(qf, w, (s, a_new)).reshape(())
                                 for qf, w in zip(qvalues, frozen, strict=True)]).min()
            actor_terms.append(alpha * log_p - q_new)
            alpha_terms.append(log_p.detach())
        else:
            preds = [(qf(s) * a).sum() for qf in qvalues]
            p, log_p = _discrete_policy(actor, s)
            q_all = torch.stack([functional_call(qf, w, (s,))
                                 for qf, w in zip(qvalues, frozen, strict=True)])
            actor_terms.append((p * (alpha * log_p - q_all.amin(0))).sum())
            alpha_terms.append((p * log_p).sum().detach())
        q_terms.append(sum((q - y[i]) ** 2 for q in preds))
    mean = lambda xs: torch.stack(xs).mean()  # noqa: E731
    loss_alpha = -math.log(alpha) * (mean(alpha_terms) + target_entropy)
    per_step = {"loss_actor": torch.stack(actor_terms), "loss_qvalue": torch.stack(q_terms),
                "loss_alpha": -math.log(alpha) * (torch.stack(alpha_terms) + target_entropy)}
    return SACTerms(mean(actor_terms), mean(q_terms), loss_alpha, y, v, per_step,
                    -float(mean(alpha_terms)))


def weighted(terms: SACTerms, row_weights: torch.Tensor, row: torch.Tensor,
             normalisation: str) -> tuple[dict[str, torch.Tensor], dict[str, float]]:
    """The losses of a batch with one importance weight per row (pytorch/rl#3235): per
    agent-step ``w_row(i) * t_i`` (what reduction "none" gives), and the weighted mean,
    normalised by the weights (``sum w t / sum w``) or by the count (``sum w t / M``)."""
    w = row_weights.to(torch.float64)[row]
    per_step = {k: (v.detach() * w) for k, v in terms.per_step.items()}
    if normalisation == "weights":
        norm = float(w.sum())
    elif normalisation == "count":
        norm = float(len(w))
    else:
        raise ValueError(f"normalisation must be 'weights' or 'count', got {normalisation!r}")
    return per_step, {k: float(v.sum()) / norm for k, v in per_step.items()}


# ---------------------------------------------------------------- known-wrong target rules

WRONG_VARIANTS = {
    "truncation_as_termination":
        "truncated (done but not terminated) transitions are not bootstrapped (zero next "
        "value): truncation is treated as termination (the skip mask is built from done "
        "instead of terminated)",
    "zero_action_at_truncation":
        "truncated next states are bootstrapped from a zero action with a zero log-prob "
        "(the rows masked out by done are zero-filled before the Q-network; pytorch/rl#2613)",
    "mask_broadcast_over_agents":
        "the done mask is broadcast over the agents of a row: one terminated agent zeroes the "
        "next value of every agent in that row",
}


def diagnose(kind: str, loss_qvalue: float, actor, qvalues, t: Transitions, *, alpha, gamma,
             target_entropy, rtol: float = 1e-7) -> str | None:
    """Name the known-wrong target rule that reproduces an observed loss_qvalue, if one does
    and the correct rule does not."""
    hits = []
    for variant, text in WRONG_VARIANTS.items():
        if kind == "discrete" and variant == "zero_action_at_truncation":
            continue  # a zero value for discrete SAC is the same as no bootstrap
        try:
            with torch.no_grad():
                wrong = sac_losses(kind, actor, qvalues, t, alpha=alpha, gamma=gamma,
                                   target_entropy=target_entropy, variant=variant).loss_qvalue
        except Exception:  # noqa: BLE001 - a variant undefined on this batch names nothing
            continue
        if math.isclose(float(wrong), loss_qvalue, rel_tol=rtol, abs_tol=1e-12):
            hits.append(text)
    return hits[0] if len(hits) == 1 else None


def flatten(observation, action, next_observation, reward, done, terminated) -> Transitions:
    """Per-agent-step view of a batch shaped [B, (N,) ...] (reward / done / terminated with a
    trailing singleton)."""
    lead = reward.shape[:-1]
    rows = torch.arange(lead[0]).reshape(-1, *([1] * (len(lead) - 1))).expand(lead)
    feat = lambda x: x.reshape(-1, x.shape[-1])  # noqa: E731
    return Transitions(
        observation=feat(observation), action=feat(action),
        next_observation=feat(next_observation), reward=reward.reshape(-1),
        done=done.reshape(-1).bool(), terminated=terminated.reshape(-1).bool(),
        row=rows.reshape(-1),
    )

