"""PPO with value clipping equivalent to OpenAI Baselines ppo2.

``clipped_value_loss`` is the element-wise pessimistic critic loss of Baselines
(openai/baselines@ea25b9e8, baselines/ppo2/model.py#L66-L75)::

    v_clipped = v_old + clamp(v - v_old, -c, c)
    loss      = max(d(v, R), d(v_clipped, R))

with ``d`` the squared error for ``"l2"`` (no 0.5: TorchRL's convention, so the result is twice
Baselines' ``vf_losses`` halves), Huber for ``"smooth_l1"`` or absolute error for ``"l1"``.

``ClipPPOLoss`` is TorchRL's loss with this critic and with the threshold validated: a negative,
NaN or infinite ``clip_value`` raises ``ValueError`` instead of silently clamping with inverted
bounds (upstream accepts ``-0.1``). ``0.0`` means "off", as upstream (its losses test
``if self.clip_value``), so configurations written for TorchRL keep working.
"""

from __future__ import annotations

import contextlib
import math
import numbers

import torch
from tensordict import is_tensor_collection
from torch.nn import functional as F
from torchrl.objectives import A2CLoss as _TorchRLA2CLoss
from torchrl.objectives import ClipPPOLoss as _TorchRLClipPPOLoss
from torchrl.objectives import KLPENPPOLoss as _TorchRLKLPENPPOLoss
from torchrl.objectives import PPOLoss as _TorchRLPPOLoss

_DISTANCES = {
    "l2": lambda a, b: F.mse_loss(a, b, reduction="none"),
    "smooth_l1": lambda a, b: F.smooth_l1_loss(a, b, reduction="none"),
    "l1": lambda a, b: F.l1_loss(a, b, reduction="none"),
}


def clipped_value_loss(
    value: torch.Tensor,
    old_value: torch.Tensor,
    target: torch.Tensor,
    clip_value: float | torch.Tensor,
    loss_critic_type: str = "l2",
) -> tuple[torch.Tensor, torch.Tensor]:
    """Element-wise value-clipped critic loss and the share of clipped predictions.

    The clip fraction is ``mean(|value - old_value| > clip_value)`` (strict, as Baselines'
    ``clipfrac``), computed without gradient.
    """
    try:
        distance = _DISTANCES[loss_critic_type]
    except KeyError:
        raise ValueError(
            f"loss_critic_type must be one of {sorted(_DISTANCES)}, got {loss_critic_type!r}"
        ) from None
    delta = value - old_value
    clipped = old_value + delta.clamp(-clip_value, clip_value)
    loss = torch.maximum(distance(value, target), distance(clipped, target))
    with torch.no_grad():
        fraction = (delta.abs() > clip_value).to(value.dtype).mean()
    return loss, fraction


def validate_clip_value(clip_value):
    """Return the threshold unchanged, or raise ValueError naming what is wrong with it."""
    if clip_value is None or isinstance(clip_value, bool):
        return clip_value
    if isinstance(clip_value, torch.Tensor):
        if clip_value.numel() != 1:
            raise ValueError(f"clip_value must be a scalar, got a tensor of shape {tuple(clip_value.shape)}")
        number = float(clip_value)
    elif isinstance(clip_value, numbers.Real):
        number = float(clip_value)
    else:
        raise ValueError(f"clip_value must be None, a bool or a positive number, got {clip_value!r}")
    if not math.isfinite(number) or number < 0:
        raise ValueError(
            f"clip_value must be a positive finite number (the largest allowed change of the value "
            f"prediction), got {number!r}; use clip_value=None (or 0.0) to disable value clipping"
        )
    return clip_value


class ClipPPOLoss(_TorchRLClipPPOLoss):
    """Drop-in for ``torchrl.objectives.ClipPPOLoss`` (torchrl 0.14) with a validated,
    Baselines-equivalent value clipping."""

    def __init__(self, *args, clip_value=None, **kwargs):
        super().__init__(*args, clip_value=validate_clip_value(clip_value), **kwargs)

    def _weighted_loss_entropy(self, entropy):
        """Per-head coefficients (composite policies): upstream weights each head's entropy
        as it comes, so a Normal head's element-wise entropy is broadcast against the other
        heads' instead of being summed over its dimensions first."""
        if self._entropy_coeff_map is None or not is_tensor_collection(entropy):
            return super()._weighted_loss_entropy(entropy)
        return _head_entropy_loss(entropy, self._entropy_coeff_map, entropy.batch_dims)

    def loss_critic(self, tensordict):
        if self.separate_losses:
            tensordict = tensordict.detach()
        keys = self.tensor_keys
        target_return = tensordict.get(keys.value_target, None)
        if target_return is None:
            raise KeyError(
                f"the value target {keys.value_target!r} is missing from the input tensordict; "
                "compute it with an advantage module (GAE, TD(lambda), ...) first"
            )
        old_value = None
        if self.clip_value:
            old_value = tensordict.get(keys.value, None)
            if old_value is None:
                raise KeyError(
                    f"clip_value={float(self.clip_value)} needs the value stored at collection "
                    f"time under {keys.value!r}, which is missing from the input tensordict"
                )
        params = (
            self.critic_network_params.to_module(self.critic_network, preserve_module_state=False)
            if self.functional
            else contextlib.nullcontext()
        )
        with params:
            value = self.critic_network(tensordict).get(keys.value, None)
        if value is None:
            raise KeyError(f"the critic did not write {keys.value!r}; check value_key")
        target_return, value, old_value = self._critic_loss_inputs(target_return, value, old_value)
        clip_fraction = None
        if self.clip_value:
            loss, clip_fraction = clipped_value_loss(
                value, old_value, target_return, self.clip_value, self.loss_critic_type
            )
        else:
            loss = _DISTANCES[self.loss_critic_type](value, target_return)
        explained_variance = None
        if self.log_explained_variance:
            with torch.no_grad():
                residual = torch.var(target_return - value, correction=0, dim=0)
                total = torch.var(target_return, correction=0, dim=0)
                explained_variance = 1.0 - residual / (total + torch.finfo(total.dtype).eps)
        self._clear_weakrefs(tensordict, "actor_network_params", "critic_network_params",
                             "target_actor_network_params", "target_critic_network_params")
        if self._has_critic:
            loss = self.critic_coeff * loss
        return loss, clip_fraction, explained_variance


def _head_entropy_loss(entropy, coeff_map, batch_dims: int) -> torch.Tensor:
    """``-sum_h c_h H_h`` with each head's entropy summed over its own dimensions first."""
    total = None
    for key, head in entropy.items(include_nested=True, leaves_only=True):
        try:
            coeff = coeff_map[key]
        except KeyError as exc:
            raise KeyError(f"no entropy coefficient for head {key!r}; coefficients are keyed "
                           f"by the full key of the head's entropy: {sorted(coeff_map)}") from exc
        if head.ndim > batch_dims:
            head = head.flatten(batch_dims).sum(-1)
        term = -torch.as_tensor(coeff, dtype=head.dtype, device=head.device) * head
        total = term if total is None else total + term
    return total


class _ValidatedClipValue:
    """The other losses that take ``clip_value`` (upstream shares one critic helper among them,
    which computes Baselines' max since pytorch/rl#2005): the threshold validated as above."""

    def __init__(self, *args, clip_value=None, **kwargs):
        super().__init__(*args, clip_value=validate_clip_value(clip_value), **kwargs)


class PPOLoss(_ValidatedClipValue, _TorchRLPPOLoss):
    """Drop-in for ``torchrl.objectives.PPOLoss`` (torchrl 0.14), ``clip_value`` validated."""


class KLPENPPOLoss(_ValidatedClipValue, _TorchRLKLPENPPOLoss):
    """Drop-in for ``torchrl.objectives.KLPENPPOLoss`` (torchrl 0.14), ``clip_value`` validated."""


class A2CLoss(_ValidatedClipValue, _TorchRLA2CLoss):
    """Drop-in for ``torchrl.objectives.A2CLoss`` (torchrl 0.14), ``clip_value`` validated."""
