"""PPO value clipping done wrong, the ways other libraries and early patches did it.

Each mutant is a complete, pure-torch implementation of the PPO area of the interface (no
other area: those specs are "not applicable"), with TorchRL's scale convention (no 0.5).
"""

from __future__ import annotations

import torch

from conformance.interface import CriticLoss
from tests.mutants import implementation


class _Mutant:
    critic_scale = 2.0

    def critic_loss(self, *, value_net, observation, old_value, returns, clip_value,
                    clip_epsilon, critic_coeff):
        v = value_net(observation)
        if clip_value is None or clip_value is False:
            return CriticLoss(critic_coeff * ((v - returns) ** 2).mean(), None)
        c = clip_epsilon if clip_value is True else float(clip_value)
        if c < 0:
            raise ValueError("negative clip_value")
        loss, fraction = self.clipped(v, old_value, returns, c)
        return CriticLoss(critic_coeff * loss, float(fraction))

    @staticmethod
    def fraction(v, old, c):
        return ((v - old).abs() > c).double().mean()


class ClippedOnly(_Mutant):
    """stable-baselines3: MSE of the clipped prediction, no max with the unclipped loss."""

    def clipped(self, v, old, R, c):
        vclip = old + (v - old).clamp(-c, c)
        return ((vclip - R) ** 2).mean(), self.fraction(v, old, c)


class MinInsteadOfMax(_Mutant):
    """The optimistic minimum of the two losses (ray-project/ray#2233)."""

    def clipped(self, v, old, R, c):
        vclip = old + (v - old).clamp(-c, c)
        return torch.minimum((v - R) ** 2, (vclip - R) ** 2).mean(), self.fraction(v, old, c)


class WrongClipFraction(_Mutant):
    """Right loss, but the clip fraction of pytorch/rl#2005 before #2021: relative change."""

    def clipped(self, v, old, R, c):
        vclip = old + (v - old).clamp(-c, c)
        loss = torch.maximum((v - R) ** 2, (vclip - R) ** 2).mean()
        return loss, ((v / old - 1).abs() > c).double().mean()


class RaisesEverywhere(_Mutant):
    """Raises ValueError on every call: "rejects a negative clip_value" without computing any."""

    def critic_loss(self, **kwargs):
        raise ValueError("not implemented")


def _impl(name, area):
    return implementation(name, ppo_value_clipping=area)


CLIPPED_ONLY = _impl("clipped-only", ClippedOnly())
MIN_INSTEAD_OF_MAX = _impl("min-instead-of-max", MinInsteadOfMax())
WRONG_CLIP_FRACTION = _impl("wrong-clip-fraction", WrongClipFraction())
RAISES_EVERYWHERE = _impl("raises-everywhere", RaisesEverywhere())
