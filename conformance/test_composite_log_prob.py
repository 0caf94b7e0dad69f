"""§2 Log-prob stability of composite distributions.

The seed configuration (a user report on TorchRL 0.5.0): a probabilistic actor whose action is
the tree ``action -> {action1: Categorical(n=8), action2: Categorical(n=1)}``, declared with a
``distribution_map`` and a ``name_map`` into the nested keys, with ``return_log_prob=True``; and
a mixed variant where ``action2`` is an element-wise Normal over 2 dims.

The oracle (conformance/oracles/composite_log_prob.py) computes in float64, from the float32
inputs, each head's log-prob (``log_softmax(logits)[a]``; the Normal density summed over its
event dim) and the aggregate as their sum, one value per element of the distribution's batch
shape; gradients by float64 autograd through the same formulas.

Tolerances: float32 ``log_softmax`` loses about one ulp of the logits' magnitude, so an element
of a log-prob may differ from the oracle by ``16 * eps32 * (1 + |oracle| + sum_h max|logits_h|)``
(about 1e-5 for unit logits, 0.1 at |logit| = 1e4, where the log-probs are ~3e4); gradients by
``1e-5`` relative plus ``16 * eps32 * max|weight|``. Every historical bug is off by at least the
size of a log-prob. Exact checks: a head with n = 1 has log-prob 0, the PPO ratio of an
unchanged policy is 1 within ``4 * eps32`` (re-summation order only), categorical actions under
MODE/DETERMINISTIC are the argmax.
"""

from __future__ import annotations

import dataclasses

import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

from conformance import capabilities, device
from conformance._assertions import assert_close, message
from conformance.interface import (
    COMPOSITE_EXPLORATION_TYPES,
    COMPOSITE_MISCONFIGURATIONS,
    CompositeHead,
)
from conformance.oracles import composite_log_prob as oracle

RL_2402 = "https://github.com/pytorch/rl/issues/2402"
RL_2487 = "https://github.com/pytorch/rl/issues/2487"
TD_1054 = "https://github.com/pytorch/tensordict/pull/1054"
EPS32 = torch.finfo(torch.float32).eps
B, T = 16, 3


# ------------------------------------------------------------------ inputs

def seed_heads(batch=(B,), *, seed=0, scale=1.0) -> dict[str, CompositeHead]:
    """action1: Categorical(8), action2: Categorical(1); logits ~ scale * N(0, 2^2), float32."""
    g = torch.Generator().manual_seed(seed)
    return {
        "action1": CompositeHead("categorical", {"logits": scale * 2 * torch.randn(*batch, 8, generator=g)}),
        "action2": CompositeHead("categorical", {"logits": scale * 2 * torch.randn(*batch, 1, generator=g)}),
    }


def mixed_heads(batch=(B,), *, seed=0, scale=1.0) -> dict[str, CompositeHead]:
    """action1: Categorical(8), action2: element-wise Normal over d = 2."""
    g = torch.Generator().manual_seed(seed)
    return {
        "action1": CompositeHead("categorical", {"logits": scale * 2 * torch.randn(*batch, 8, generator=g)}),
        "action2": CompositeHead("normal", {"loc": torch.randn(*batch, 2, generator=g),
                                   "scale": 0.5 + torch.rand(*batch, 2, generator=g)}),
    }


HEADS = {"seed": seed_heads, "mixed": mixed_heads}


def describe(heads) -> str:
    return ", ".join(
        f"{h}: Categorical({x.params['logits'].shape[-1]})" if x.kind == "categorical"
        else f"{h}: Normal(d={x.params['loc'].shape[-1]})" for h, x in heads.items())


def magnitude(heads) -> torch.Tensor:
    """sum over categorical heads of max |logit|, per batch element (float64)."""
    total = 0.0
    for head in heads.values():
        if head.kind == "categorical":
            total = total + head.params["logits"].detach().double().abs().amax(-1)
    return torch.as_tensor(total, dtype=torch.float64)


def tolerance(heads, expected) -> torch.Tensor:
    return 16 * EPS32 * (1 + expected.abs() + magnitude(heads))


def leaf_heads(heads) -> dict[str, CompositeHead]:
    """The same heads with every parameter a fresh leaf that requires grad."""
    return {h: CompositeHead(x.kind, {k: v.detach().clone().requires_grad_(True) for k, v in x.params.items()})
            for h, x in heads.items()}



# ------------------------------------------------------------------ calling the implementation
# Heads, actions and advantages go to the run's device; what comes back returns to the CPU for
# the float64 oracle (conformance.device).

def _returned(got, call: str):
    """A CompositeLogProbs or CompositePPOStep with its tensors back on the CPU."""
    moved = {f.name: device.host(getattr(got, f.name), f"{call}.{f.name}")
             for f in dataclasses.fields(got) if f.name in ("actions", "head_log_probs",
                                                            "aggregate", "ratio")}
    return dataclasses.replace(got, **moved)


def actor(area, heads, **kwargs):
    return _returned(area.actor(device.put(heads), **kwargs), "actor()")


def log_prob(area, heads, actions, **kwargs):
    return _returned(area.log_prob(device.put(heads), device.put(actions), **kwargs),
                     "log_prob()")


def ppo_step(area, heads, *, advantage, **kwargs):
    return _returned(area.ppo_step(device.put(heads), advantage=device.put(advantage), **kwargs),
                     "ppo_step()")


def misconfigured_actor(area, heads, **kwargs):
    return _returned(area.misconfigured_actor(device.put(heads), **kwargs),
                     "misconfigured_actor()")


def ppo_step_changed(area, heads, new_heads, *, advantage, **kwargs):
    return _returned(area.ppo_step_changed(device.put(heads), device.put(new_heads),
                                           advantage=device.put(advantage), **kwargs),
                     "ppo_step_changed()")


def entropy_loss(area, heads, **kwargs) -> float:
    return float(device.host(area.entropy_loss(device.put(heads), **kwargs), "entropy_loss()"))

# ------------------------------------------------------------------ checks

def check_log_probs(got, heads, actions, *, params, sample_batch_shape=None, link=None):
    """Per-head log-probs and the aggregate of ``got`` against the oracle at ``actions``."""
    __tracebackhide__ = True
    squeezed = {h: oracle.batch_action(heads[h], actions[h]) for h in heads}
    per_head = oracle.per_head(heads, squeezed)
    for h, head in heads.items():
        if h not in got.head_log_probs:
            raise AssertionError(message(
                f"no log-prob written for head {h!r}", params=params, expected=f"a log-prob for {h!r}",
                actual=f"entries: {got.where.get('written', sorted(got.head_log_probs))}", link=link))
        lp = torch.as_tensor(got.head_log_probs[h]).detach().double()
        expected = per_head[h]
        if head.kind == "normal" and lp.shape == expected.shape + head.params["loc"].shape[-1:]:
            # stored element-wise (not reduced over the event dim): compared element-wise
            expected = oracle.head_log_prob("normal", head.params, squeezed[h], elementwise=True)
        if not bool(torch.isfinite(lp).all()):
            raise AssertionError(message(f"log-prob of head {h!r} is not finite", params=params,
                                         expected=expected.numpy(), actual=lp.numpy(), link=link))
        atol = tolerance({h: head}, expected)
        assert_close(f"log-prob of head {h!r} (read from {got.where.get(h, '?')}) != float64 oracle",
               lp, expected, atol=atol, params=params,
               cause=oracle.diagnose_head(lp, head, squeezed[h]) or (
                   "the head's log-prob is broadcast over the batch (rl#2487)"
                   if lp.ndim > expected.ndim else None), link=link)
    if got.aggregate is None:
        raise AssertionError(message("no aggregate log-prob", params=params,
                                     expected="the joint log-prob of the heads",
                                     actual=f"entries: {got.where.get('written', '?')}", link=link))
    expected = sum(per_head.values())
    agg = torch.as_tensor(got.aggregate).detach().double()
    cause = oracle.diagnose(agg, heads, actions, sample_batch_shape)
    if not bool(torch.isfinite(agg).all()):
        raise AssertionError(message("aggregate log-prob is not finite", params=params,
                                     expected=expected.numpy(), actual=agg.numpy(), cause=cause))
    assert_close(f"aggregate log-prob (read from {got.where.get('aggregate', '?')}) != sum of the heads' "
           "float64 log-probs", agg, expected, atol=tolerance(heads, expected), params=params,
           cause=cause, link=link or (RL_2487 if cause and "rl#2487" in cause else None))


def check_actions(got, heads, exploration, *, params):
    __tracebackhide__ = True
    for h, head in heads.items():
        if h not in got.actions:
            raise AssertionError(message(f"no action written at ('action', {h!r})", params=params,
                                         expected=f"a sample at ('action', {h!r})",
                                         actual=f"entries: {got.where.get('written', '?')}"))
        a = got.actions[h]
        if head.kind == "categorical":
            n = head.params["logits"].shape[-1]
            batch = head.params["logits"].shape[:-1]
            if a.shape != batch or a.is_floating_point() or not bool(((a >= 0) & (a < n)).all()):
                raise AssertionError(message(
                    f"action of categorical head {h!r} is not an index in [0, {n})", params=params,
                    expected=f"int64 of shape {tuple(batch)}", actual=a))
            if exploration in ("mode", "deterministic"):
                want = head.params["logits"].argmax(-1)
                if not torch.equal(a.long(), want):
                    raise AssertionError(message(
                        f"{exploration} action of categorical head {h!r} is not the argmax of its "
                        "logits", params=params, expected=want.numpy(), actual=a.numpy()))
        elif exploration in ("mode", "deterministic", "mean"):
            assert_close(f"{exploration} action of normal head {h!r} != loc", a.detach(),
                         head.params["loc"].detach(), params=params, rtol=0, atol=0)


# ------------------------------------------------------------------ the actor

def check_actor_run(area, heads, exploration, *, params, seed=0):
    """Run the actor under ``exploration`` and check what it wrote against the oracle; under
    MEAN, an error naming a categorical head (which has no mean) is accepted instead."""
    __tracebackhide__ = True
    if exploration not in area.exploration_types:
        raise AssertionError(message("exploration type not supported", params=params,
                                     expected=exploration, actual=area.exploration_types))
    try:
        got = actor(area, heads, exploration=exploration, seed=seed)
    except NotImplementedError:
        # judged by the plugin (not applicable only when the implementation declares it), never
        # taken for the "error naming the head" accepted below
        raise
    except Exception as exc:  # noqa: BLE001 - judged below
        text = f"{type(exc).__name__}: {exc}"
        categorical = [h for h, x in heads.items() if x.kind == "categorical"]
        if (exploration == "mean" and not isinstance(exc, IndexError) and "out of bounds" not in text
                and any(h in str(exc) for h in categorical)):
            return  # refused, naming the head that has no mean
        raise AssertionError(message(
            f"the actor raised under exploration={exploration}", params=params,
            expected="actions and log-probs" + (", or an error naming a categorical head"
                                                if exploration == "mean" and categorical else ""),
            actual=text.splitlines()[0][:300],
            cause=("Categorical has no mean: NaN actions reach log_prob and gather (rl#2402)"
                   if "out of bounds" in text else None),
            link=RL_2402)) from None
    check_actions(got, heads, exploration, params=params)
    check_log_probs(got, heads, got.actions, params=params)


@pytest.mark.parametrize("exploration", COMPOSITE_EXPLORATION_TYPES, ids=lambda e: f"exploration={e}")
@pytest.mark.parametrize("heads_name", list(HEADS), ids=lambda h: f"heads={h}")
def test_actor_log_probs_match_oracle(composite_log_prob, heads_name, exploration):
    """The actor writes an action and a log-prob per head plus the aggregate, equal to the
    oracle at the actions it wrote. MODE / DETERMINISTIC give the argmax (categorical) and loc
    (normal). A categorical head has no mean: under MEAN an implementation may raise an error
    naming that head, but never feed NaN to log_prob (the "index -9223372036854775808 is out
    of bounds" of rl#2402), and anything it returns must be right."""
    heads = HEADS[heads_name]()
    params = {"heads": describe(heads), "batch": (B,), "exploration": exploration, "seed": 0}
    check_actor_run(composite_log_prob, heads, exploration, params=params)


def normal_heads(batch=(B,), *, seed=0) -> dict[str, CompositeHead]:
    """action1: element-wise Normal over d = 2, action2: element-wise Normal over d = 3."""
    g = torch.Generator().manual_seed(seed)
    return {h: CompositeHead("normal", {"loc": torch.randn(*batch, d, generator=g),
                                        "scale": 0.5 + torch.rand(*batch, d, generator=g)})
            for h, d in (("action1", 2), ("action2", 3))}


def normal_first_heads(batch=(B,), *, seed=0) -> dict[str, CompositeHead]:
    """The mixed heads with the Normal listed first: action1 Normal(d=2), action2 Categorical(8)."""
    mixed = mixed_heads(batch, seed=seed)
    return {"action1": mixed["action2"], "action2": mixed["action1"]}


MEAN_HEADS = {"normal": normal_heads, "normal-first": normal_first_heads}


@pytest.mark.parametrize("heads_name", list(MEAN_HEADS), ids=lambda h: f"heads={h}")
def test_mean_exploration_with_normal_heads(composite_log_prob, heads_name):
    """ExplorationType.MEAN on a composite with no categorical head gives every Normal head's
    loc, bit for bit, and log-probs equal to the oracle there; with the Normal head listed
    first, the categorical head that follows it has no mean: an error naming it, or right
    actions and log-probs (never NaN fed to log_prob, rl#2402). Checked as the seed spec
    checks MEAN (``check_actor_run``)."""
    heads = MEAN_HEADS[heads_name](seed=8)
    params = {"heads": describe(heads), "batch": (B,), "exploration": "mean", "seed": 8}
    check_actor_run(composite_log_prob, heads, "mean", params=params, seed=8)


@pytest.mark.parametrize("exploration", ["random", "deterministic"], ids=lambda e: f"exploration={e}")
def test_single_category_head_has_log_prob_exactly_zero(composite_log_prob, exploration):
    """A head with n = 1 always takes action 0 with probability 1: its log-prob is exactly 0,
    from the actor and from scoring the sample, whatever its logit (here up to ~|8|)."""
    heads = seed_heads()
    params = {"heads": describe(heads), "exploration": exploration}
    got = actor(composite_log_prob, heads, exploration=exploration, seed=1)
    scored = log_prob(composite_log_prob, heads, got.actions, sample_batch_shape=(B,))
    head = heads["action2"]
    # one log-prob per sample: an empty or broadcast tensor is not "exactly zero"
    zeros = torch.zeros_like(oracle.head_log_prob(
        head.kind, head.params, oracle.batch_action(head, got.actions["action2"])))
    for source, out in (("actor", got), ("log_prob(sample)", scored)):
        lp = out.head_log_probs.get("action2")
        if lp is None:
            raise AssertionError(message(
                f"no log-prob of the n=1 head 'action2' from the {source}", params=params,
                expected=zeros.numpy(), actual=None))
        assert_close(f"log-prob of the n=1 head 'action2' from the {source} is not exactly 0", lp,
                     zeros, params=params, rtol=0, atol=0,
                     cause=oracle.diagnose_head(lp, head, got.actions["action2"]))


@pytest.mark.parametrize("scale", [1e2, 1e4], ids=lambda s: f"logits~{s:g}")
def test_extreme_logits_are_finite_and_match_oracle(composite_log_prob, scale):
    """Logits of magnitude up to ~``scale`` in float32. The least likely action of every head
    has a log-prob of order -2 * scale (about -3e4 at 1e4): finite and equal to the oracle
    within float32 resolution; the actor's own samples too."""
    heads = seed_heads(scale=scale / 8, seed=2)  # |N(0, 2^2)| * scale / 8 stays below ~scale
    params = {"heads": describe(heads), "max|logit|": float(magnitude(heads).max()), "seed": 2}
    worst = {h: oracle.least_likely(x.params["logits"]) for h, x in heads.items()}
    check_log_probs(log_prob(composite_log_prob, heads, worst, sample_batch_shape=(B,)),
                    heads, worst, params={**params, "actions": "least likely"})
    for exploration in ("random", "mode"):
        got = actor(composite_log_prob, heads, exploration=exploration, seed=2)
        check_log_probs(got, heads, got.actions, params={**params, "exploration": exploration})


@pytest.mark.parametrize("batch", [(B,), (B, T)], ids=lambda b: f"batch={list(b)}")
@pytest.mark.parametrize("heads_name", list(HEADS), ids=lambda h: f"heads={h}")
def test_batch_shapes(composite_log_prob, heads_name, batch):
    """Batches (B,) and (B, T): actions and log-probs have the batch shape (a Normal head's
    per-head log-prob may keep its event dim), from the actor and from scoring its sample."""
    heads = HEADS[heads_name](batch, seed=3)
    params = {"heads": describe(heads), "batch": batch, "seed": 3}
    got = actor(composite_log_prob, heads, exploration="random", seed=3)
    check_actions(got, heads, "random", params=params)
    check_log_probs(got, heads, got.actions, params={**params, "source": "actor"})
    scored = log_prob(composite_log_prob, heads, got.actions, sample_batch_shape=batch)
    check_log_probs(scored, heads, got.actions, params={**params, "source": "log_prob(sample)"})


# ------------------------------------------------------------------ rl#2487

SAMPLE_LAYOUTS = {
    # name: (distribution batch, sample tensordict batch, store categorical actions as [*, 1])
    "sample-batch=[]": ((B,), (), False),
    "sample-batch=[B]-of-[B,T]": ((B, T), (B,), False),
    "trailing-singleton": ((B,), (B,), True),
    # a [B, 2] batch (two agents, say) whose categorical actions are stored as [B, 2, 1]: the
    # singleton is the last dim after a batch dim of size 2, not after one of size 1
    "trailing-singleton-batch=[B,2]": ((B, 2), (B, 2), True),
}


@pytest.mark.parametrize("layout", list(SAMPLE_LAYOUTS))
@pytest.mark.parametrize("heads_name", list(HEADS), ids=lambda h: f"heads={h}")
def test_aggregate_does_not_depend_on_the_sample_tensordict(composite_log_prob, heads_name, layout):
    """The joint log-prob has the distribution's batch shape, whatever tensordict the sample
    arrives in: a sample tensordict with batch_size [] holding [B] actions must not be summed
    over the batch; one of batch [B] holding [B, T] actions (a MARL sub-tensordict with fewer
    batch dims) must not be summed over T; a categorical action stored as [B, 1] must not be
    broadcast against the [B, n] logits into [B, B] (the -200/-300 log-probs of rl#2487), nor
    one stored as [B, 2, 1] under a [B, 2] batch."""
    dist_batch, sample_batch, trailing = SAMPLE_LAYOUTS[layout]
    heads = HEADS[heads_name](dist_batch, seed=4)
    g = torch.Generator().manual_seed(4)
    actions = {}
    for h, x in heads.items():
        if x.kind == "categorical":
            a = torch.randint(x.params["logits"].shape[-1], dist_batch, generator=g)
            actions[h] = a.unsqueeze(-1) if trailing else a
        else:
            actions[h] = x.params["loc"] + x.params["scale"] * torch.randn(x.params["loc"].shape, generator=g)
    params = {"heads": describe(heads), "distribution batch": dist_batch,
              "sample tensordict batch": sample_batch,
              "stored categorical action": "[*batch, 1]" if trailing else "[*batch]", "seed": 4}
    link = TD_1054 if layout == "sample-batch=[B]-of-[B,T]" else RL_2487
    try:
        got = log_prob(composite_log_prob, heads, actions, sample_batch_shape=sample_batch)
    except NotImplementedError:
        raise  # judged by the plugin
    except Exception as exc:  # noqa: BLE001 - a readable failure instead of a traceback
        text = f"{type(exc).__name__}: {exc}"
        raise AssertionError(message(
            "scoring the sample raised", params=params, expected="per-head and joint log-probs",
            actual=text.splitlines()[0][:300],
            cause=("the stored [*batch, 1] action is broadcast against the logits (rl#2487)"
                   if trailing and "size of tensor" in text else None), link=link)) from None
    check_log_probs(got, heads, actions, params=params, sample_batch_shape=sample_batch, link=link)


# ------------------------------------------------------------------ edge inputs (issue #31)

S = 3  # leading sample dims [S, B]: S != B, so no sample dim is mistaken for the batch


def leading_sample_heads(*, seed) -> dict[str, CompositeHead]:
    """action1: Categorical(8), action2: Normal over d = 1 (its own shape ends in 1, like a
    stored trailing singleton: only the batch shape tells them apart)."""
    g = torch.Generator().manual_seed(seed)
    return {
        "action1": CompositeHead("categorical", {"logits": 2 * torch.randn(B, 8, generator=g)}),
        "action2": CompositeHead("normal", {"loc": torch.randn(B, 1, generator=g),
                                            "scale": 0.5 + torch.rand(B, 1, generator=g)}),
    }


def test_actions_with_leading_sample_dims(composite_log_prob):
    """S samples of every head ([S, B] categorical indices, [S, B, 1] Normal values) in a
    sample tensordict of batch [S, B], scored under a distribution of batch [B]: one log-prob
    per sample and batch element ([S, B]) per head and in the aggregate, each sample scored
    against its own batch row (oracle: the float64 formulas applied to each sample s)."""
    heads = leading_sample_heads(seed=9)
    g = torch.Generator().manual_seed(9)
    normal = heads["action2"].params
    actions = {"action1": torch.randint(8, (S, B), generator=g),
               "action2": normal["loc"] + normal["scale"] * torch.randn(S, B, 1, generator=g)}
    params = {"heads": describe(heads), "distribution batch": (B,), "sample batch": (S, B),
              "seed": 9}
    try:
        got = log_prob(composite_log_prob, heads, actions, sample_batch_shape=(S, B))
    except NotImplementedError:
        raise  # judged by the plugin
    except Exception as exc:  # noqa: BLE001 - a readable failure instead of a traceback
        raise AssertionError(message(
            "scoring [S, B] samples raised", params=params,
            expected="per-head and joint log-probs of shape [S, B]",
            actual=f"{type(exc).__name__}: {str(exc).splitlines()[0][:300] if str(exc) else ''}"
        )) from None
    per_sample = [oracle.per_head(heads, {h: a[s] for h, a in actions.items()}) for s in range(S)]
    expected = {h: torch.stack([lp[h] for lp in per_sample]) for h in heads}
    for h, head in heads.items():
        lp = got.head_log_probs.get(h)
        if lp is None:
            raise AssertionError(message(f"no log-prob written for head {h!r}", params=params,
                                         expected=f"a log-prob for {h!r} of shape {(S, B)}",
                                         actual=f"entries: {sorted(got.head_log_probs)}"))
        lp = torch.as_tensor(lp).detach().double()
        want = expected[h]
        if head.kind == "normal" and lp.shape == want.shape + (1,):
            want = want.unsqueeze(-1)  # stored element-wise over its d = 1
        cause = next(filter(None, (oracle.diagnose_head(lp[s], head, actions[h][s])
                                   for s in range(S) if lp.shape[:1] == (S,))), None)
        assert_close(f"log-prob of head {h!r} of [S, B] samples (read from {got.where.get(h, '?')}) "
                     "!= float64 oracle per sample", lp, want,
                     atol=tolerance({h: head}, want.squeeze(-1) if want.ndim == 3 else want)
                     .reshape(want.shape), params=params, cause=cause)
    total = sum(expected.values())
    if got.aggregate is None:
        raise AssertionError(message("no aggregate log-prob", params=params,
                                     expected="the joint log-prob [S, B]", actual=None))
    agg = torch.as_tensor(got.aggregate).detach().double()
    cause = (next(filter(None, (oracle.diagnose(agg[s], heads, {h: a[s] for h, a in actions.items()})
                                for s in range(S))), None) if agg.shape == (S, B) else None)
    assert_close(f"aggregate log-prob of [S, B] samples (read from {got.where.get('aggregate', '?')}) "
                 "!= sum of the heads' float64 log-probs", agg, total,
                 atol=tolerance(heads, total), params=params, cause=cause)


@pytest.mark.parametrize("bad", ["n", "-1"], ids=lambda b: f"action={b}")
def test_out_of_range_categorical_action_is_refused_naming_the_head(composite_log_prob, bad):
    """Scoring a categorical action outside [0, n) (one batch element set to n, or to -1) is
    refused with a ValueError whose message names the head: ValueError is what
    torch.distributions raises for a value outside the support when it validates, so a
    caller's ``except ValueError`` works either way; never a log-prob (a gather past the end,
    or a wrapped -1 scoring the last category), and never the "index ... is out of bounds"
    of a gather, which names neither the head nor the action (rl#2402)."""
    heads = mixed_heads(seed=10)
    n = heads["action1"].params["logits"].shape[-1]
    g = torch.Generator().manual_seed(10)
    categorical = torch.randint(n, (B,), generator=g)
    categorical[5] = n if bad == "n" else -1
    normal = heads["action2"].params
    actions = {"action1": categorical, "action2": normal["loc"].detach().clone()}
    params = {"heads": describe(heads), "action1[5]": int(categorical[5]), "n": n, "seed": 10}
    expected = "a ValueError naming the head 'action1'"
    try:
        got = log_prob(composite_log_prob, heads, actions, sample_batch_shape=(B,))
    except NotImplementedError:
        raise  # judged by the plugin, never taken for a refusal
    except Exception as exc:  # noqa: BLE001 - judged below
        text = str(exc)
        if isinstance(exc, ValueError) and "action1" in text and "out of bounds" not in text:
            return
        raise AssertionError(message(
            "an out-of-range categorical action is not refused with a ValueError naming its head",
            params=params, expected=expected,
            actual=f"{type(exc).__name__}: {text.splitlines()[0][:300] if text else ''}",
            cause=("the action reached gather unchecked (rl#2402)" if "out of bounds" in text
                   else None), link=RL_2402)) from None
    raise AssertionError(message(
        "an out-of-range categorical action was scored", params=params, expected=expected,
        actual=f"log-probs {got.head_log_probs.get('action1')}, aggregate {got.aggregate}",
        link=RL_2402))


def test_sample_without_a_head_is_refused_naming_it(composite_log_prob):
    """A sample holding the action of 'action1' only, scored by the composite of 'action1' and
    'action2': a KeyError that names the missing head and the entries the sample does hold
    (so the user sees where the action went), never a log-prob of the heads that are there."""
    heads = mixed_heads(seed=11)
    actions = {"action1": heads["action1"].params["logits"].argmax(-1)}
    params = {"heads": describe(heads), "sample holds": "('action', 'action1')", "seed": 11}
    expected = "a KeyError naming 'action2' and the entry ('action', 'action1') the sample holds"
    try:
        got = log_prob(composite_log_prob, heads, actions, sample_batch_shape=(B,))
    except NotImplementedError:
        raise  # judged by the plugin, never taken for a refusal
    except Exception as exc:  # noqa: BLE001 - judged below
        text = str(exc)
        if isinstance(exc, KeyError) and "action2" in text and "action1" in text:
            return
        raise AssertionError(message(
            "a sample without a head's action is not refused with a KeyError naming the head and "
            "what the sample holds", params=params, expected=expected,
            actual=f"{type(exc).__name__}: {text.splitlines()[0][:300] if text else ''}"
        )) from None
    raise AssertionError(message(
        "a sample without a head's action was scored", params=params, expected=expected,
        actual=f"aggregate {got.aggregate}"))


@pytest.fixture
def declared_keys(request, impl, composite_log_prob):
    return capabilities.require(request, impl, "composite_log_prob", composite_log_prob,
                                "actor_out_keys")


@pytest.mark.parametrize("heads_name", list(HEADS), ids=lambda h: f"heads={h}")
def test_actor_declares_the_keys_it_writes(declared_keys, heads_name):
    """The actor's ``out_keys`` name every head's sample key, ``("action", head)``, as its
    name_map writes them: what a collector, a loss or an environment's spec check reads to
    find the action, whatever distribution class (tensordict's, or a subclass of it) the
    actor was given. Declaring ``"action"`` alone (TorchRL's default for a distribution class
    it does not recognise as composite) does not name them."""
    heads = HEADS[heads_name](seed=13)
    declared = declared_keys.actor_out_keys(heads)
    params = {"heads": describe(heads), "name_map": {h: ("action", h) for h in heads}}
    missing = [("action", h) for h in heads
               if ("action", h) not in [k if isinstance(k, str) else tuple(k) for k in declared]]
    if missing:
        raise AssertionError(message(
            "the actor's out_keys do not name the keys its samples are written to", params=params,
            expected=f"out_keys including {[('action', h) for h in heads]}",
            actual=f"out_keys {declared}; missing {missing}"))


@pytest.fixture
def with_sum(request, impl, composite_log_prob):
    return capabilities.require(request, impl, "composite_log_prob", composite_log_prob,
                                "log_prob_with_sum")


@pytest.mark.parametrize("in_place", [True, False],
                         ids=lambda p: "mode=in-place" if p else "mode=include_sum")
@pytest.mark.parametrize("heads_name", list(HEADS), ids=lambda h: f"heads={h}")
def test_log_prob_composite_includes_the_sum(with_sum, heads_name, in_place):
    """``log_prob_composite`` gives the per-head log-probs and, asked for it, their sum at the
    distribution's log-prob key in one call: under ``set_composite_lp_aggregate(True)`` by
    default and in the sample itself, or with ``include_sum=True`` in a new tensordict under
    ``False`` (its default). Both equal the oracle; a sum left out, or written to the returned
    tensordict when the caller reads the sample, fails as "no aggregate log-prob" / "no
    log-prob written"."""
    heads = HEADS[heads_name](seed=12)
    g = torch.Generator().manual_seed(12)
    actions = {h: (torch.randint(x.params["logits"].shape[-1], (B,), generator=g)
                   if x.kind == "categorical" else
                   x.params["loc"] + x.params["scale"] * torch.randn(B, 2, generator=g))
               for h, x in heads.items()}
    params = {"heads": describe(heads), "mode": "in place" if in_place else "include_sum=True",
              "seed": 12}
    got = _returned(with_sum.log_prob_with_sum(device.put(heads), device.put(actions),
                                               in_place=in_place), "log_prob_with_sum()")
    check_log_probs(got, heads, actions, params=params)


# ------------------------------------------------------------------ gradients

GRADIENT_CASES = {
    # name: (heads, path, actions)
    "seed-log_prob": ("seed", "log_prob", "random"),
    "mixed-log_prob": ("mixed", "log_prob", "random"),
    "extreme-log_prob": ("extreme", "log_prob", "least likely"),
    "seed-actor": ("seed", "actor", "sampled"),
}


@pytest.mark.parametrize("case", list(GRADIENT_CASES))
def test_gradients_match_oracle(composite_log_prob, case):
    """d sum_i w_i * aggregate_i / d params (w seeded, of both signs) is finite and equals the
    oracle's float64 autograd, through scoring a sample and through the actor's own log-prob
    (categorical heads: the sampled action does not depend on the logits)."""
    heads_name, path, which = GRADIENT_CASES[case]
    base = seed_heads(seed=5, scale=1e4 / 8) if heads_name == "extreme" else HEADS[heads_name](seed=5)
    heads = leaf_heads(base)
    g = torch.Generator().manual_seed(5)
    weights = torch.randn(B, generator=g)
    params = {"heads": describe(heads), "path": path, "actions": which, "seed": 5}
    if path == "actor":
        got = actor(composite_log_prob, heads, exploration="random", seed=5)
        actions = got.actions
    else:
        if which == "least likely":
            actions = {h: oracle.least_likely(x.params["logits"]) for h, x in heads.items()}
        else:
            actions = {h: (torch.randint(x.params["logits"].shape[-1], (B,), generator=g)
                           if x.kind == "categorical" else
                           (x.params["loc"] + x.params["scale"] * torch.randn(B, 2, generator=g)).detach())
                       for h, x in heads.items()}
        got = log_prob(composite_log_prob, heads, actions, sample_batch_shape=(B,))
    if got.aggregate is None or not got.aggregate.requires_grad:
        raise AssertionError(message("the aggregate log-prob is not attached to the parameters' graph",
                                     params=params, expected="a tensor with grad_fn",
                                     actual=got.aggregate))
    cause = oracle.diagnose(got.aggregate.detach(), heads, actions)
    (got.aggregate.reshape(B) * weights).sum().backward()
    expected = oracle.gradients(base, {h: a.detach() for h, a in actions.items()}, weights)
    for h, x in heads.items():
        for k, leaf in x.params.items():
            grad = leaf.grad if leaf.grad is not None else torch.zeros_like(leaf)
            e = expected[h][k]
            if not bool(torch.isfinite(grad).all()):
                raise AssertionError(message(f"gradient w.r.t. {h}.{k} is not finite", params=params,
                                             expected=e.numpy(), actual=grad.numpy()))
            atol = 1e-5 * e.abs() + 16 * EPS32 * float(weights.abs().max()) * (1 + e.abs())
            assert_close(f"d aggregate / d {h}.{k} != float64 autograd of the oracle", grad, e, atol=atol,
                   params=params, cause=cause)


# ------------------------------------------------------------------ PPO

@pytest.mark.parametrize("stored", ["as-sampled", "trailing-singleton"])
@pytest.mark.parametrize("heads_name", list(HEADS), ids=lambda h: f"heads={h}")
def test_ppo_ratio_of_unchanged_policy_is_one(composite_log_prob, heads_name, stored):
    """Data collected by the policy and evaluated by a clipped PPO loss for the same, unchanged
    policy: the log-prob written at collection and the one recomputed by the loss agree, so the
    importance ratio is 1 (within 4 eps32) and the clipped objective is -mean(advantage), not
    zero (the "log_weight.exp() * advantage is all zero" of rl#2487). Categorical actions are
    stored as sampled, or with a trailing singleton dim as an action spec of shape (1,) stores
    them. Advantages: seeded N(0.5, 1), of both signs, |mean| > 0.1."""
    heads = HEADS[heads_name](seed=6)
    g = torch.Generator().manual_seed(6)
    advantage = 0.5 + torch.randn(B, 1, generator=g)
    assert abs(float(advantage.mean())) > 0.1
    params = {"heads": describe(heads), "stored actions": stored, "clip_epsilon": 0.2, "seed": 6}
    step = ppo_step(composite_log_prob, heads, advantage=advantage, clip_epsilon=0.2, seed=6,
                                       trailing_singleton=stored == "trailing-singleton")
    if step.ratio is not None:
        ratio = torch.as_tensor(step.ratio).detach().double()
        cause = oracle.diagnose_ratio(ratio, heads, step.actions) if ratio.numel() == B else None
        if cause is None and ratio.numel() and bool((ratio == 0).all()):
            cause = "the recomputed log-prob is far below the stored one: exp() underflows to 0"
        assert_close("importance ratio exp(log_prob - stored log_prob) of an unchanged policy != 1",
               ratio, torch.ones(B, dtype=torch.float64), atol=torch.full((B,), 4 * EPS32),
               params=params, cause=cause, link=RL_2487)
    expected = -float(advantage.double().mean())
    if step.objective == 0.0:
        raise AssertionError(message("the clipped PPO objective is zero with non-zero advantages",
                                     params=params, expected=expected, actual=step.objective,
                                     cause="the ratio underflowed to 0 (rl#2487)", link=RL_2487))
    assert_close("loss_objective of an unchanged policy != -mean(advantage)", step.objective,
                 expected, params=params, rtol=1e-5, atol=1e-6, link=RL_2487)


# ------------------------------------------------------------------ misconfiguration

OFFENDING_KEY = {
    "flat_spec": "action1",
    "no_name_map": "action1",
    "name_map_missing_head": "action2",
    "name_map_unknown_key": "actionX",
    "missing_params": "action3",
}


@pytest.mark.parametrize("fault", list(COMPOSITE_MISCONFIGURATIONS))
def test_misconfigured_actor_names_the_key(composite_log_prob, fault):
    """A misconfigured actor is refused with an error whose message names the offending key:
    never an index error from deep inside log_prob (rl#2402), never an actor that runs and
    writes samples or log-probs somewhere other than declared."""
    heads = seed_heads(seed=7)
    key = OFFENDING_KEY[fault]
    params = {"fault": COMPOSITE_MISCONFIGURATIONS[fault]}
    try:
        got = misconfigured_actor(composite_log_prob, heads, fault=fault)
    except NotImplementedError:
        raise  # judged by the plugin, never taken for a refusal that names the key
    except Exception as exc:  # noqa: BLE001 - judged below
        text = str(exc)
        if isinstance(exc, IndexError) or "out of bounds" in text or key not in text:
            raise AssertionError(message(
                "the error for a misconfigured actor does not name the offending key",
                params=params, expected=f"an error naming {key!r}",
                actual=f"{type(exc).__name__}: {text.splitlines()[0][:300] if text else ''}",
                cause="an index error from log_prob (rl#2402)" if "out of bounds" in text else None,
                link=RL_2402)) from None
        return
    raise AssertionError(message(
        "a misconfigured actor was accepted", params=params,
        expected=f"an error naming {key!r}", actual=f"it ran and wrote: {got.where.get('written', '?')}",
        cause="the name_map / out_keys / spec are not checked against each other", link=RL_2402))


# ------------------------------------------------------------------ property-based (hypothesis)

@st.composite
def composite_cases(draw):
    batch = tuple(draw(st.lists(st.integers(1, 5), min_size=1, max_size=2), label="batch"))
    sizes = draw(st.lists(st.integers(1, 10), min_size=1, max_size=3), label="categories")
    scale = draw(st.sampled_from([1e-3, 1.0, 30.0, 1e3, 1e4]), label="logit scale")
    normal = draw(st.booleans(), label="with a normal head")
    seed = draw(st.integers(0, 2**16), label="seed")
    return batch, sizes, scale, normal, seed


@given(case=composite_cases())
def test_property_log_prob_matches_oracle(composite_log_prob, case):
    """Random head counts and sizes (n = 1 .. 10), logit scales 1e-3 .. 1e4, batch ranks 1-2,
    with or without a Normal head: per-head log-probs and the aggregate of a sample equal the
    oracle."""
    batch, sizes, scale, normal, seed = case
    g = torch.Generator().manual_seed(seed)
    heads, actions = {}, {}
    for i, n in enumerate(sizes):
        logits = scale * torch.randn(*batch, n, generator=g)
        heads[f"h{i}"] = CompositeHead("categorical", {"logits": logits})
        actions[f"h{i}"] = torch.randint(n, batch, generator=g)
    if normal:
        loc, sd = torch.randn(*batch, 3, generator=g), 0.1 + torch.rand(*batch, 3, generator=g)
        heads["n"] = CompositeHead("normal", {"loc": loc, "scale": sd})
        actions["n"] = loc + sd * torch.randn(*batch, 3, generator=g)
    got = log_prob(composite_log_prob, heads, actions, sample_batch_shape=batch)
    check_log_probs(got, heads, actions, params={"heads": describe(heads), "batch": batch,
                                                 "logit scale": scale, "seed": seed})
