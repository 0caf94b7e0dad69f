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
``if self.clip_value``), so configurations written for TorchRL keep working. A scalar tensor
threshold is accepted as upstream accepts it. The loss also reports TorchRL's
``"explained_variance"`` (``explained_variance``), and ``separate_losses=True`` keeps the critic's
gradient off the parameters it shares with the policy with ``functional=False`` too (upstream
only detaches them from its functional copies).
"""

from __future__ import annotations

import contextlib
import math
import numbers

import torch
from tensordict import TensorDict, is_tensor_collection
from tensordict.nn import dispatch
from torchrl.objectives import A2CLoss as _TorchRLA2CLoss
from torchrl.objectives import ClipPPOLoss as _TorchRLClipPPOLoss
from torchrl.objectives import KLPENPPOLoss as _TorchRLKLPENPPOLoss
from torchrl.objectives import PPOLoss as _TorchRLPPOLoss
from torchrl.objectives.multiagent import IPPOLoss as _TorchRLIPPOLoss
from torchrl.objectives.multiagent import MAPPOLoss as _TorchRLMAPPOLoss
from torchrl.objectives.utils import distance_loss

from impls.composite_entropy import PerHeadEntropy


def clipped_value_loss(
    value: torch.Tensor,
    old_value: torch.Tensor,
    target: torch.Tensor,
    clip_value: float | torch.Tensor,
    loss_critic_type: str,
    valid: torch.Tensor | None = None,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Element-wise value-clipped critic loss and the share of clipped predictions.

    ``loss_critic_type`` is TorchRL's distance (``"l2"``, ``"smooth_l1"`` or ``"l1"``; another
    name raises TorchRL's ``NotImplementedError``). The clip fraction is
    ``mean(|value - old_value| > clip_value)`` (strict, as Baselines' ``clipfrac``), computed
    without gradient, over the ``valid`` positions only when a validity mask (shaped like
    ``value``) is given: padding is not a prediction.
    """
    delta = value - old_value
    clipped = old_value + delta.clamp(-clip_value, clip_value)
    loss = torch.maximum(distance_loss(target, value, loss_critic_type),
                         distance_loss(target, clipped, loss_critic_type))
    with torch.no_grad():
        outside = delta.abs() > clip_value
        if valid is None:
            fraction = outside.to(value.dtype).mean()
        else:
            fraction = (outside & valid).sum().to(value.dtype) / valid.sum().clamp_min(1)
    return loss, fraction


def explained_variance(target: torch.Tensor, value: torch.Tensor) -> torch.Tensor:
    """``1 - Var(target - value) / Var(target)`` per value column (over the batch, dim 0), with
    population variances, as TorchRL reports it under ``"explained_variance"``; TorchRL's
    machine epsilon in the denominator keeps constant targets finite (a large negative value
    unless the prediction is exact)."""
    with torch.no_grad():
        residual = torch.var(target - value, correction=0, dim=0)
        total = torch.var(target, correction=0, dim=0)
        return 1.0 - residual / (total + torch.finfo(total.dtype).eps)


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


class ClipPPOLoss(PerHeadEntropy, _TorchRLClipPPOLoss):
    """Drop-in for ``torchrl.objectives.ClipPPOLoss`` (torchrl 0.14) with a validated,
    Baselines-equivalent value clipping, per-head entropy weights for composite policies
    (``impls/composite_entropy.py``), and ``separate_losses`` kept without functional
    parameters."""

    def __init__(self, *args, clip_value=None, **kwargs):
        super().__init__(*args, clip_value=validate_clip_value(clip_value), **kwargs)

    @dispatch
    def forward(self, tensordict):
        """TorchRL's forward, with a composite critic's ``loss_critic`` reduced as every loss
        term is (TorchRL reduces the entries whose own name starts with ``loss_``: the heads
        of a composite critic, ``("loss_critic", head)``, came back unreduced, one loss per
        sample, and a training loop's sum of the losses is no scalar to backpropagate)."""
        out = super().forward(tensordict)
        critic = out.get("loss_critic", None)
        if is_tensor_collection(critic):
            out.set("loss_critic", critic.apply(
                lambda loss: self._reduce_loss(loss, tensordict).squeeze(-1), batch_size=[]))
        return out

    def loss_critic(self, tensordict):
        if self.separate_losses:
            tensordict = tensordict.detach()
        keys = self.tensor_keys
        # TorchRL's messages (its tests match them), each one f-string; a missing key reads
        # as None (tensordict 0.14)
        target_return = tensordict.get(keys.value_target)
        if target_return is None:
            raise KeyError(f"the key {keys.value_target} was not found in the input tensordict: "
                           f"the value target, written by an advantage module (GAE, "
                           f"TD(lambda), ...) before the loss runs")
        old_value = tensordict.get(keys.value) if self.clip_value else None
        if is_tensor_collection(old_value):
            # a composite critic writes its predictions into this very tensordict: the stored
            # ones must be kept apart (TorchRL clips against the new predictions themselves)
            old_value = old_value.copy()
        if self.clip_value and old_value is None:
            raise KeyError(f"clip_value is set to {self.clip_value}, but the key {keys.value} "
                           f"was not found in the input tensordict. Make sure that the "
                           f"'value_key' passed to PPO exists in the input tensordict.")
        with self._critic_parameters():
            value = self.critic_network(tensordict).get(keys.value)
        if value is None:
            raise KeyError(f"the key {keys.value} was not found in the critic output "
                           f"tensordict. Make sure that the 'value_key' passed to PPO is "
                           f"accurate.")
        valid = self._valid_positions(tensordict, value)
        target_return, value, old_value = self._masked_critic_loss_inputs(
            target_return, value, old_value, valid)
        clip_fraction = None
        if self.clip_value:
            loss, clip_fraction = clipped_value_loss(
                value, old_value, target_return, self.clip_value, self.loss_critic_type, valid
            )
        else:
            loss = distance_loss(target_return, value, self.loss_critic_type)
        reported = explained_variance(target_return, value) if self.log_explained_variance else None
        if self._has_critic:
            loss = self.critic_coeff * loss
        return loss, clip_fraction, reported

    def _masked_critic_loss_inputs(self, target_return, value, old_value, valid):
        """TorchRL's hook ``_critic_loss_inputs`` (the identity here; the multi-agent losses'
        value normalisation), told which positions are valid (None: all)."""
        return self._critic_loss_inputs(target_return, value, old_value)

    def _reduce_loss(self, loss, tensordict):
        # TorchRL hands the masks it finds to torch.where, which refuses a 0/1 mask of any
        # dtype but bool and uint8 ("expected condition to be a boolean tensor"): here a mask
        # is read as its truth value, as _valid_positions reads it for the clip fraction.
        # PPO's forward is the only caller, with these two arguments
        return super()._reduce_loss(loss, self._bool_masks(tensordict))

    def _bool_masks(self, tensordict):
        """``tensordict``, or a shallow copy of it whose validity masks of another dtype than
        bool are replaced by their truth values."""
        numeric = {}
        for key in self._loss_mask_keys():
            found = tensordict.get(key, None)
            if found is not None and found.dtype != torch.bool:
                numeric[key] = found != 0
        if not numeric:
            return tensordict
        tensordict = tensordict.copy()
        for key, mask in numeric.items():
            tensordict.set(key, mask)
        return tensordict

    def _valid_positions(self, tensordict, like: torch.Tensor) -> torch.Tensor | None:
        """The positions the loss's reductions keep (TorchRL's validity masks, read as its
        ``_reduce_loss`` reads them: ``loss_mask_key``, ANDed, a mask of another dtype read
        as its truth value), shaped like ``like``; None when the batch carries none. The clip
        fraction is then counted over them too."""
        mask = None
        for key in self._loss_mask_keys():
            found = tensordict.get(key, None)
            if found is not None:
                found = self._expand_loss_mask(found.to(torch.bool), like)
                mask = found if mask is None else mask & found
        return mask

    def _critic_parameters(self):
        """A context in which the critic runs with the parameters this call trains: the loss's
        functional copies (where ``separate_losses`` already detached those shared with the
        policy), or the module's own. Without functional parameters TorchRL leaves the shared
        ones attached, so its critic loss trains them against ``separate_losses``' promise:
        here they are detached for the call."""
        if self.functional:
            return self.critic_network_params.to_module(self.critic_network,
                                                        preserve_module_state=False)
        if not self.separate_losses:
            return contextlib.nullcontext()
        policy = {id(p) for p in self.actor_network.parameters()}
        params = TensorDict.from_module(self.critic_network)
        params = params.apply(lambda p: p.detach() if id(p) in policy else p)
        return params.to_module(self.critic_network, preserve_module_state=False)


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


class MAPPOLoss(_TorchRLMAPPOLoss, ClipPPOLoss):
    """Drop-in for ``torchrl.objectives.multiagent.MAPPOLoss`` (torchrl 0.14): TorchRL's value
    normalisation (``value_norm``: target, prediction and stored prediction normalised before
    the distance, the clip radius applied in normalised space) on the reference's
    ``ClipPPOLoss`` (validated ``clip_value``, its masks). Under a validity mask the
    normaliser's statistics take the valid targets only (TorchRL folds the padding's in: its
    own ``advantage_norm`` drops those rows, ``_valid_value_target_rows``)."""

    def _masked_critic_loss_inputs(self, target_return, value, old_value, valid):
        norm = self.value_norm
        if norm is None or valid is None:
            return self._critic_loss_inputs(target_return, value, old_value)
        target_return = target_return.detach()
        if valid.any():  # a batch of padding alone leaves the statistics as they were
            norm.update(target_return[valid].reshape(-1, *norm.shape))
        return (norm.normalize(target_return), norm.normalize(value),
                None if old_value is None else norm.normalize(old_value))


class IPPOLoss(_TorchRLIPPOLoss, MAPPOLoss):
    """Drop-in for ``torchrl.objectives.multiagent.IPPOLoss`` (torchrl 0.14), as
    :class:`MAPPOLoss`."""
