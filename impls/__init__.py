"""Fixed reference implementations, drop-in replacements for TorchRL classes.

Names are imported lazily so that ``from impls import TanhNormal`` does not pay for (or fail
on) the modules of other areas.
"""

from __future__ import annotations

import importlib

__version__ = "0.1.0"

_EXPORTS = {
    "ClipPPOLoss": "impls.ppo",
    "clipped_value_loss": "impls.ppo",
    "CompositeDistribution": "impls.composite",
    "ProbabilisticActor": "impls.composite",
    "composite_sample_keys": "impls.composite",
    "TanhNormal": "impls.tanh_normal",
    "tanh_normal_mode": "impls.tanh_normal",
    "SACLoss": "impls.sac",
    "DiscreteSACLoss": "impls.sac",
    "PrioritizedSampler": "impls.prioritized",
    "SegmentTree": "impls.prioritized",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str):
    if name in _EXPORTS:
        return getattr(importlib.import_module(_EXPORTS[name]), name)
    raise AttributeError(f"module 'impls' has no attribute {name!r}")


def __dir__():
    return __all__
