"""The reference SAC losses broken where §3's importance-weight specs
(``conformance/test_sac_done_states_priority_weights.py``) look:

- ``WEIGHTS_IGNORED``: the sampler's weights are not read (every release before
  pytorch/rl#3235);
- ``COUNT_NORMALISED``: the weighted mean divided by the number of terms while the adapter
  declares TorchRL's normalisation by the weights;
- ``WEIGHTS_AS_GIVEN``: upstream's reduction put back (torchrl 0.14.1): the row weights [B] are
  applied as they are to per-agent-step losses [B, N].
"""

from __future__ import annotations

from torchrl.objectives.common import LossModule

from conformance.implementations.torchrl_areas.sac_done_states import TorchRLSACDoneStates
from impls.sac_done_states import DiscreteSACLoss, SACLoss
from tests.mutants import implementation


class _WeightsIgnored:
    def _maybe_get_priority_weight(self, tensordict):
        return None


class _CountNormalised:
    def _reduce_loss(self, loss, tensordict=None, *, weights=None):
        if weights is not None and self.reduction == "mean":
            weights = self._expand_loss_mask(weights, loss)
            return (loss * weights).sum() / loss.numel()
        return super()._reduce_loss(loss, tensordict, weights=weights)


class _WeightsAsGiven:
    _reduce_loss = LossModule._reduce_loss


class _Nothing:
    pass


def _impl(name: str, mixin):
    sac = type(f"{name}SAC", (mixin, SACLoss), {})
    discrete = type(f"{name}DiscreteSAC", (mixin, DiscreteSACLoss),
                    {"out_keys": list(DiscreteSACLoss.out_keys)})
    area = TorchRLSACDoneStates(sac, discrete, library=f"mutant {name}")
    return implementation(name.lower().replace("_", "-"), sac_done_states=area)


MUTANTS = ["WEIGHTS_IGNORED", "COUNT_NORMALISED", "WEIGHTS_AS_GIVEN"]
WEIGHTS_IGNORED = _impl("WEIGHTS_IGNORED", _WeightsIgnored)
COUNT_NORMALISED = _impl("COUNT_NORMALISED", _CountNormalised)
WEIGHTS_AS_GIVEN = _impl("WEIGHTS_AS_GIVEN", _WeightsAsGiven)
UNMUTATED = _impl("UNMUTATED", _Nothing)
