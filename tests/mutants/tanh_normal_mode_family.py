"""The §1 family bug put back into TorchRL 0.14.1's ``TanhNormal`` (a patched class), seen
through the TorchRL adapter (``conformance/test_tanh_normal_mode_family.py``)."""

from __future__ import annotations

from torchrl.modules import TanhNormal

from conformance.implementations.torchrl_areas.tanh_normal_mode import TanhNormalAPI
from tests.mutants import implementation


class RoundedScoreTanhNormal(TanhNormal):
    """Before pytorch/rl#4080: the actor's draw is scored from the (rounded) action."""

    def rsample_and_log_prob(self, sample_shape=()):
        action = self.rsample(sample_shape)
        return action, self.log_prob(action)


SCORE_OF_ROUNDED_ACTION = implementation("score-of-rounded-action",
                                         tanh_normal_mode=TanhNormalAPI(RoundedScoreTanhNormal))
