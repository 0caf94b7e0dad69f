"""§4 PPO value clipping: the calls its specs make."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

import torch


@dataclass
class CriticLoss:
    """What a PPO loss reports for its critic term.

    loss: the scalar critic loss, still attached to the value network's graph.
    value_clip_fraction: the reported share of clipped value predictions, or None when the
        implementation reports none (it must report one whenever clipping is on).
    """

    loss: torch.Tensor
    value_clip_fraction: float | None


class PPOValueClipping(Protocol):
    #: ``loss == critic_scale * critic_coeff * baselines_vf_loss`` where ``baselines_vf_loss``
    #: is Baselines' ``.5 * mean(max(...))``. TorchRL's "l2" applies no 0.5, so its scale is 2.
    critic_scale: float

    def critic_loss(
        self,
        *,
        value_net: torch.nn.Module,
        observation: torch.Tensor,
        old_value: torch.Tensor,
        returns: torch.Tensor,
        clip_value: float | bool | None,
        clip_epsilon: float,
        critic_coeff: float,
    ) -> CriticLoss:
        """Critic loss of a clipped PPO loss with the squared-error critic.

        ``value_net`` maps ``observation`` [B, 1] to the new value prediction [B, 1];
        ``old_value`` [B, 1] is the prediction stored at collection time; ``returns`` [B, 1]
        the value target. ``clip_value`` None/False/0.0: no value clipping (0.0 is
        TorchRL's "off"); True: use ``clip_epsilon``; a positive float: that threshold. Invalid thresholds must raise ValueError.
        """
        ...


#: the loss classes that share PPO's value clipping, in TorchRL's names
PPO_LOSS_CLASSES = ("PPOLoss", "ClipPPOLoss", "KLPENPPOLoss", "A2CLoss")


class PPOLossFamily(Protocol):
    """§4: the critic loss of each loss class that takes ``clip_value``."""

    def critic_loss_of(
        self,
        loss_class: str,
        *,
        value_net: torch.nn.Module,
        observation: torch.Tensor,
        old_value: torch.Tensor,
        returns: torch.Tensor,
        clip_value: float | bool | None,
        clip_epsilon: float | tuple[float, float],
        critic_coeff: float,
        reschedule_clip_value: float | None,
    ) -> CriticLoss:
        """As :meth:`PPOValueClipping.critic_loss`, for the loss class named ``loss_class`` (one
        of PPO_LOSS_CLASSES; ``clip_epsilon`` is ignored by classes without one). ``reschedule_clip_value``: after
        building the loss, assign ``loss.clip_value = reschedule_clip_value`` (a Python float,
        as a scheduler does) before evaluating it. A tuple ``clip_epsilon`` is an asymmetric
        clip range."""
        ...


@dataclass
class CriticReport:
    """What a PPO loss reports for its critic, TorchRL's diagnostics included.

    loss: the scalar critic loss, still attached to the value network's graph.
    value_clip_fraction: as in :class:`CriticLoss`.
    explained_variance: TorchRL's ``"explained_variance"`` output, one value per value column
        (shape ``[K]`` for a ``[B, K]`` prediction), or None when the loss reports none.
    """

    loss: torch.Tensor
    value_clip_fraction: float | None
    explained_variance: torch.Tensor | None


class PPOCriticOptions(Protocol):
    """§4 options: the critic loss with TorchRL's other critic options."""

    def critic_loss_with(
        self,
        *,
        value_net: torch.nn.Module,
        observation: torch.Tensor,
        old_value: torch.Tensor | None,
        returns: torch.Tensor | None,
        clip_value: object,
        critic_coeff: float,
        log_explained_variance: bool,
        separate_losses: bool,
        shared: torch.nn.Module | None,
        functional: bool,
    ) -> CriticReport:
        """The squared-error critic loss of ``ClipPPOLoss`` built with these options.

        ``value_net`` maps ``observation`` [B, K] to the value prediction [B, K]; ``old_value``
        and ``returns`` are [B, K], or None when the batch does not carry them (a missing entry
        must raise KeyError naming it). ``clip_value`` is handed to the constructor as given
        (a float, a bool, None, a tensor, or something invalid, which must raise ValueError
        naming ``clip_value``). ``shared``: None, or a submodule of ``value_net`` whose output the
        policy also reads (the policy's mean is ``shared(observation)``), so that its
        parameters belong to both networks. ``log_explained_variance``, ``separate_losses`` and
        ``functional`` are TorchRL's constructor options of the same names (an implementation
        without functional parameters treats both values alike).
        """
        ...


class PPOCriticMasks(Protocol):
    """§4 under a validity mask: the critic loss of a batch whose padded positions are marked."""

    def critic_loss_masked(
        self,
        *,
        value_net: torch.nn.Module,
        observation: torch.Tensor,
        old_value: torch.Tensor,
        returns: torch.Tensor,
        clip_value: float,
        critic_coeff: float,
        valid: torch.Tensor,
        shifted_valid: torch.Tensor | None = None,
    ) -> CriticReport:
        """The squared-error critic loss of ``ClipPPOLoss`` on a batch [B, 1] (as
        :meth:`PPOCriticOptions.critic_loss_with`) that carries TorchRL's trajectory mask:
        ``valid`` [B, 1] at ``("collector", "mask")``, as ``SliceSampler(pad_output=True)``
        writes it, False on padding (whose observation, old value and return are arbitrary
        finite numbers); bool, or a 0/1 tensor of another dtype, set in the batch as given.
        ``shifted_valid``: None, or a second mask [B, 1] (bool) set at ``"shifted_valid"``, where
        TorchRL's value estimators write it; a position is valid when both masks say so. The
        loss, its gradient and the value clip fraction are those of the valid positions
        alone."""
        ...


@dataclass
class PolicyObjective:
    """What a clipped PPO loss reports for its policy term.

    loss: the scalar clipped surrogate loss (``loss_objective``).
    clip_fraction: the reported share of clipped ratios, or None when none is reported.
    """

    loss: float
    clip_fraction: float | None


class PPOClipRange(Protocol):
    """§4's policy side: the clipped objective under a (possibly asymmetric) clip range."""

    def objective_with(
        self,
        *,
        clip_epsilon: float | tuple[float, float],
        log_weight: torch.Tensor,
        advantage: torch.Tensor,
    ) -> PolicyObjective:
        """``loss_objective`` and ``clip_fraction`` of ``ClipPPOLoss(clip_epsilon=...)`` on a
        batch [B, 1] whose log-ratio ``log pi_new(a) - log pi_old(a)`` is ``log_weight`` and whose
        advantage is ``advantage`` (not normalised; no entropy bonus). A tuple is the
        asymmetric range ``(low, high)``: ratios are clipped to ``[1 - low, 1 + high]``."""
        ...


class PPOEffectiveSampleSize(Protocol):
    """§4's policy diagnostics: the effective sample size ``ClipPPOLoss`` logs as ``"ESS"``."""

    def ess_of(self, *, log_weight: torch.Tensor) -> torch.Tensor | None:
        """The ``"ESS"`` output of ``ClipPPOLoss`` (as its forward reports it, not reduced
        further) on a batch of ``B = log_weight.shape[0]`` samples whose log-ratio
        ``log pi_new - log pi_old`` is ``log_weight`` [B, *F], one ratio per element: the
        policy's log-probability is not summed over the F dimensions (a factorised policy,
        or tokens of an action chunk); advantage 1, no entropy bonus, no critic. None when
        the loss reports no ESS."""
        ...


#: the multi-agent PPO losses that take a value normaliser (TorchRL >= 0.13)
VALUE_NORM_LOSS_CLASSES = ("MAPPOLoss", "IPPOLoss")
#: the value normalisers, by the names the specs use: TorchRL's RunningValueNorm and
#: PopArtValueNorm, built with shape=1 and their defaults
VALUE_NORMS = ("running", "popart")


class PPOCriticValueNorm(Protocol):
    """§4 with a value normaliser: the clipped critic loss of the multi-agent PPO losses."""

    def critic_loss_value_norm(
        self,
        *,
        loss_class: str,
        norm: str,
        warmup: torch.Tensor | None,
        value_net: torch.nn.Module,
        observation: torch.Tensor,
        old_value: torch.Tensor,
        returns: torch.Tensor,
        clip_value: float,
        critic_coeff: float,
        valid: torch.Tensor | None = None,
    ) -> CriticReport:
        """The squared-error critic loss of ``loss_class`` (one of VALUE_NORM_LOSS_CLASSES)
        built with ``clip_value`` (None: no clipping) and ``value_norm=`` a fresh normaliser ``norm`` (one of
        VALUE_NORMS), on a batch [B, 1] as :meth:`PPOCriticOptions.critic_loss_with` (the
        value network predicts on the returns' scale); ``warmup``: None, or value targets
        [N, 1] the caller folds into the normaliser (``value_norm.update(warmup)``) before the
        loss runs once. The loss is the one of the normalised values (target, prediction and
        stored prediction normalised with the statistics that include this batch's targets).
        ``valid``: None, or TorchRL's trajectory mask [B, 1] (bool) set at
        ``("collector", "mask")`` as in :meth:`PPOCriticMasks.critic_loss_masked`: the padding
        is left out of the loss, the clip fraction and the normaliser's statistics."""
        ...


@dataclass
class CompositeCriticReport:
    """What a PPO loss reports for the critic of a composite value network.

    loss: the ``loss_critic`` output as the loss's forward returns it: one tensor per value
        head (a mapping head -> tensor, still attached to the value network's graph), or one
        tensor when the loss returns a single one.
    value_clip_fraction: the reported share of clipped predictions per head (head -> float),
        one float for all heads, or None when none is reported.
    """

    loss: dict | torch.Tensor
    value_clip_fraction: dict | float | None


class PPOCriticComposite(Protocol):
    """§4 with a composite value network: one value head per entry (pytorch/rl#3031)."""

    def critic_loss_composite(
        self,
        *,
        value_net: torch.nn.Module,
        heads: tuple[str, ...],
        observation: torch.Tensor,
        old_value: dict,
        returns: dict,
        clip_value: float,
        critic_coeff: float,
    ) -> CompositeCriticReport:
        """The squared-error critic loss of ``ClipPPOLoss(clip_value=...)`` (one forward, as a
        training loop calls it) whose critic writes one value per head: ``value_net`` maps
        ``observation`` [B, K] to a tuple of K predictions [B, 1], written at
        ``("state_value", head)`` for ``head`` in ``heads``; ``old_value`` and ``returns`` map
        each head to its [B, 1] stored prediction and value target (a composite
        ``"state_value"`` and ``"value_target"`` in the batch)."""
        ...
