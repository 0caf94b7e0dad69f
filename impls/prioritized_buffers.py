"""Drop-ins for TorchRL's prioritized buffer classes, holding the reference sampler.

``torchrl.data.TensorDictPrioritizedReplayBuffer`` (what TorchRL's prioritized examples use)
builds its ``PrioritizedSampler`` itself and takes no ``sampler=``; ``PrioritizedReplayBuffer``
takes one but defaults to TorchRL's. These subclasses accept the same arguments (plus the
reference sampler's ``upper_priority``) and hold an ``impls.PrioritizedSampler`` instead;
everything else is TorchRL's buffer. The sampler's other reference options
(``max_priority_within_buffer``, ``initial_priority``) are not offered here: TorchRL's classes
have neither (a buffer that needs them takes a sampler built with them).

The sampler is swapped right after TorchRL's constructor (which builds its own, unused), so
the buffer's wiring (sync or not, generator, prefetch, transforms) stays TorchRL's.
"""

from __future__ import annotations

import torch
from torchrl.data import PrioritizedReplayBuffer as _TorchRLPrioritizedReplayBuffer
from torchrl.data import TensorDictPrioritizedReplayBuffer as _TorchRLTDPrioritizedReplayBuffer

from impls.prioritized_replay import PrioritizedSampler


def _swap_sampler(buffer, sampler: PrioritizedSampler) -> None:
    """Put ``sampler`` where TorchRL's buffer keeps its prioritized sampler, keeping the
    generator TorchRL's constructor gave the one it replaces."""
    synced = getattr(buffer, "_sync", True)
    old = buffer._sampler if synced else buffer._prioritized_sampler
    sampler._rng = getattr(old, "_rng", None)
    if synced:
        buffer._sampler = sampler
    else:
        buffer._prioritized_sampler = sampler


class TensorDictPrioritizedReplayBuffer(_TorchRLTDPrioritizedReplayBuffer):
    """``torchrl.data.TensorDictPrioritizedReplayBuffer`` with ``impls.PrioritizedSampler``.

    Keyword Args:
        as upstream, plus ``upper_priority`` (a cap on the default priority), passed to the
        sampler. ``sampler_device`` reaches the reference's sampler only: TorchRL's, built by
        its constructor and dropped, stays on the CPU (no CUDA trees needed).
    """

    def __init__(self, *, alpha: float, beta: float, eps: float = 1e-8,
                 reduction: str = "max", sampler_device=None,
                 upper_priority: float | None = None, **kwargs) -> None:
        super().__init__(alpha=alpha, beta=beta, eps=eps, reduction=reduction, **kwargs)
        _swap_sampler(self, PrioritizedSampler(
            self._storage.max_size, alpha, beta, eps, reduction=reduction, device=sampler_device,
            upper_priority=upper_priority))


class PrioritizedReplayBuffer(_TorchRLPrioritizedReplayBuffer):
    """``torchrl.data.PrioritizedReplayBuffer`` whose default sampler is
    ``impls.PrioritizedSampler`` (an explicit ``sampler=`` is used as given), plus
    ``upper_priority`` (a cap on the default priority), passed to that sampler."""

    def __init__(self, *, alpha: float, beta: float, eps: float = 1e-8, dtype=torch.float,
                 sampler=None, sampler_device=None, upper_priority: float | None = None,
                 **kwargs) -> None:
        if sampler is None:
            storage = kwargs.get("storage")
            capacity = 1_000 if storage is None else storage.max_size  # upstream's ListStorage
            sampler = PrioritizedSampler(capacity, alpha, beta, eps, dtype, device=sampler_device,
                                         upper_priority=upper_priority)
            sampler_device = None  # upstream refuses a device next to a sampler
        super().__init__(alpha=alpha, beta=beta, eps=eps, dtype=dtype, sampler=sampler,
                         sampler_device=sampler_device, **kwargs)
