"""Fixed reference implementations, drop-in replacements for TorchRL classes.

Names are imported lazily so that ``from impls import TanhNormal`` does not pay for (or fail
on) the modules of other areas.
"""

from __future__ import annotations

import importlib
import sys
import types

__version__ = "0.1.0"

_EXPORTS = {
    "ClipPPOLoss": "impls.ppo_value_clipping",
    "PPOLoss": "impls.ppo_value_clipping",
    "KLPENPPOLoss": "impls.ppo_value_clipping",
    "A2CLoss": "impls.ppo_value_clipping",
    "MAPPOLoss": "impls.ppo_value_clipping",
    "IPPOLoss": "impls.ppo_value_clipping",
    "clipped_value_loss": "impls.ppo_value_clipping",
    "CompositeDistribution": "impls.composite_log_prob",
    "ProbabilisticActor": "impls.composite_log_prob",
    "composite_sample_keys": "impls.composite_log_prob",
    "TanhNormal": "impls.tanh_normal_mode",
    "tanh_normal_mode": "impls.tanh_normal_mode",
    "SACLoss": "impls.sac_done_states",
    "DiscreteSACLoss": "impls.sac_done_states",
    "PrioritizedSampler": "impls.prioritized_replay",
    "PrioritizedReplayBuffer": "impls.prioritized_buffers",
    "TensorDictPrioritizedReplayBuffer": "impls.prioritized_buffers",
    "SegmentTree": "impls.segment_tree",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str):
    if name in _EXPORTS:
        return getattr(importlib.import_module(_EXPORTS[name]), name)
    raise AttributeError(f"module 'impls' has no attribute {name!r}")


def __dir__():
    return __all__


class _Package(types.ModuleType):
    """``impls.tanh_normal_mode`` is both a submodule (named after its area) and the function
    it exports; importing the submodule must not replace the public function by the module."""

    def __setattr__(self, name, value):
        if name in _EXPORTS and isinstance(value, types.ModuleType):
            return
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Package
