"""§4 family: value clipping in every loss that takes ``clip_value``, and after rescheduling.

- TorchRL's ``PPOLoss``, ``ClipPPOLoss``, ``KLPENPPOLoss`` and ``A2CLoss`` all take
  ``clip_value`` and share one critic helper: each must give Baselines' clipped critic loss,
  gradient and clip fraction (the seed specs reach ``ClipPPOLoss`` only).
- ``loss.clip_value = x`` after construction, the way a scheduler anneals it, must take effect
  in the next evaluation (pytorch/rl#3612 made loss buffers assignable from Python floats; before
  it the assignment raised).
- ``clip_value=True`` means "use ``clip_epsilon``", which is ambiguous for an asymmetric clip range
  ``clip_epsilon=(low, high)``: it must be refused (ValueError or TypeError) rather than pick one.

Oracle: ``conformance/oracles/ppo_value_clipping.py`` (Baselines ppo2, float64), through the seed
file's checks (``critic_scale`` and tolerances as there). Every input is seeded.
"""

from __future__ import annotations

import numpy as np
import pytest

from conformance import capabilities
from conformance._assertions import message
from conformance.interface import PPO_LOSS_CLASSES
from conformance.test_ppo_value_clipping import _seeded_batch, check_against_baselines, run_critic

RL_3612 = "https://github.com/pytorch/rl/pull/3612"
RL_2005 = "https://github.com/pytorch/rl/pull/2005"
PPO_CODE = "https://github.com/pytorch/rl/blob/main/torchrl/objectives/ppo.py"


class LossClassView:
    """One loss class of the family seen as a §4 area (what the seed file's checks call)."""

    def __init__(self, area, loss_class: str, reschedule: float | None = None):
        self.area, self.loss_class, self.reschedule = area, loss_class, reschedule
        self.critic_scale = area.critic_scale

    def critic_loss(self, **kwargs):
        return self.area.critic_loss_of(self.loss_class, reschedule_clip_value=self.reschedule,
                                        **kwargs)


@pytest.fixture
def family(request, impl, ppo_value_clipping):
    return capabilities.require(request, impl, "ppo_value_clipping", ppo_value_clipping,
                                "critic_loss_of")


def _fail_with_family(exc: AssertionError, loss_class: str, extra: str) -> AssertionError:
    return AssertionError(f"{exc}\n  family: {loss_class}: {extra}")


_classes = pytest.mark.parametrize("loss_class", PPO_LOSS_CLASSES)


@pytest.mark.parametrize("c", [0.125, 0.5], ids=lambda c: f"c={c}")
@_classes
def test_every_loss_class_clips_like_baselines(family, loss_class, c):
    """Each loss class with ``clip_value=c``: loss, gradient and clip fraction equal the
    Baselines oracle (the same helper serves them all, so all must agree)."""
    v, old, R = _seeded_batch(seed=11)
    try:
        check_against_baselines(LossClassView(family, loss_class), v, old, R, c=c,
                                params={"loss_class": loss_class, "seed": 11})
    except AssertionError as exc:
        raise _fail_with_family(exc, loss_class, "the value clipping shared by PPOLoss, "
                                f"ClipPPOLoss, KLPENPPOLoss and A2CLoss ({RL_2005})") from None


@pytest.mark.parametrize("first,then", [(0.5, 0.125), (0.125, 0.5)],
                         ids=["c=0.5-then-0.125", "c=0.125-then-0.5"])
@_classes
def test_rescheduled_clip_value_takes_effect(family, loss_class, first, then):
    """Built with ``clip_value=first``, then ``loss.clip_value = then`` (a Python float, as a
    scheduler assigns it): the next evaluation clips at ``then``."""
    v, old, R = _seeded_batch(seed=12)
    view = LossClassView(family, loss_class, reschedule=then)
    params = {"loss_class": loss_class, "built with": first, "rescheduled to": then,
              "seed": 12}
    try:
        check_against_baselines(view, v, old, R, c=then, clip_value=first, params=params)
    except AssertionError as exc:
        stale = _stale(view, v, old, R, first)
        hint = (f"the loss still clips at the construction value {first}: the assignment "
                "did not reach the buffer the critic reads" if stale else
                "rescheduling clip_value after construction")
        raise _fail_with_family(exc, loss_class, f"{hint} ({RL_3612})") from None
    except (TypeError, RuntimeError, AttributeError) as exc:
        raise AssertionError(message(
            f"assigning loss.clip_value = {then} after construction raised "
            f"{type(exc).__name__}", params=params, expected="the critic loss clipped at "
            f"{then}", actual=str(exc).splitlines()[0][:200],
            cause="clip_value is a registered buffer that plain attribute assignment cannot "
                  "update from a float (made schedulable by pytorch/rl#3612)",
            link=RL_3612)) from None


def _stale(view, v, old, R, first) -> bool:
    """Does the loss of ``view`` equal the oracle at the construction threshold instead?"""
    try:
        check_against_baselines(view, v, old, R, c=first, clip_value=first)
    except AssertionError:
        return False
    return True


def test_tuple_clip_epsilon_with_clip_value_true_is_refused(family):
    """``ClipPPOLoss(clip_epsilon=(0.1, 0.3), clip_value=True)``: no single value threshold
    follows from an asymmetric range; the loss must refuse (ValueError or TypeError)."""
    v, old, R = _seeded_batch(seed=13, size=8)
    view = LossClassView(family, "ClipPPOLoss")
    params = {"loss_class": "ClipPPOLoss", "clip_epsilon": (0.1, 0.3), "clip_value": True}
    try:
        loss, _, _ = run_critic(view, v, old, R, clip_value=True, clip_epsilon=(0.1, 0.3))
    except (ValueError, TypeError):
        return
    raise AssertionError(message(
        "clip_value=True with a tuple clip_epsilon was accepted", params=params,
        expected="ValueError (or TypeError)", actual=f"a critic loss of {loss:.6g}",
        cause="clip_value=True picks a threshold out of an asymmetric clip range",
        link=PPO_CODE))


@pytest.mark.parametrize("loss_class", [c for c in PPO_LOSS_CLASSES if c != "ClipPPOLoss"])
def test_clip_value_off_is_the_plain_squared_error(family, loss_class):
    """Without ``clip_value`` the other classes give the unclipped critic loss (the family
    specs above would pass on a loss that always clips at c only by luck: here v moves far)."""
    v, old, R = _seeded_batch(seed=14, spread=5.0)
    loss, _, _ = run_critic(LossClassView(family, loss_class), v, old, R, clip_value=None)
    expected = family.critic_scale * 0.5 * float(np.mean((np.asarray(v) - np.asarray(R)) ** 2))
    if not np.isclose(loss, expected, rtol=1e-9, atol=1e-9):
        raise AssertionError(message(
            f"{loss_class} without clip_value: critic loss != plain squared error",
            params={"loss_class": loss_class, "seed": 14}, expected=expected, actual=loss,
            cause="value clipping applied although clip_value is off", link=RL_2005))
