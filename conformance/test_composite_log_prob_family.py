"""§2 family: PPO on a composite policy beyond the unchanged policy at a flat batch.

- The importance ratio after the policy *changed* (the case training is made of), at batch
  shapes ``[B]``, ``[B, T]`` (time) and ``[B, N_agents]``: one ratio per sample,
  ``exp(sum_h log pi_new(a_h) - sum_h log pi_old(a_h))``, the log-weights summed over the heads
  (pytorch/rl#2791) and shaped like the advantage (pytorch/rl#2756), and the clipped objective
  computed from it.
- The entropy bonus of a composite policy with one coefficient, or one per head
  (``entropy_coeff={head: c}``), each head's entropy summed over its own dimensions; the heads
  live under the nested ``"action"`` key (pytorch/rl#3101 fixed per-head coefficients for
  nested keys).

Oracle: ``conformance/oracles/composite_log_prob.py`` (float64 closed forms: log-probs,
entropies, the clipped objective), on the actions the implementation stored. Every input is
seeded; tolerances are float32 rounding of the heads' log-probs (``tolerance`` of the seed file).
"""

from __future__ import annotations

import pytest
import torch

from conformance import capabilities
from conformance._assertions import assert_close, message
from conformance.interface import CompositeHead
from conformance.oracles import composite_log_prob as oracle
from conformance.test_composite_log_prob import (
    HEADS,
    describe,
    entropy_loss,
    ppo_step_changed,
    tolerance,
)

RL_2756 = "https://github.com/pytorch/rl/pull/2756"
RL_2791 = "https://github.com/pytorch/rl/pull/2791"
RL_3101 = "https://github.com/pytorch/rl/pull/3101"
B, T, N = 8, 5, 3
BATCHES = {"[B]": (B,), "[B,T]": (B, T), "[B,N_agents]": (B, N)}
CLIP = 0.2
ELEMENTWISE = ("with per-head coefficients each head's entropy is weighted as it comes, not "
               "reduced to the batch shape first: a Normal head's element-wise entropy "
               "[*batch, d] is broadcast against the other heads' (averaged over d, or a shape "
               "error) instead of summed over d")


def changed(heads: dict[str, CompositeHead], seed: int) -> dict[str, CompositeHead]:
    """The same heads after a policy update: every parameter moved by a seeded step (scales
    stay positive), small enough that some ratios stay inside the clip range."""
    g = torch.Generator().manual_seed(seed)
    out = {}
    for h, head in heads.items():
        params = {}
        for k, v in head.params.items():
            step = 0.15 * torch.randn(v.shape, generator=g)
            params[k] = v * torch.exp(step) if k == "scale" else v + step
        out[h] = CompositeHead(head.kind, params)
    return out


def _batch_action(head, action):
    return oracle.batch_action(head, torch.as_tensor(action))


@pytest.fixture
def ppo_changed(request, impl, composite_log_prob):
    return capabilities.require(request, impl, "composite_log_prob", composite_log_prob,
                                "ppo_step_changed")


@pytest.fixture
def entropy(request, impl, composite_log_prob):
    return capabilities.require(request, impl, "composite_log_prob", composite_log_prob,
                                "entropy_loss")


@pytest.mark.parametrize("batch", list(BATCHES), ids=lambda b: f"batch={b}")
@pytest.mark.parametrize("heads_name", list(HEADS), ids=lambda h: f"heads={h}")
def test_ppo_ratio_of_a_changed_policy(ppo_changed, heads_name, batch):
    """Collected under the old policy, evaluated under the new one: the ratio per sample is
    exp of the summed per-head log-prob differences of the stored actions, and the clipped
    objective is the oracle's from those ratios."""
    shape = BATCHES[batch]
    old = HEADS[heads_name](shape, seed=31)
    new = changed(old, seed=32)
    g = torch.Generator().manual_seed(33)
    advantage = 0.5 + torch.randn(*shape, 1, generator=g)
    params = {"heads": describe(old), "batch": shape, "clip_epsilon": CLIP, "seed": 31}
    step = ppo_step_changed(ppo_changed, old, new, advantage=advantage, clip_epsilon=CLIP,
                                        seed=31)
    actions = {h: _batch_action(old[h], step.actions[h]) for h in old}
    log_new, log_old = oracle.aggregate(new, actions), oracle.aggregate(old, actions)
    want = (log_new - log_old).exp()
    tol = want * (tolerance(new, log_new) + tolerance(old, log_old))
    if step.ratio is not None:
        ratio = torch.as_tensor(step.ratio).detach().double()
        if ratio.shape != want.shape:
            raise AssertionError(message(
                "importance ratio is not one value per sample", params=params,
                expected=tuple(want.shape), actual=tuple(ratio.shape),
                cause="the log-weight was not reshaped to the advantage's batch shape (a "
                      "composite log-prob keeps its heads' shapes)", link=RL_2756))
        per_head = {h: (oracle.head_log_prob(new[h].kind, new[h].params, actions[h])
                        - oracle.head_log_prob(old[h].kind, old[h].params, actions[h])).exp()
                    for h in old}
        wrong = {f"head {h!r}'s alone": r for h, r in per_head.items()}
        wrong["exp of their mean"] = ((log_new - log_old) / len(old)).exp()
        cause = next((f"the ratio is {what}: the log-weights were not summed over the heads"
                      for what, r in wrong.items()
                      if torch.allclose(ratio, r, rtol=1e-4) and not torch.allclose(r, want)),
                     None)
        assert_close("importance ratio of a changed policy != exp(sum_h log pi_new - "
                     "sum_h log pi_old)", ratio, want, atol=tol, params=params, cause=cause,
                     link=RL_2791)
    expected = oracle.clipped_objective(want, advantage, CLIP)
    assert_close("loss_objective of a changed policy != clipped PPO objective of the oracle's "
                 "ratios", step.objective, expected, rtol=1e-4, atol=1e-5, params=params,
                 link=RL_2791)


@pytest.mark.parametrize("coeff", ["one", "per-head"], ids=lambda c: f"coeff={c}")
@pytest.mark.parametrize("batch", ["[B]", "[B,T]"], ids=lambda b: f"batch={b}")
@pytest.mark.parametrize("heads_name", list(HEADS), ids=lambda h: f"heads={h}")
def test_entropy_bonus_of_a_composite_policy(entropy, heads_name, batch, coeff):
    """loss_entropy == -mean(sum_h c_h H_h), with c one value (0.01) or one per head (0.01,
    0.03): the closed-form entropies of the heads under the nested "action" key."""
    heads = HEADS[heads_name](BATCHES[batch], seed=41)
    c = 0.01 if coeff == "one" else {h: 0.01 * (1 + 2 * i) for i, h in enumerate(heads)}
    params = {"heads": describe(heads), "batch": BATCHES[batch], "entropy_coeff": c}
    try:
        got = entropy_loss(entropy, heads, coeff=c, seed=41)
    except (AssertionError, NotImplementedError):
        raise
    except Exception as exc:  # noqa: BLE001 - a loss that raises fails the spec, readably
        raise AssertionError(message(
            "the PPO loss with an entropy bonus raised", params=params,
            expected="loss_entropy", actual=f"{type(exc).__name__}: {str(exc).splitlines()[0]}",
            cause=_raised_cause(exc, coeff), link=RL_3101)) from None
    expected = oracle.entropy_loss(heads, c)
    broadcast = oracle.entropy_loss_broadcast(heads, c)
    cause = (ELEMENTWISE if abs(got - broadcast) <= 1e-5 * abs(broadcast)
             and abs(broadcast - expected) > 1e-5 * abs(expected) else None)
    assert_close("loss_entropy of a composite policy != -mean(sum_h c_h H_h)", got, expected,
                 rtol=1e-5, atol=1e-7, params=params, cause=cause, link=RL_3101)


def _raised_cause(exc: Exception, coeff: str) -> str | None:
    if coeff != "per-head":
        return None
    if isinstance(exc, KeyError):
        return ("per-head coefficients are looked up by the top-level key of the entropy "
                "('action'), not by the nested key of each head")
    return ELEMENTWISE


def test_entropy_coefficients_missing_a_head_are_refused_naming_it(entropy):
    """Per-head entropy coefficients that leave a head out are refused with a KeyError naming
    that head: a bonus computed without it, or an error naming nothing, leaves the user
    guessing which key is missing."""
    heads = HEADS["seed"]((B,), seed=41)
    missing = list(heads)[-1]
    c = {h: 0.01 for h in list(heads)[:-1]}
    params = {"heads": describe(heads), "entropy_coeff": c, "missing": missing}
    try:
        got = entropy_loss(entropy, heads, coeff=c, seed=41)
    except KeyError as exc:
        if missing not in str(exc):
            raise AssertionError(message(
                "the error for a missing entropy coefficient does not name the head",
                params=params, expected=f"a KeyError naming {missing!r}",
                actual=f"KeyError: {str(exc)[:200]}", link=RL_3101)) from None
        return
    except (AssertionError, NotImplementedError):
        raise
    except Exception as exc:  # noqa: BLE001 - any other error fails the spec, readably
        raise AssertionError(message(
            "a missing entropy coefficient raised something else than a KeyError naming the "
            "head", params=params, expected=f"KeyError naming {missing!r}",
            actual=f"{type(exc).__name__}: {str(exc).splitlines()[0][:200]}",
            link=RL_3101)) from None
    raise AssertionError(message(
        "per-head entropy coefficients that leave a head out were accepted", params=params,
        expected=f"KeyError naming {missing!r}", actual=f"loss_entropy {got}", link=RL_3101))
