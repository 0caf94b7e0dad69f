"""Composite log-probs done wrong, the historical ways.

Each mutant is a complete, pure-torch implementation of the composite area of the interface (no
tensordict, no TorchRL; other areas are "not applicable"), right in everything but its one bug.
``CONTROL`` is the same implementation without a bug: it must pass every spec, which shows the
mutants fail for their bug alone.
"""

from __future__ import annotations

import torch

from conformance.interface import COMPOSITE_EXPLORATION_TYPES, CompositeLogProbs, CompositePPOStep
from tests.mutants import implementation

_WHERE = {"aggregate": "aggregate"}


class _PureTorch:
    exploration_types = COMPOSITE_EXPLORATION_TYPES

    # ---------------------------------------------------------------- hooks (the bugs go here)
    def categorical_log_prob(self, logits, action):
        if action.ndim == logits.ndim and action.shape[-1] == 1:  # stored [*batch, 1]
            action = action.squeeze(-1)
        log_pmf = torch.log_softmax(logits, -1)
        log_pmf = log_pmf.expand(*action.shape, log_pmf.shape[-1])  # leading sample dims
        return log_pmf.gather(-1, action.long().unsqueeze(-1)).squeeze(-1)

    def reduce(self, lp, batch_ndim, sample_ndim):
        """Sum a head's log-prob over the dims beyond the distribution's batch."""
        return lp.flatten(batch_ndim, -1).sum(-1) if lp.ndim > batch_ndim else lp

    def combine(self, reduced: list):
        return sum(reduced)

    # ---------------------------------------------------------------- plumbing
    def _head_log_prob(self, head, action):
        if head.kind == "categorical":
            n = head.params["logits"].shape[-1]
            if action.numel() and not bool(((action >= 0) & (action < n)).all()):
                raise ValueError(f"an action of a categorical head is outside [0, {n})")
            return self.categorical_log_prob(head.params["logits"], action)
        return torch.distributions.Normal(head.params["loc"], head.params["scale"]).log_prob(action)

    def _score(self, heads, actions, sample_ndim):
        batch_ndim = len(next(iter(heads.values())).batch_shape)
        per_head = {}
        for h in heads:
            if h not in actions:
                raise KeyError(f"no action for head {h!r}; actions given: {sorted(actions)}")
            try:
                per_head[h] = self._head_log_prob(heads[h], actions[h])
            except ValueError as exc:
                raise ValueError(f"head {h!r}: {exc}") from None
        # leading sample dims: what a log-prob has beyond its head's batch (and Normal event) dims
        lead = min(lp.ndim - batch_ndim - (heads[h].kind == "normal") for h, lp in per_head.items())
        keep = batch_ndim + max(lead, 0)
        agg = self.combine([self.reduce(lp, keep, sample_ndim) for lp in per_head.values()])
        return per_head, agg

    @staticmethod
    def _sample(heads, exploration, seed):
        gen = torch.Generator().manual_seed(seed)
        actions = {}
        for h, head in heads.items():
            if head.kind == "categorical":
                logits = head.params["logits"].detach()
                if exploration == "random":
                    flat = torch.softmax(logits.double(), -1).reshape(-1, logits.shape[-1])
                    actions[h] = torch.multinomial(flat, 1, generator=gen).reshape(logits.shape[:-1])
                elif exploration == "mean":
                    raise ValueError(f"head {h!r} is categorical and has no mean")
                else:
                    actions[h] = logits.argmax(-1)
            else:
                loc, scale = head.params["loc"].detach(), head.params["scale"].detach()
                noise = torch.randn(loc.shape, generator=gen) if exploration == "random" else 0.0
                actions[h] = loc + scale * noise
        return actions

    # ---------------------------------------------------------------- the interface
    def actor(self, heads, *, exploration, seed):
        actions = self._sample(heads, exploration, seed)
        batch_ndim = len(next(iter(heads.values())).batch_shape)
        per_head, agg = self._score(heads, actions, batch_ndim)
        return CompositeLogProbs(actions, per_head, agg, dict(_WHERE))

    def log_prob(self, heads, actions, *, sample_batch_shape):
        per_head, agg = self._score(heads, actions, len(sample_batch_shape))
        return CompositeLogProbs({}, per_head, agg, dict(_WHERE))

    def actor_out_keys(self, heads):
        return [("action", h) for h in heads] + [("action", f"{h}_log_prob") for h in heads]

    def log_prob_with_sum(self, heads, actions, *, in_place):
        # one call gives the heads and their sum here whatever the mode
        return self.log_prob(heads, actions,
                             sample_batch_shape=next(iter(heads.values())).batch_shape)

    def ppo_step(self, heads, *, advantage, clip_epsilon, seed, trailing_singleton):
        with torch.no_grad():
            collected = self.actor(heads, exploration="random", seed=seed)
        stored = dict(collected.actions)
        if trailing_singleton:
            stored = {h: a.unsqueeze(-1) if heads[h].kind == "categorical" else a
                      for h, a in stored.items()}
        batch_ndim = advantage.ndim - 1
        _, current = self._score(heads, stored, batch_ndim)
        ratio = torch.exp(current - collected.aggregate)
        if ratio.numel() == advantage.numel():
            ratio = ratio.reshape(advantage.shape[:-1])
        r = ratio.reshape(-1, 1) if ratio.numel() == advantage.numel() else ratio
        gain = torch.minimum(r * advantage, r.clamp(1 - clip_epsilon, 1 + clip_epsilon) * advantage)
        return CompositePPOStep(float(-gain.mean()), ratio.detach(), stored)

    def misconfigured_actor(self, heads, *, fault):
        raise KeyError({
            "flat_spec": "the flat spec key 'action1' is not among the out_keys ('action', 'action1')",
            "no_name_map": "out_keys declare ('action', 'action1') but without a name_map the "
                           "sample goes to 'action1'",
            "name_map_missing_head": "name_map has no entry for head 'action2'",
            "name_map_unknown_key": "name_map maps 'actionX', which is not a head",
            "missing_params": "no parameters for head 'action3'",
        }[fault])


class MeanInsteadOfSum(_PureTorch):
    """The heads' log-probs averaged: the joint log-prob of independent heads is their sum."""

    def combine(self, reduced):
        return sum(reduced) / len(reduced)


class DropsLastHead(_PureTorch):
    """The last head is left out of the aggregate (invisible when it is the n=1 head)."""

    def combine(self, reduced):
        return sum(reduced[:-1])


class SampleNdimAggregation(_PureTorch):
    """tensordict's CompositeDistribution.log_prob: actions broadcast the torch way (no
    trailing-singleton handling) and each head reduced over the dims beyond the *sample
    tensordict's* ndim (rl#2487)."""

    def categorical_log_prob(self, logits, action):
        value = action.long().unsqueeze(-1)
        value, log_pmf = torch.broadcast_tensors(value, torch.log_softmax(logits, -1))
        return log_pmf.gather(-1, value[..., :1]).squeeze(-1)

    def reduce(self, lp, batch_ndim, sample_ndim):
        return lp.flatten(sample_ndim, -1).sum(-1) if lp.ndim > sample_ndim else lp


class UnnormalisedLogits(_PureTorch):
    """logits[a] read as a log-prob, without log_softmax."""

    def categorical_log_prob(self, logits, action):
        if action.ndim == logits.ndim and action.shape[-1] == 1:
            action = action.squeeze(-1)
        logits = logits.expand(*action.shape, logits.shape[-1])  # leading sample dims
        return logits.gather(-1, action.long().unsqueeze(-1)).squeeze(-1)


class EmptySingleCategory(_PureTorch):
    """A one-category head's log-prob returned as an empty tensor: every element of it is 0,
    so an ``all(lp == 0)`` check passes vacuously."""

    def _score(self, heads, actions, sample_ndim):
        per_head, agg = super()._score(heads, actions, sample_ndim)
        for h, head in heads.items():
            if head.kind == "categorical" and head.params["logits"].shape[-1] == 1:
                per_head[h] = per_head[h].new_zeros((0,))
        return per_head, agg


def _impl(name, area):
    return implementation(name, composite_log_prob=area)


CONTROL = _impl("control", _PureTorch())
MEAN_INSTEAD_OF_SUM = _impl("mean-instead-of-sum", MeanInsteadOfSum())
DROPS_LAST_HEAD = _impl("drops-last-head", DropsLastHead())
SAMPLE_NDIM_AGGREGATION = _impl("sample-ndim-aggregation", SampleNdimAggregation())
UNNORMALISED_LOGITS = _impl("unnormalised-logits", UnnormalisedLogits())
EMPTY_SINGLE_CATEGORY = _impl("empty-single-category", EmptySingleCategory())
