"""Reading the losses (and gradients) of a library's training step, which it keeps in locals.

``RecordingOptimizer``, ``DisabledScaler`` and ``LossRecorder`` stand in for a library's
optimiser, gradient scaler or optimiser wrapper for one step: they keep what the library hands
them and change no parameter, so the step reads as one evaluation of its losses.

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


class RecordingOptimizer:
    """Stands in for a library's torch optimiser: keeps the gradients present at each
    ``step()`` (by parameter name) and never changes a parameter, so that one training step
    can be read as a single evaluation of its losses."""

    def __init__(self, named):
        self.named = list(named)
        self.param_groups = [{"params": [p for _, p in self.named], "lr": 0.0}]
        self.steps: list[dict[str, torch.Tensor]] = []

    def zero_grad(self, set_to_none=True):
        for _, p in self.named:
            p.grad = None

    def step(self):
        self.steps.append({n: (torch.zeros_like(p) if p.grad is None else p.grad.clone())
                           for n, p in self.named})


class DisabledScaler:
    """What a disabled ``torch.amp.GradScaler`` does (skrl's agents call one around every
    ``backward()`` and ``step()``); subclasses change what ``scale()`` hands back."""

    def scale(self, loss):
        return loss

    def unscale_(self, optimizer):
        pass

    def step(self, optimizer):
        optimizer.step()

    def update(self):
        pass


class LossRecorder:
    """Stands in for an optimiser wrapper whose ``step(loss)`` differentiates and steps
    (Tianshou's ``Algorithm.Optimizer``): keeps each loss, differentiates nothing."""

    def __init__(self):
        self.losses: list[torch.Tensor] = []

    def step(self, loss, retain_graph=None, create_graph=False):
        self.losses.append(loss)
