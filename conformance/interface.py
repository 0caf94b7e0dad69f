"""What an implementation must provide for the suite to check it, area by area.

An *implementation* is any object with one attribute per area (``AREAS`` below). An attribute
that is missing or ``None`` declares the area unsupported: its specs are reported as
"not applicable", never as passed. An area attribute may also raise ``Untestable`` when it
is looked up (e.g. a C++ extension that does not load next to the installed torch): its specs
are then reported as "cannot be tested here: <reason>".

Adapters for real libraries live in ``conformance/implementations/``; ``--impl pkg.mod:obj``
plugs in anything else that satisfies these protocols.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol, runtime_checkable

import torch


class Untestable(Exception):
    """The implementation cannot be exercised on this machine (the reason is the message)."""


@runtime_checkable
class Implementation(Protocol):
    name: str
    version: str


# --------------------------------------------------------------------------------------------
# §4 PPO value clipping
# --------------------------------------------------------------------------------------------


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


# --------------------------------------------------------------------------------------------
# §1 TanhNormal mode
# --------------------------------------------------------------------------------------------


class TanhNormalMode(Protocol):
    """Y = c + r * tanh(X), X ~ Normal(mu, scale^2), c = (high + low) / 2, r = (high - low) / 2.

    ``mu`` is ``loc``, or ``upscale * tanh(loc / upscale)`` with ``tanh_loc=True`` (the specs
    use ``tanh_loc=True`` only with the default bounds, where TorchRL adds no further shift).
    """

    def make(
        self,
        loc: torch.Tensor,
        scale: torch.Tensor,
        *,
        low: float = -1.0,
        high: float = 1.0,
        upscale: float = 5.0,
        tanh_loc: bool = False,
    ) -> object:
        """The implementation's distribution object for these parameters (any batch shape)."""
        ...

    def mode(self, dist: object) -> torch.Tensor:
        """The mode of ``dist``, the way its library exposes it (shape and dtype of ``loc``)."""
        ...


#: attribute name on an implementation -> human title (used by fixtures and reports)
AREAS: dict[str, str] = {
    "ppo_value_clipping": "PPO value clipping",
    "tanh_normal_mode": "TanhNormal mode",
}
