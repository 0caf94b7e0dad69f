"""SAC done-state handling done wrong, the ways upstream and naive fixes did it.

Each mutant is the reference loss pair (``impls.SACLoss`` / ``impls.DiscreteSACLoss``) with one
historical mistake put back, seen through the same adapter as TorchRL and the reference; it
provides no other area (those specs are "not applicable").
"""

from __future__ import annotations

import torch
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


# --------------------------------------------------------------------- the §3 family mutants
# (conformance/test_sac_done_states_family.py)


# TorchRL 0.14.1's discrete actor loss put back: ``p * logits``, NaN for a masked action
class LogitsActorLossDiscreteSAC(DiscreteSACLoss):
    actor_loss = _UpstreamDiscrete.actor_loss


# TorchRL 0.14.1's discrete target put back: its skip path scores ``next_dist.logits``
class LogitsSkipPathDiscreteSAC(DiscreteSACLoss):
    _compute_target = _UpstreamDiscrete._compute_target


class _FirstTwoQ:
    """Not a historical bug but the way an ensemble breaks when its size is assumed: every
    minimum over the Q-networks reads the first two only (the one-module-per-network path
    that pytorch/rl#3500 fixed is not exercised by the adapter, which builds one module)."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        ensemble = self._vmap_qnetworkN0  # an instance attribute, set by the parent

        def first_two(td, params):
            out = ensemble(td, params)
            n = params.batch_size[0] if params.batch_size else 0
            if n <= 2:
                return out
            return out.apply(lambda t: torch.cat([t[:2], t[1:2].expand_as(t[2:])], 0))

        self._vmap_qnetworkN0 = first_two


class FirstTwoQSAC(_FirstTwoQ, SACLoss):
    pass


class FirstTwoQDiscreteSAC(_FirstTwoQ, DiscreteSACLoss):
    pass


MASKED_ACTION_ACTOR_NAN = _impl("masked-action-actor-nan", SACLoss, LogitsActorLossDiscreteSAC)
MASKED_ACTION_SKIP_NAN = _impl("masked-action-skip-nan", SACLoss, LogitsSkipPathDiscreteSAC)
FIRST_TWO_QVALUE_NETS = _impl("first-two-qvalue-nets", FirstTwoQSAC, FirstTwoQDiscreteSAC)
