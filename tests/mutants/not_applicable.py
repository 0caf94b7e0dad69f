"""PPO areas that raise NotImplementedError in different places, for the "not applicable" rule
(conformance/plugin/not_applicable.py): only the implementation's own declaration, with a reason,
is "not applicable"; a NotImplementedError from anywhere else stays a failure."""

from __future__ import annotations

import torch

from tests.mutants import implementation
from tests.mutants.ppo_value_clipping import _Mutant


class Baselines(_Mutant):
    """The right loss (so that every spec it can express passes)."""

    def clipped(self, v, old, R, c):
        vclip = old + (v - old).clamp(-c, c)
        loss = torch.maximum((v - R) ** 2, (vclip - R) ** 2).mean()
        return loss, self.fraction(v, old, c)


class DeclaresTrueUnsupported(Baselines):
    """Has no "use clip_epsilon" value, and says so from its own code."""

    def critic_loss(self, *, clip_value, **kwargs):
        if clip_value is True:
            raise NotImplementedError("this library has no 'same as clip_epsilon' threshold")
        return super().critic_loss(clip_value=clip_value, **kwargs)


class DeclaresWithoutReason(Baselines):
    """A NotImplementedError with no message: no reason, so no "not applicable"."""

    def critic_loss(self, *, clip_value, **kwargs):
        if clip_value is True:
            raise NotImplementedError
        return super().critic_loss(clip_value=clip_value, **kwargs)


class LibraryRaises(Baselines):
    """The library it wraps raises NotImplementedError (torch's abstract Distribution.entropy):
    raised outside the implementation's own code, so it stays a failure."""

    def critic_loss(self, *, clip_value, **kwargs):
        if clip_value is True:
            torch.distributions.Distribution(validate_args=False).entropy()
        return super().critic_loss(clip_value=clip_value, **kwargs)


class ReRaisesLibrary(Baselines):
    """Catches the library's NotImplementedError and re-raises it unchanged: the raising frame
    is still the library's."""

    def critic_loss(self, *, clip_value, **kwargs):
        if clip_value is True:
            try:
                torch.distributions.Distribution(validate_args=False).entropy()
            except NotImplementedError:
                raise
        return super().critic_loss(clip_value=clip_value, **kwargs)


DECLARES = implementation("declares", ppo_value_clipping=DeclaresTrueUnsupported())
NO_REASON = implementation("no-reason", ppo_value_clipping=DeclaresWithoutReason())
LIBRARY_RAISES = implementation("library-raises", ppo_value_clipping=LibraryRaises())
RE_RAISES = implementation("re-raises", ppo_value_clipping=ReRaisesLibrary())
