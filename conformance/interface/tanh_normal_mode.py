"""§1 TanhNormal mode: the calls its specs make."""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

import torch


class TanhNormalMode(Protocol):
    """Y = c + r * tanh(X), X ~ Normal(mu, scale^2), c = (high + low) / 2, r = (high - low) / 2.

    ``mu`` is ``loc``, or ``upscale * tanh(loc / upscale)`` with ``tanh_loc=True`` (the specs
    use ``tanh_loc=True`` only with the default bounds, where TorchRL adds no further shift).
    """

    def make(
        self,
        loc: torch.Tensor,
        scale: torch.Tensor,
        *,
        low: float | torch.Tensor = -1.0,
        high: float | torch.Tensor = 1.0,
        upscale: float = 5.0,
        tanh_loc: bool = False,
    ) -> object:
        """The implementation's distribution object for these parameters (any batch shape;
        ``scale`` may broadcast to ``loc`` or ``loc`` to ``scale``). ``low``/``high`` are numbers
        or tensors broadcastable to the batch (an action spec's per-dimension bounds), as
        TorchRL's ``TanhNormal`` takes them."""
        ...

    def mode(self, dist: object) -> torch.Tensor:
        """The mode of ``dist``, the way its library exposes it (dtype of ``loc``; shape of
        ``loc`` broadcast with ``scale``)."""


class TanhNormalScore(Protocol):
    """§1: the sample-and-score call a SAC actor trains on."""

    def sample_and_score(self, dist: object, *, seed: int) -> tuple[torch.Tensor, torch.Tensor]:
        """One reparametrised draw from ``dist`` (made by ``make``) with torch's RNG seeded by
        ``seed``, and the log-density the implementation's actor would train on for it, the way
        its actor computes it: ``(action, log_prob)``, ``action`` of ``loc``'s shape, ``log_prob``
        summed over the last dimension (``[*batch]``)."""
        ...


class TanhNormalCallableScale(Protocol):
    """§1: the distribution built with its scale given as a callable of loc (pytorch/rl#3296)."""

    def make_with_scale_fn(
        self,
        loc: torch.Tensor,
        scale_fn: Callable[[torch.Tensor], torch.Tensor],
        *,
        low: float = -1.0,
        high: float = 1.0,
    ) -> object:
        """The implementation's distribution for ``loc`` whose scale is ``scale_fn`` handed to the
        library as the callable itself (``torch.ones_like``, ``partial(torch.full_like,
        fill_value=...)``: what TorchRL documents to keep device transfers and graph breaks out of
        ``torch.compile``), not called by the adapter. The same object ``make`` returns for the
        scale ``scale_fn(loc)``, so that ``mode`` and ``sample_and_score`` take it."""
        ...
