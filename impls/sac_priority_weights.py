"""Importance weights per batch row, for SAC losses whose terms are per agent-step.

A mixin of ``impls.SACLoss`` / ``impls.DiscreteSACLoss`` (torchrl 0.14). Since pytorch/rl#3235
the losses read the prioritized sampler's weights (``"priority_weight"``, one per sampled row,
shape [B]) and reduce with them: ``sum(w * loss) / sum(w)`` for "mean", ``w * loss`` for "none".
Upstream hands the weights to ``_reduce`` as they are, which requires them to have the loss's
shape: a multi-agent loss, one term per agent ([B, N]), gets a ValueError ("Tensor and weights
shapes must match") for "mean" and a broadcasting error, or with N == B the weight of row n
applied to agent n of every row, for "none".

Here a row's weight is given to every agent-step of the row: the weights are aligned to the
loss like a validity mask (``_expand_loss_mask``: trailing singletons dropped, then broadcast
over the loss's trailing dims), and upstream's reduction is applied unchanged.
"""

from __future__ import annotations


class RowWeights:
    """The sampler's per-row weights broadcast over each row's agent-steps."""

    def _reduce_loss(self, loss, tensordict=None, *, weights=None):
        # torchrl 0.14's SAC losses call this with the loss, the batch and the weights only
        # (never a mask or a reduction of their own): the rest of upstream's keywords is not
        # taken, so that no path here goes unused.
        if weights is not None and weights.shape != loss.shape:
            weights = self._expand_loss_mask(weights, loss)
        return super()._reduce_loss(loss, tensordict, weights=weights)
