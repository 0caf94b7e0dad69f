"""Drop-ins for TorchRL's prioritized buffer classes, holding the reference sampler.

``torchrl.data.TensorDictPrioritizedReplayBuffer`` (what TorchRL's prioritized examples use)
builds its ``PrioritizedSampler`` itself and takes no ``sampler=``; ``PrioritizedReplayBuffer``
takes one but defaults to TorchRL's. These subclasses accept the same arguments (plus the
reference sampler's keyword-only options) and hold an ``impls.PrioritizedSampler`` instead;
everything else is TorchRL's buffer.

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
        as upstream, plus ``dtype`` (of the importance weights), ``max_priority_within_buffer``,
        ``upper_priority`` and ``initial_priority``, passed to the sampler.
    """

    def __init__(self, *, alpha: float, beta: float, eps: float = 1e-8,
                 reduction: str = "max", sampler_device=None, dtype=None,
                 max_priority_within_buffer: bool = False, upper_priority: float | None = None,
                 initial_priority: float = 1.0, **kwargs) -> None:
        super().__init__(alpha=alpha, beta=beta, eps=eps, reduction=reduction,
                         sampler_device=sampler_device, **kwargs)
        options = {} if dtype is None else {"dtype": dtype}
        _swap_sampler(self, PrioritizedSampler(
            self._storage.max_size, alpha, beta, eps, reduction=reduction,
            max_priority_within_buffer=max_priority_within_buffer, device=sampler_device,
            upper_priority=upper_priority, initial_priority=initial_priority, **options))


class PrioritizedReplayBuffer(_TorchRLPrioritizedReplayBuffer):
    """``torchrl.data.PrioritizedReplayBuffer`` whose default sampler is
    ``impls.PrioritizedSampler`` (an explicit ``sampler=`` is used as given)."""

    def __init__(self, *, alpha: float, beta: float, eps: float = 1e-8, dtype=None,
                 sampler=None, sampler_device=None, max_priority_within_buffer: bool = False,
                 upper_priority: float | None = None, initial_priority: float = 1.0,
                 **kwargs) -> None:
        dtype = torch.float if dtype is None else dtype
        if sampler is None:
            storage = kwargs.get("storage")
            capacity = 1_000 if storage is None else storage.max_size  # upstream's ListStorage
            sampler = PrioritizedSampler(
                capacity, alpha, beta, eps, dtype,
                max_priority_within_buffer=max_priority_within_buffer, device=sampler_device,
                upper_priority=upper_priority, initial_priority=initial_priority)
            sampler_device = None  # upstream refuses a device next to a sampler
        super().__init__(alpha=alpha, beta=beta, eps=eps, dtype=dtype, sampler=sampler,
                         sampler_device=sampler_device, **kwargs)
