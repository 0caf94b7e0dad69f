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
        the value target. ``clip_value`` None/False: no value clipping; True: use
        ``clip_epsilon``; a float: that threshold. Invalid thresholds must raise ValueError.
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
