"""The §5 family bugs put back into TorchRL 0.14.1's ``PrioritizedSliceSampler`` (one patched
class each), seen through the TorchRL adapter (``conformance/test_prioritized_replay_family.py``)."""

from __future__ import annotations

from torchrl.data import PrioritizedSampler, PrioritizedSliceSampler
from torchrl.data.replay_buffers.samplers import SliceSampler

from conformance.implementations.torchrl_areas.prioritized_replay import PrioritizedReplayArea
from tests.mutants import implementation


class NoStateSliceSampler(PrioritizedSliceSampler):
    """Before pytorch/rl#3990: ``SliceSampler``'s (empty) checkpoint methods win the MRO."""

    state_dict = SliceSampler.state_dict
    load_state_dict = SliceSampler.load_state_dict


class AliasingSliceSampler(PrioritizedSliceSampler):
    """Before pytorch/rl#3966: ``load_state_dict`` keeps the caller's objects."""

    def load_state_dict(self, state_dict):
        self._alpha, self._beta = state_dict["_alpha"], state_dict["_beta"]
        self._eps = state_dict["_eps"]
        self._max_priority = state_dict["_max_priority"]
        self._sum_tree = state_dict["_sum_tree"]
        self._min_tree = state_dict["_min_tree"]


def _impl(name, slice_cls):
    area = PrioritizedReplayArea(PrioritizedSampler, default_is_raw=True)
    area.slice_sampler_cls = slice_cls
    return implementation(name, prioritized_replay=area)


SLICE_STATE_NOT_SAVED = _impl("slice-state-not-saved", NoStateSliceSampler)
LOAD_ALIASES_CHECKPOINT = _impl("load-aliases-checkpoint", AliasingSliceSampler)
