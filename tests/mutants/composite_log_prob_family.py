"""The §2 family done wrong on the PPO loss of a composite policy (the reference classes with
one mistake put back each), seen through the TorchRL adapter
(``conformance/test_composite_log_prob_family.py``)."""

from __future__ import annotations

from torchrl.objectives import ClipPPOLoss as _UpstreamClipPPOLoss

from conformance.implementations.torchrl_areas.composite_log_prob import TensorDictComposite
from impls import ClipPPOLoss, CompositeDistribution, ProbabilisticActor
from tests.mutants import implementation


class AveragedLogWeights(ClipPPOLoss):
    """Not historical (pytorch/rl#2791 fixed log-weights left per head): the heads'
    log-weights averaged instead of summed."""

    def _log_weight(self, tensordict, adv_shape):
        log_weight, *rest = super()._log_weight(tensordict, adv_shape)
        return (log_weight / len(self.tensor_keys.action), *rest)


class UpstreamEntropyWeights(ClipPPOLoss):
    """TorchRL 0.14.1's per-head entropy weighting put back: each head's entropy weighted as
    it comes (a Normal head's element-wise entropy broadcast against the others)."""

    _weighted_loss_entropy = _UpstreamClipPPOLoss._weighted_loss_entropy


class TopLevelEntropyKeys(ClipPPOLoss):
    """Before pytorch/rl#3101: per-head coefficients looked up by top-level key only."""

    def _weighted_loss_entropy(self, entropy):
        if self._entropy_coeff_map is None:
            return super()._weighted_loss_entropy(entropy)
        total = None
        for name, head in entropy.items():
            try:
                coeff = self._entropy_coeff_map[name]
            except KeyError as exc:
                raise KeyError(f"Missing entropy coeff for head '{name}'") from exc
            term = -coeff * head
            total = term if total is None else total + term
        return total


def _impl(name, loss_cls):
    area = TensorDictComposite(CompositeDistribution, ProbabilisticActor, loss_cls)
    return implementation(name, composite_log_prob=area)


LOG_WEIGHTS_AVERAGED = _impl("log-weights-averaged", AveragedLogWeights)
ENTROPY_ELEMENTWISE = _impl("entropy-elementwise", UpstreamEntropyWeights)
ENTROPY_TOP_LEVEL_KEYS = _impl("entropy-top-level-keys", TopLevelEntropyKeys)
