"""Reading a loss tensor that a library's training step keeps in a local variable.

SB3's ``PPO.train()`` and skrl's ``PPO.update()`` compute their value loss with
``F.mse_loss(...)`` (``F`` = ``torch.nn.functional``, a module global of the library's file)
and expose only its float. ``recording_mse(module)`` swaps that global, for the duration of the
call, for a proxy that forwards every attribute to ``torch.nn.functional`` and records what
``mse_loss`` returned, so the adapter hands the spec the very tensor the library steps on.
"""

from __future__ import annotations

import contextlib
import types
from collections.abc import Iterator

import torch


@contextlib.contextmanager
def recording_mse(module) -> Iterator[list[torch.Tensor]]:
    real = module.F
    seen: list[torch.Tensor] = []

    def mse_loss(*args, **kwargs):
        out = real.mse_loss(*args, **kwargs)
        seen.append(out)
        return out

    proxy = types.ModuleType(f"{real.__name__}_recording")
    proxy.__dict__.update({k: v for k, v in vars(real).items() if not k.startswith("__")})
    proxy.mse_loss = mse_loss
    module.F = proxy
    try:
        yield seen
    finally:
        module.F = real
