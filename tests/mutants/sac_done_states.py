"""SAC done-state handling done wrong, the ways upstream and naive fixes did it.

Each mutant is the reference loss pair (``impls.SACLoss`` / ``impls.DiscreteSACLoss``) with one
historical mistake put back, seen through the same adapter as TorchRL and the reference; it
provides no other area (those specs are "not applicable").
"""

from __future__ import annotations

from torchrl.objectives import DiscreteSACLoss as _UpstreamDiscrete
from torchrl.objectives import SACLoss as _UpstreamSAC

from conformance.implementations.torchrl_areas.sac_done_states import TorchRLSACDoneStates
from impls.sac_done_states import DiscreteSACLoss, SACLoss
from tests.mutants import implementation


def _upstream_target(upstream_method, loss, tensordict, skip: bool):
    """Run TorchRL 0.14.1's own target with the skip branch forced on or off."""
    held = loss.skip_done_states
    loss.skip_done_states = skip
    try:
        return upstream_method(loss, tensordict)
    finally:
        loss.skip_done_states = held


# pytorch/rl#2606 (main only, 2024-11-25 .. 12-02): done states masked whatever the flag says
class AlwaysMaskingSAC(SACLoss):
    def _compute_target_v2(self, tensordict):
        return _upstream_target(_UpstreamSAC._compute_target_v2, self, tensordict, True)


class AlwaysMaskingDiscreteSAC(DiscreteSACLoss):
    def _compute_target(self, tensordict):
        return _upstream_target(_UpstreamDiscrete._compute_target, self, tensordict, True)


# the flag accepted and stored, but never consulted (the actor runs on every next state)
class FlagIgnoredSAC(SACLoss):
    def _compute_target_v2(self, tensordict):
        return _upstream_target(_UpstreamSAC._compute_target_v2, self, tensordict, False)


class FlagIgnoredDiscreteSAC(DiscreteSACLoss):
    def _compute_target(self, tensordict):
        return _upstream_target(_UpstreamDiscrete._compute_target, self, tensordict, False)


# the per-agent mask squeezed to the root batch by any(): one terminated agent skips its row
class _RowMask:
    def terminal_mask(self, next_td):
        mask = super().terminal_mask(next_td)
        if mask is None:
            return None
        return mask.reshape(mask.shape[0], -1).any(-1)


class RowMaskSAC(_RowMask, SACLoss):
    pass


class RowMaskDiscreteSAC(_RowMask, DiscreteSACLoss):
    pass


# the skip mask read from done: truncated next states skipped like terminal ones
class _DoneMask:
    def terminal_mask(self, next_td):
        done = next_td.get(self.tensor_keys.done, None)
        return None if done is None else done.bool()


class DoneMaskSAC(_DoneMask, SACLoss):
    pass


class DoneMaskDiscreteSAC(_DoneMask, DiscreteSACLoss):
    pass


def _impl(name, sac, discrete):
    area = TorchRLSACDoneStates(sac, discrete, library=f"mutant {name}")
    return implementation(name, sac_done_states=area)


MASKING_ALWAYS_ON = _impl("masking-always-on", AlwaysMaskingSAC, AlwaysMaskingDiscreteSAC)
FLAG_IGNORED = _impl("flag-ignored", FlagIgnoredSAC, FlagIgnoredDiscreteSAC)
MASK_BROADCAST_WRONGLY = _impl("mask-broadcast-wrongly", RowMaskSAC, RowMaskDiscreteSAC)
TRUNCATION_AS_TERMINATION = _impl("truncation-as-termination", DoneMaskSAC, DoneMaskDiscreteSAC)
