"""§4 options: value clipping with TorchRL's other critic options, as a user passes them.

The seed specs reach ``ClipPPOLoss`` with a float threshold and read its loss and clip
fraction. A TorchRL user also:

- passes ``clip_value`` as a scalar tensor (TorchRL's constructors accept one), or something
  that is no threshold at all (NaN, a tensor of two, a negative tensor, a string): a tensor
  must clip like the float, the rest must be refused with a ValueError naming ``clip_value``;
- reads ``"explained_variance"`` from the loss's output (``log_explained_variance=True``, the
  default): ``1 - Var(R - v) / Var(R)`` per value column, over the batch, with population
  variances (numpy's formula, Baselines' ``explained_variance``), and no entry when logging is
  off;
- shares a trunk between policy and critic and sets ``separate_losses=True``: the critic loss
  must then leave the shared parameters' gradient alone (TorchRL's docs: "shared parameters
  between policy and critic will only be trained on the policy loss"), with or without
  functional parameters, while the critic's own parameters get Baselines' gradient;
- forgets the value target, or the value stored at collection time while clipping: a
  KeyError naming the entry.

Oracles: ``conformance/oracles/ppo_value_clipping.py`` (Baselines ppo2 and numpy's explained
variance, float64). Every input is seeded.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

from conformance import capabilities, device
from conformance._assertions import assert_close, message
from conformance.oracles import ppo_value_clipping as oracle
from conformance.test_ppo_value_clipping import (
    _column,
    _seeded_batch,
    _value_net,
    check_against_baselines,
    check_gradient,
    expected_critic,
)

TORCHRL_PPO = "https://github.com/pytorch/rl/blob/main/torchrl/objectives/ppo.py"
BASELINES_EV = "https://github.com/openai/baselines/blob/ea25b9e8/baselines/common/math_util.py"


@pytest.fixture
def options(request, impl, ppo_value_clipping):
    return capabilities.require(request, impl, "ppo_value_clipping", ppo_value_clipping,
                                "critic_loss_with")


def _call(options, *, value_net, observation, old_value, returns, clip_value=0.5,
          log_explained_variance=True, separate_losses=False, shared=None, functional=True):
    """One call of the capability, every tensor and module on the run's device."""
    put = lambda x: None if x is None else device.put(x)  # noqa: E731
    return options.critic_loss_with(
        value_net=put(value_net), observation=put(observation), old_value=put(old_value),
        returns=put(returns), clip_value=clip_value, critic_coeff=1.0,
        log_explained_variance=log_explained_variance, separate_losses=separate_losses,
        shared=shared, functional=functional)


def _valid_call_works(options, v, old, R, params):
    """The same call with a valid threshold and a complete batch must work, or a refusal below
    proves nothing (an implementation that always raises would pass)."""
    try:
        _call(options, value_net=_value_net(), observation=_column(v), old_value=_column(old),
              returns=_column(R), clip_value=0.5)
    except NotImplementedError:
        raise  # judged by the plugin: not applicable when the implementation declares it
    except Exception as exc:  # noqa: BLE001 - any failure here voids the refusal check
        raise AssertionError(message(
            "the critic loss raised for a valid clip_value and a complete batch, so a refusal "
            "proves nothing", params={**params, "clip_value": 0.5},
            expected="a critic loss", actual=f"{type(exc).__name__}: {exc}"[:300])) from None


class _TensorThreshold:
    """The options capability seen as a seed-spec area whose ``clip_value`` is a tensor."""

    def __init__(self, options, shape):
        self.options, self.shape = options, shape
        self.critic_scale = options.critic_scale

    def critic_loss(self, *, value_net, observation, old_value, returns, clip_value,
                    clip_epsilon, critic_coeff):
        threshold = device.put(torch.full(self.shape, float(clip_value), dtype=torch.float32))
        return self.options.critic_loss_with(
            value_net=value_net, observation=observation, old_value=old_value,
            returns=returns, clip_value=threshold, critic_coeff=critic_coeff,
            log_explained_variance=True, separate_losses=False, shared=None, functional=True)


# ------------------------------------------------------------------------------ tensor threshold
@pytest.mark.parametrize("shape", [(), (1,)], ids=["shape=()", "shape=(1,)"])
@pytest.mark.parametrize("c", [0.125, 0.5], ids=lambda c: f"c={c}")
def test_a_tensor_clip_value_clips_like_the_float(options, shape, c):
    """``clip_value=torch.tensor(c)`` (float32, as a config or a scheduler hands it over):
    loss, gradient and clip fraction equal the Baselines oracle at c."""
    v, old, R = _seeded_batch(seed=21)
    check_against_baselines(_TensorThreshold(options, shape), v, old, R, c=c,
                            params={"clip_value": f"torch.tensor({c}) of shape {shape}",
                                    "seed": 21})


_INVALID = {
    "nan": lambda: float("nan"),
    "tensor-of-two": lambda: torch.tensor([0.1, 0.2]),
    "negative-tensor": lambda: torch.tensor(-0.1),
    "nan-tensor": lambda: torch.tensor(float("nan")),
    "string": lambda: "0.2",
}


@pytest.mark.parametrize("bad", list(_INVALID))
def test_an_invalid_clip_value_is_refused_naming_it(options, bad):
    """No threshold follows from NaN, a tensor of two values, a negative tensor or a string:
    the loss must raise ValueError naming ``clip_value`` rather than train on NaN or on
    inverted clamp bounds (or fail later with an error that names nothing)."""
    v, old, R = _seeded_batch(seed=22, size=8)
    value = _INVALID[bad]()
    if isinstance(value, torch.Tensor):
        value = device.put(value)
    params = {"clip_value": repr(value), "seed": 22}
    _valid_call_works(options, v, old, R, params)
    try:
        report = _call(options, value_net=_value_net(), observation=_column(v),
                       old_value=_column(old), returns=_column(R), clip_value=value)
    except ValueError as exc:
        if "clip_value" in str(exc):
            return
        raise AssertionError(message(
            "the ValueError for an invalid clip_value does not name clip_value",
            params=params, expected="a ValueError naming clip_value",
            actual=f"ValueError: {str(exc).splitlines()[0][:200] if str(exc) else ''}",
            link=TORCHRL_PPO)) from None
    except (TypeError, RuntimeError) as exc:
        raise AssertionError(message(
            "an invalid clip_value raised an error other than ValueError", params=params,
            expected="a ValueError naming clip_value",
            actual=f"{type(exc).__name__}: {str(exc).splitlines()[0][:200] if str(exc) else ''}",
            link=TORCHRL_PPO)) from None
    loss = device.host(report.loss, "CriticReport.loss")
    loss = loss.detach() if isinstance(loss, torch.Tensor) else loss  # float() of a graph warns
    raise AssertionError(message(
        "an invalid clip_value was accepted", params=params,
        expected="a ValueError naming clip_value",
        actual=f"a critic loss of {float(loss):.6g}",
        cause="the threshold is not validated", link=TORCHRL_PPO))


# ------------------------------------------------------------------------- explained variance
def _columns(seed: int, size: int, k: int):
    """K value columns on different scales, so that each column's explained variance differs
    from the pooled one."""
    rng = np.random.default_rng(seed)
    scale = np.arange(1, k + 1, dtype=np.float64) ** 2
    old = rng.normal(0.0, 2.0, (size, k)) * scale
    v = old + rng.normal(0.0, 1.0, (size, k)) * scale
    R = old + rng.normal(0.0, 3.0, (size, k)) * scale[::-1]
    return v, old, R


def _identity_net(k: int) -> torch.nn.Module:
    net = torch.nn.Linear(k, k, dtype=torch.float64)
    with torch.no_grad():
        net.weight.copy_(torch.eye(k, dtype=torch.float64))
        net.bias.zero_()
    return net


def _reported(report, k: int, params: dict) -> np.ndarray:
    ev = report.explained_variance
    if ev is None:
        raise AssertionError(message(
            "no explained variance reported with log_explained_variance=True", params=params,
            expected="TorchRL's 'explained_variance' output", actual=None, link=TORCHRL_PPO))
    ev = device.host(torch.as_tensor(ev), "CriticReport.explained_variance").detach()
    if tuple(ev.shape) != (k,):
        raise AssertionError(message(
            "explained variance not reported per value column", params=params,
            expected=f"shape ({k},): one value per column of the [B, {k}] prediction",
            actual=f"shape {tuple(ev.shape)}: {ev.double().numpy()}", link=TORCHRL_PPO))
    return ev.double().numpy()


@pytest.mark.parametrize("k", [1, 2], ids=lambda k: f"K={k}")
@pytest.mark.parametrize("clip_value", [None, 0.5], ids=lambda c: f"clip_value={c}")
def test_explained_variance_is_numpys_formula(options, k, clip_value):
    """``"explained_variance"`` = ``1 - Var(R - v) / Var(R)`` per value column over the batch,
    population variances, v the prediction the loss just made (with or without clipping)."""
    v, old, R = _columns(seed=23, size=16, k=k)
    params = {"K": k, "B": 16, "clip_value": clip_value, "seed": 23}
    report = _call(options, value_net=_identity_net(k), observation=torch.as_tensor(v),
                   old_value=torch.as_tensor(old), returns=torch.as_tensor(R),
                   clip_value=clip_value)
    actual = _reported(report, k, params)
    expected = oracle.explained_variance(R, v)
    pooled = float(oracle.explained_variance(R.reshape(-1), v.reshape(-1)))
    cause = None
    if np.allclose(actual, pooled, rtol=1e-9) and k > 1:
        cause = "the variances are taken over every element, not per value column (dim 0)"
    elif np.allclose(actual, 1 - (1 - expected) * 16 / 15, rtol=1e-9) or np.allclose(
            actual, 1 - (1 - expected) * 15 / 16, rtol=1e-9):
        cause = "one variance is the sample variance (correction=1), the other the population one"
    assert_close("explained variance != 1 - Var(R - v) / Var(R) per column", actual, expected,
                 params=params, rtol=1e-9, atol=1e-12, cause=cause, link=BASELINES_EV)


def test_explained_variance_of_constant_returns_is_not_positive(options):
    """Returns that do not vary and predictions that do: the prediction explains nothing, so
    the explained variance is -inf (numpy), NaN (Baselines) or, with TorchRL's epsilon in the
    denominator, a large negative number; never positive."""
    v, old, _ = _seeded_batch(seed=24, size=16)
    R = np.full_like(v, 3.0)
    params = {"returns": "all 3.0", "B": 16, "seed": 24}
    report = _call(options, value_net=_value_net(), observation=_column(v),
                   old_value=_column(old), returns=_column(R), clip_value=None)
    (actual,) = _reported(report, 1, params)
    if actual > 0:
        raise AssertionError(message(
            "explained variance of constant returns is positive", params=params,
            expected="-inf, NaN or a large negative number (Var(R) = 0 < Var(R - v))",
            actual=actual, cause="the epsilon that keeps Var(R) = 0 finite is subtracted, "
            "not added", link=BASELINES_EV))


def test_no_explained_variance_when_logging_is_off(options):
    """``log_explained_variance=False``: the loss reports no ``"explained_variance"``."""
    v, old, R = _seeded_batch(seed=25, size=8)
    report = _call(options, value_net=_value_net(), observation=_column(v),
                   old_value=_column(old), returns=_column(R), log_explained_variance=False)
    if report.explained_variance is not None:
        raise AssertionError(message(
            "an explained variance was reported with log_explained_variance=False",
            params={"log_explained_variance": False, "seed": 25}, expected=None,
            actual=repr(report.explained_variance)[:200], link=TORCHRL_PPO))


# ---------------------------------------------------------------------------- separate_losses
class _Trunk(torch.nn.Module):
    """Linear(1, 1) with weight 1 and bias 0: the trunk the policy and the critic share."""

    def __init__(self):
        super().__init__()
        self.linear = _value_net()

    def forward(self, x):
        return self.linear(x)


@pytest.mark.parametrize("functional", [True, False], ids=lambda f: f"functional={f}")
@pytest.mark.parametrize("separate_losses", [True, False], ids=lambda s: f"separate_losses={s}")
def test_separate_losses_keeps_the_critic_gradient_off_shared_parameters(
        options, separate_losses, functional):
    """Critic = head(trunk(x)), policy mean = trunk(x), both identities at the start. The
    critic loss's gradient reaches the head as Baselines' gradient; it reaches the trunk too
    unless ``separate_losses=True``, whatever ``functional`` is. The trunk comes back as it
    went in (same parameters, same values)."""
    v, old, R = _seeded_batch(seed=26, size=32)
    c = 0.5
    params = {"separate_losses": separate_losses, "functional": functional, "clip_value": c,
              "seed": 26}
    trunk, head = device.put(_Trunk()), device.put(_value_net())
    before = [p for p in trunk.parameters()]
    report = options.critic_loss_with(
        value_net=torch.nn.Sequential(trunk, head), observation=device.put(_column(v)),
        old_value=device.put(_column(old)), returns=device.put(_column(R)), clip_value=c,
        critic_coeff=1.0, log_explained_variance=True, separate_losses=separate_losses,
        shared=trunk, functional=functional)
    loss = device.host(report.loss, "CriticReport.loss")
    exp_loss, _, _ = expected_critic(options, v, old, R, c, 1.0)
    assert_close("critic loss != 2 * Baselines vf_loss", float(loss.detach()), exp_loss,
                 params=params, rtol=1e-9, atol=1e-9)
    loss.backward()
    k = options.critic_scale

    def grads(module, name):
        return tuple(float(device.host(p.grad, f"the {name} gradient").sum())
                     if p.grad is not None else 0.0 for p in (module.weight, module.bias))

    check_gradient(grads(head, "head"), v, old, R, c, k, params={**params, "of": "the head"},
                   cause=None)
    trunk_grads = grads(trunk.linear, "trunk")
    if separate_losses:
        if any(g != 0.0 for g in trunk_grads):
            raise AssertionError(message(
                "separate_losses=True: the critic loss's gradient reached the parameters "
                "shared with the policy", params=params,
                expected="no gradient on the shared trunk (None or 0)",
                actual=f"d loss / d trunk (weight, bias) = {trunk_grads}",
                cause="the shared parameters are detached only from the functional copies"
                      if not functional else None, link=TORCHRL_PPO))
    else:
        check_gradient(trunk_grads, v, old, R, c, k, params={**params, "of": "the trunk"},
                       cause="the critic's gradient does not reach the shared trunk although "
                             "separate_losses=False")
    after = list(trunk.parameters())
    same = len(after) == len(before) and all(a is b for a, b in zip(after, before, strict=True))
    values = [float(device.host(p, "the trunk").detach().sum()) for p in after]
    if not same or values != [1.0, 0.0]:
        raise AssertionError(message(
            "the shared trunk did not come back as it went in", params=params,
            expected="the same Parameter objects, weight 1 and bias 0",
            actual=f"same objects: {same}; values {values}", link=TORCHRL_PPO))


# ------------------------------------------------------------------------------ missing entries
@pytest.mark.parametrize("missing", ["value_target", "stored value"])
def test_a_missing_entry_is_named(options, missing):
    """A batch without the value target, or without the value stored at collection time while
    clipping is on: KeyError naming the entry, not a failure deep inside the loss."""
    v, old, R = _seeded_batch(seed=27, size=8)
    names = ("value_target", "returns") if missing == "value_target" else (
        "state_value", "old_value")
    params = {"missing": missing, "clip_value": 0.5, "seed": 27}
    _valid_call_works(options, v, old, R, params)
    try:
        report = _call(options, value_net=_value_net(), observation=_column(v),
                       old_value=None if missing == "stored value" else _column(old),
                       returns=None if missing == "value_target" else _column(R))
    except KeyError as exc:
        if any(name in str(exc) for name in names):
            return
        raise AssertionError(message(
            f"the KeyError for a missing {missing} does not name it", params=params,
            expected=f"a KeyError naming one of {names}", actual=f"KeyError: {exc}"[:300],
            link=TORCHRL_PPO)) from None
    except Exception as exc:  # noqa: BLE001 - any other failure is the finding
        raise AssertionError(message(
            f"a missing {missing} raised {type(exc).__name__}, not KeyError", params=params,
            expected=f"a KeyError naming one of {names}",
            actual=f"{type(exc).__name__}: {str(exc).splitlines()[0][:200] if str(exc) else ''}",
            link=TORCHRL_PPO)) from None
    raise AssertionError(message(
        f"a batch without its {missing} was accepted", params=params,
        expected=f"a KeyError naming one of {names}",
        actual=f"a critic loss of {float(device.host(report.loss, 'CriticReport.loss')):.6g}",
        link=TORCHRL_PPO))
