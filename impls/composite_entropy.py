"""Per-head entropy coefficients of a PPO loss on a composite policy (§2, composite log-prob).

TorchRL 0.14's ``ClipPPOLoss`` weights each head's entropy as it comes when ``entropy_coeff`` is
a mapping, so a Normal head's element-wise entropy is broadcast against the other heads' instead
of being summed over its dimensions first. ``PerHeadEntropy`` is the fix, mixed into the
reference ``ClipPPOLoss`` (``impls/ppo_value_clipping.py``); the §2 specs check it through the
composite area's ``entropy_loss`` capability, so its mutants belong to that area.
"""

from __future__ import annotations

import torch
from tensordict import is_tensor_collection


class PerHeadEntropy:
    """Mixin for TorchRL's PPO losses: ``-sum_h c_h H_h`` with per-head coefficients."""

    def _weighted_loss_entropy(self, entropy):
        if self._entropy_coeff_map is None or not is_tensor_collection(entropy):
            return super()._weighted_loss_entropy(entropy)
        return head_entropy_loss(entropy, self._entropy_coeff_map, entropy.batch_dims)


def head_entropy_loss(entropy, coeff_map, batch_dims: int) -> torch.Tensor:
    """``-sum_h c_h H_h`` with each head's entropy summed over its own dimensions first."""
    total = None
    for key, head in entropy.items(include_nested=True, leaves_only=True):
        try:
            coeff = coeff_map[key]
        except KeyError as exc:
            raise KeyError(f"no entropy coefficient for head {key!r}; coefficients are keyed "
                           f"by the full key of the head's entropy: {sorted(coeff_map)}") from exc
        if head.ndim > batch_dims:
            head = head.flatten(batch_dims).sum(-1)
        term = -torch.as_tensor(coeff, dtype=head.dtype, device=head.device) * head
        total = term if total is None else total + term
    return total
