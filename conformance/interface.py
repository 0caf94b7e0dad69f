"""What an implementation must provide for the suite to check it, area by area.

An *implementation* is any object with one attribute per area (``AREAS`` below). An attribute
that is missing or ``None`` declares the area unsupported: its specs are reported as
"not applicable", never as passed. An area attribute may also raise ``Untestable`` when it
is looked up (e.g. a C++ extension that does not load next to the installed torch): its specs
are then reported as "cannot be tested here: <reason>".

Adapters for real libraries live in ``conformance/implementations/``; ``--impl pkg.mod:obj``
plugs in anything else that satisfies these protocols.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol, runtime_checkable

import numpy as np
import torch


class Untestable(Exception):
    """The implementation cannot be exercised on this machine (the reason is the message)."""


@runtime_checkable
class Implementation(Protocol):
    name: str
    version: str


# --------------------------------------------------------------------------------------------
# §4 PPO value clipping
# --------------------------------------------------------------------------------------------


@dataclass
class CriticLoss:
    """What a PPO loss reports for its critic term.

    loss: the scalar critic loss, still attached to the value network's graph.
    value_clip_fraction: the reported share of clipped value predictions, or None when the
        implementation reports none (it must report one whenever clipping is on).
    """

    loss: torch.Tensor
    value_clip_fraction: float | None


class PPOValueClipping(Protocol):
    #: ``loss == critic_scale * critic_coeff * baselines_vf_loss`` where ``baselines_vf_loss``
    #: is Baselines' ``.5 * mean(max(...))``. TorchRL's "l2" applies no 0.5, so its scale is 2.
    critic_scale: float

    def critic_loss(
        self,
        *,
        value_net: torch.nn.Module,
        observation: torch.Tensor,
        old_value: torch.Tensor,
        returns: torch.Tensor,
        clip_value: float | bool | None,
        clip_epsilon: float,
        critic_coeff: float,
    ) -> CriticLoss:
        """Critic loss of a clipped PPO loss with the squared-error critic.

        ``value_net`` maps ``observation`` [B, 1] to the new value prediction [B, 1];
        ``old_value`` [B, 1] is the prediction stored at collection time; ``returns`` [B, 1]
        the value target. ``clip_value`` None/False: no value clipping; True: use
        ``clip_epsilon``; a float: that threshold. Invalid thresholds must raise ValueError.
        """
        ...


# --------------------------------------------------------------------------------------------
# §5 Prioritized replay: max priority within the buffer
# --------------------------------------------------------------------------------------------


@dataclass
class PrioritizedDraw:
    """One ``sample`` call: flat storage indices (row-major), the ids of the items returned with
    them (as written by ``extend``) and their importance weights, all of length ``batch_size``."""

    index: np.ndarray
    item: np.ndarray
    weight: np.ndarray


class PrioritizedBuffer(Protocol):
    """A replay buffer with a prioritized sampler, in-buffer max-priority tracking on.

    Indices are flat (row-major) positions in the storage, whose shape is ``[capacity]`` or
    ``[capacity // row_width, row_width]``. Priorities are raw (before ``(p + eps) ** alpha``).
    """

    def __len__(self) -> int:
        """Number of items stored."""
        ...

    def extend(self, rows: int) -> np.ndarray:
        """Write ``rows`` new rows (``rows * row_width`` items, whose ids continue 0, 1, 2, ... in
        row-major order) at the ring-buffer cursor; return the flat indices written."""
        ...

    def update_priority(self, index: np.ndarray, priority: np.ndarray) -> None:
        """Set the raw priorities of stored items (flat indices, no repeats)."""
        ...

    def sample(self, batch_size: int, generator: torch.Generator) -> PrioritizedDraw:
        """Draw ``batch_size`` items with replacement, using only ``generator`` for randomness."""
        ...

    def tree_values(self) -> np.ndarray:
        """The sampling weight held for each stored flat index ``0 .. len-1``, in order."""
        ...

    def default_priority(self) -> float:
        """The raw priority the sampler reports it would give a new item now."""
        ...

    def set_alpha(self, alpha: float) -> None:
        """Change the priority exponent of a buffer that already holds items."""
        ...

    def state_dict(self) -> object:
        """A checkpoint of the whole buffer (independent of later changes to it)."""
        ...

    def load_state_dict(self, state: object) -> None:
        """Restore a checkpoint taken from a buffer built with the same parameters."""
        ...


class PrioritizedReplay(Protocol):
    #: the documented default priority of items written into an empty buffer
    initial_priority: float

    def buffer(
        self,
        *,
        capacity: int,
        alpha: float,
        beta: float,
        eps: float,
        upper_priority: float | None = None,
        row_width: int = 1,
    ) -> PrioritizedBuffer:
        """An empty buffer of ``capacity`` items. ``upper_priority``: cap on the default priority
        (an implementation without one raises NotImplementedError with the reason).
        ``row_width > 1``: a two-dimensional storage whose rows are written whole."""
        ...


#: attribute name on an implementation -> human title (used by fixtures and reports)
AREAS: dict[str, str] = {
    "ppo_value_clipping": "PPO value clipping",
    "prioritized_replay": "Prioritized replay max priority",
}
