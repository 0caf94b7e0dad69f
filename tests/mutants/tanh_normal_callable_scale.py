"""TorchRL 0.14.1's ``TanhNormal`` (patched classes) taking a callable scale wrong, seen through
the TorchRL adapter (``conformance/test_tanh_normal_mode_callable_scale.py``):

- ``CALLABLE_IGNORED``: a callable scale is replaced by ones (a constructor that falls back to
  the unit scale for anything that is not a tensor or a number): right for ``torch.ones_like``
  only;
- ``CALLABLE_REFUSED``: the constructor converts the scale with ``torch.as_tensor``, as TorchRL
  did before 0.11 (pytorch/rl#3296): every callable raises TypeError;
- ``UNMUTATED``: TorchRL 0.14.1's class itself, through the same adapter.
"""

from __future__ import annotations

import torch
from torchrl.modules import TanhNormal

from conformance.implementations.torchrl_areas.tanh_normal_mode import TanhNormalAPI
from tests.mutants import implementation


class _CallableIgnored(TanhNormal):
    def __init__(self, loc, scale, *args, **kwargs):
        if callable(scale) and not isinstance(scale, torch.Tensor):
            scale = torch.ones_like(loc)
        super().__init__(loc, scale, *args, **kwargs)


class _CallableRefused(TanhNormal):
    def __init__(self, loc, scale, *args, **kwargs):
        if not isinstance(scale, torch.Tensor):
            scale = torch.as_tensor(scale, dtype=loc.dtype)  # TypeError for a callable
        super().__init__(loc, scale, *args, **kwargs)


def _torchrl(name: str, dist_cls) -> object:
    return implementation(name.lower().replace("_", "-"),
                          tanh_normal_mode=TanhNormalAPI(dist_cls))


MUTANTS = ["CALLABLE_IGNORED", "CALLABLE_REFUSED"]
CALLABLE_IGNORED = _torchrl("CALLABLE_IGNORED", _CallableIgnored)
CALLABLE_REFUSED = _torchrl("CALLABLE_REFUSED", _CallableRefused)
UNMUTATED = _torchrl("UNMUTATED", TanhNormal)
