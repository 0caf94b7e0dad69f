"""SAC losses whose ``skip_done_states=True`` works for every done layout.

Drop-in subclasses of torchrl 0.14's ``SACLoss`` and ``DiscreteSACLoss``. Only the TD target
changes; with ``skip_done_states=False`` (the default) it is the upstream computation.

With ``skip_done_states=True`` upstream compacts the ``next`` tensordict with
``~done.squeeze(-1)``; that breaks when done has more dims than the loss batch (agents),
changes the batch the actor sees, still runs the continuous Q-network on the terminal rows
(0 * NaN = NaN in the target) and, masking by ``done``, bootstraps truncated transitions from
zero actions or zero values (pytorch/rl#2590, #2612, #2613). Here, instead:

- what is skipped is the *terminated* next states (``terminated``, falling back on ``done``
  when absent, as the value estimators do): a truncated next state is a real state and is
  bootstrapped like any other;
- skipping *neutralises* instead of compacting: for every network input under ``"next"``, the
  entries of terminated agent-steps are replaced by the same entries of the current step (a
  state the actor and the Q-networks see anyway in the other loss terms: every network input
  is read at the current step by those terms, so it is always there, in the same shape).
  Shapes never change, so fixed-batch actors and
  centralised critics keep working, and no terminal observation reaches any network;
- the mask keeps the terminated key's own batch dims (``[B, N, 1]`` under an agent group, or at
  the root) and is aligned to each input by dropping trailing dims (with ``all``: a per-row
  input is replaced only when every agent of the row terminated) until its shape is a prefix
  of the input's, then broadcasting over the rest;
- the next-state value of terminated agent-steps is set to exactly 0 (never ``0 * V``).

The caller's tensordict is never written to, except for the priority (``td_error``) that
TorchRL's losses write for prioritized replay buffers.

``SACLoss``'s automatic target entropy is ``impls/sac_target_entropy.py``'s; both losses give
a prioritized sampler's per-row weight to every agent-step of the row
(``impls/sac_priority_weights.py``). With
``reduction="none"`` both losses keep upstream's per-sample outputs (pytorch/rl#3426).

Discrete SAC computes ``sum_a p log p`` with ``xlogy`` in both modes (exact, and 0 where an
action has probability 0), so the two modes also agree when a probability underflows.
"""

from __future__ import annotations

import torch
from tensordict import TensorDictBase
from torchrl.envs.utils import ExplorationType, set_exploration_type
from torchrl.objectives import DiscreteSACLoss as _TorchRLDiscreteSACLoss
from torchrl.objectives import SACLoss as _TorchRLSACLoss
from torchrl.objectives.sac import compute_rsample_log_prob

from impls.sac_priority_weights import RowWeights
from impls.sac_target_entropy import AutoTargetEntropy


def align_mask(mask: torch.Tensor, shape: torch.Size) -> torch.Tensor:
    """``mask`` reduced (``all`` over trailing dims) until it prefixes ``shape``, then
    broadcast to ``shape``."""
    m = mask
    while m.ndim and tuple(shape[: m.ndim]) != tuple(m.shape):
        m = m.all(-1)
    return m.reshape(*m.shape, *([1] * (len(shape) - m.ndim))).expand(shape)


def neutralise(tensordict: TensorDictBase, next_td: TensorDictBase, keys, mask) -> None:
    """Replace, in ``next_td`` (in place), the entries of ``keys`` where ``mask`` is set by the
    current-step entries of ``tensordict``. Every key is a network input, which the actor and
    Q losses read at the current step: a batch without it (or with another shape there) fails
    those terms anyway, so no fallback is needed."""
    for key in keys:
        value = next_td.get(key)
        next_td.set(key, torch.where(align_mask(mask, value.shape), tensordict.get(key), value))


class _SkipTerminal:
    """What both losses share: which next states are skipped and how."""

    def terminal_mask(self, next_td: TensorDictBase) -> torch.Tensor:
        """The agent-steps whose next state is skipped: terminated ones, in the shape of the
        terminated entry; done where the batch has no terminated entry (data written before
        done was split, read by the value estimators the same way). A batch with neither
        cannot be bootstrapped at all (the value estimator needs done)."""
        mask = next_td.get(self.tensor_keys.terminated, None)
        if mask is None:
            mask = next_td.get(self.tensor_keys.done)
        return mask.bool()

    def _network_inputs(self) -> set:
        keys = set(self.actor_network.in_keys) | set(self.qvalue_network.in_keys)
        keys.discard(self.tensor_keys.action)
        return keys

    def _skippable_next(self, tensordict: TensorDictBase):
        """The ``next`` tensordict to evaluate V(s') on, and the skip mask (or None)."""
        next_td = tensordict.get("next").copy()
        if not self.skip_done_states:
            return next_td, None
        mask = self.terminal_mask(next_td)
        if not mask.any():
            return next_td, None
        neutralise(tensordict, next_td, self._network_inputs(), mask)
        return next_td, mask

    def _bootstrap(self, tensordict, next_value, mask) -> torch.Tensor:
        if mask is not None:
            next_value = next_value.masked_fill(align_mask(mask, next_value.shape), 0.0)
        tensordict.set(("next", self.value_estimator.tensor_keys.value), next_value)
        return self.value_estimator.value_estimate(tensordict).squeeze(-1)


class SACLoss(_SkipTerminal, RowWeights, AutoTargetEntropy, _TorchRLSACLoss):
    """Drop-in for ``torchrl.objectives.SACLoss`` (torchrl 0.14) with a ``skip_done_states``
    that skips terminated next states only, in any done layout, without reaching the networks,
    and a ``target_entropy="auto"`` that counts every head and no agent
    (``impls/sac_target_entropy.py``)."""

    def _compute_target_v2(self, tensordict: TensorDictBase) -> torch.Tensor:
        tensordict = tensordict.clone(False)
        with torch.no_grad():
            next_td, mask = self._skippable_next(tensordict)
            with set_exploration_type(ExplorationType.RANDOM), self.actor_network_params.to_module(
                self.actor_network, preserve_module_state=False
            ):
                dist = self.actor_network.get_dist(next_td)
                next_action, next_log_prob = compute_rsample_log_prob(dist)
            next_td.set(self.tensor_keys.action, next_action)
            q = self._vmap_qnetworkN0(next_td, self.target_qvalue_network_params).get(
                self.tensor_keys.state_action_value
            )
            # q is [Q-networks, *batch, 1]; the log-prob [*batch] or [*batch, 1]
            next_log_prob = next_log_prob.reshape(q.shape[1:])
            next_value = (q - self._alpha * next_log_prob).amin(0)
            return self._bootstrap(tensordict, next_value, mask)


class DiscreteSACLoss(_SkipTerminal, RowWeights, _TorchRLDiscreteSACLoss):
    """Drop-in for ``torchrl.objectives.DiscreteSACLoss`` (torchrl 0.14), fixed as ``SACLoss``."""

    # TorchRL declares this list on its class and tensordict turns it into a property when
    # *that* class is first instantiated (TensorDictModuleBase.__new__ reads cls.__dict__
    # only): declared here too, this class gets its own, whichever class is built first (else
    # select_out_keys finds the raw list: 'list' object has no attribute 'fset')
    out_keys = ["loss_actor", "loss_qvalue", "loss_alpha", "alpha", "entropy"]

    def _compute_target(self, tensordict: TensorDictBase) -> torch.Tensor:
        tensordict = tensordict.clone(False)
        with torch.no_grad():
            next_td, mask = self._skippable_next(tensordict)
            with self.actor_network_params.to_module(
                self.actor_network, preserve_module_state=False
            ):
                dist = self.actor_network.get_dist(next_td)
            probs = dist.probs
            q = self._vmap_qnetworkN0(next_td, self.target_qvalue_network_params).get(
                self.tensor_keys.action_value
            )
            expected_q = (probs * q.amin(0)).sum(-1, keepdim=True)
            neg_entropy = torch.special.xlogy(probs, probs).sum(-1, keepdim=True)
            next_value = expected_q - self._alpha * neg_entropy
            return self._bootstrap(tensordict, next_value, mask)

    def actor_loss(self, tensordict: TensorDictBase) -> tuple[torch.Tensor, dict]:
        """Upstream's exact expectation over the actions, with 0 log 0 = 0: a masked action
        (logit -inf, probability 0) contributes nothing, where upstream's ``p * logits`` gives
        ``0 * -inf = NaN`` in the loss and its gradients."""
        weights = self._maybe_get_priority_weight(tensordict)
        with self.actor_network_params.to_module(self.actor_network, preserve_module_state=False):
            dist = self.actor_network.get_dist(tensordict.clone(False))
        prob = dist.probs
        log_prob = torch.where(prob > 0, dist.logits, torch.zeros_like(prob))
        td_q = tensordict.select(*self.qvalue_network.in_keys)
        td_q = self._vmap_qnetworkN0(td_q, self._cached_detached_qvalue_params)
        min_q = td_q.get(self.tensor_keys.action_value).min(0)[0]
        loss = (prob * (self._alpha * log_prob - min_q)).sum(-1)
        loss = self._reduce_loss(loss, tensordict=tensordict, weights=weights)
        return loss, {"log_prob": (log_prob * prob).sum(-1).detach()}

