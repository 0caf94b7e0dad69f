"""§2 Composite distribution log-prob: the calls its specs make."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

import torch

#: Exploration (interaction) types a composite actor may be run under.
COMPOSITE_EXPLORATION_TYPES = ("random", "deterministic", "mode", "mean")

#: Misconfigured composite actors, by name. Each must be refused with an error naming the key.
COMPOSITE_MISCONFIGURATIONS = {
    "flat_spec": "the action spec given to the actor is flat ({head: spec}) while name_map "
                 "writes the nested ('action', head)",
    "no_name_map": "out_keys declare the nested ('action', head) but no name_map is given",
    "name_map_missing_head": "name_map has an entry for every head but the last",
    "name_map_unknown_key": "name_map maps the last head under the name 'actionX', which is not "
                            "a key of distribution_map",
    "missing_params": "distribution_map declares a head 'action3' for which the module writes "
                      "no parameters",
}


@dataclass(frozen=True)
class CompositeHead:
    """One head of a composite action, named by its leaf under the ``"action"`` key.

    kind: ``"categorical"`` with params ``{"logits": [*batch, n]}`` (action: int64 ``[*batch]``)
        or ``"normal"`` with params ``{"loc": [*batch, d], "scale": [*batch, d]}`` (action:
        float ``[*batch, d]``; element-wise Normal, its log-prob summed over ``d`` in the
        aggregate).
    params: the parameter tensors. They may require grad; every log-prob an implementation
        returns must stay attached to their graph.
    """

    kind: str
    params: dict[str, torch.Tensor]

    @property
    def batch_shape(self) -> torch.Size:
        return next(iter(self.params.values())).shape[:-1]


@dataclass
class CompositeLogProbs:
    """What a composite actor wrote, or what a composite log-prob returned (keys: head names).

    actions: the sampled actions as written (empty when scoring given actions).
    head_log_probs: each head's log-prob as the implementation stores it (a Normal head's may
        be element-wise, ``[*batch, d]``).
    aggregate: the implementation's own aggregate (joint) log-prob, or None if it wrote none.
    where: for failure messages, the key (or call) each entry was read from.
    """

    actions: dict[str, torch.Tensor]
    head_log_probs: dict[str, torch.Tensor]
    aggregate: torch.Tensor | None
    where: dict[str, str]


@dataclass
class CompositePPOStep:
    """One clipped-PPO loss evaluation on data collected by the same, unchanged policy.

    objective: ``loss_objective`` (the negated clipped surrogate, a mean over the batch).
    ratio: the importance ratio ``exp(log_prob - stored_log_prob)`` the loss used, per sample
        (``[*batch]``), or None when the implementation does not expose it.
    actions: the actions the loss was given, as stored (head -> tensor).
    """

    objective: float
    ratio: torch.Tensor | None
    actions: dict[str, torch.Tensor]


class CompositeLogProb(Protocol):
    #: the subset of COMPOSITE_EXPLORATION_TYPES the implementation (release) supports
    exploration_types: tuple[str, ...]

    def actor(self, heads: dict[str, CompositeHead], *, exploration: str, seed: int) -> CompositeLogProbs:
        """Build a probabilistic actor (ProbabilisticActor-like) whose module outputs
        ``heads[h].params`` (through a parameterised identity, so gradients reach them), with a
        composite distribution over the nested action spec ``action -> {h: ...}`` (samples at
        ``("action", h)``, declared through a name map) and ``return_log_prob=True``. Run it
        once under ``exploration`` with torch's RNG seeded by ``seed``."""
        ...

    def log_prob(
        self, heads: dict[str, CompositeHead], actions: dict[str, torch.Tensor], *,
        sample_batch_shape: tuple[int, ...],
    ) -> CompositeLogProbs:
        """Score ``actions`` under the composite distribution built from ``heads`` (its batch
        shape is the heads' batch shape): the sample is a tensordict of batch size
        ``sample_batch_shape`` holding ``actions[h]`` at ``("action", h)``. Per-head log-probs
        and the implementation's aggregate of that sample."""
        ...

    def ppo_step(
        self, heads: dict[str, CompositeHead], *, advantage: torch.Tensor, clip_epsilon: float,
        seed: int, trailing_singleton: bool,
    ) -> CompositePPOStep:
        """Collect once with the actor of :meth:`actor` (random exploration, no grad), storing
        actions and log-probs as the implementation does; with ``trailing_singleton`` every
        categorical action is then stored as ``[*batch, 1]`` (as an environment whose action
        spec has shape (1,) stores it). Then evaluate a clipped PPO loss (``clip_epsilon``,
        no entropy bonus) on that data with ``advantage`` ``[*batch, 1]``, for the unchanged
        policy."""
        ...

    def misconfigured_actor(self, heads: dict[str, CompositeHead], *, fault: str) -> CompositeLogProbs:
        """Build and run (random exploration) the actor of :meth:`actor` misconfigured as
        ``COMPOSITE_MISCONFIGURATIONS[fault]`` says. Return what it wrote if it accepts the
        configuration (it should raise, naming the offending key)."""


class CompositePPOChanged(Protocol):
    """§2: the PPO importance ratio after the policy changed."""

    def ppo_step_changed(
        self, heads: dict[str, CompositeHead], new_heads: dict[str, CompositeHead], *,
        advantage: torch.Tensor, clip_epsilon: float, seed: int,
    ) -> CompositePPOStep:
        """As :meth:`CompositeLogProb.ppo_step` (no trailing singleton), but the loss is
        evaluated for the policy of ``new_heads`` (same names, kinds and shapes) on the data
        collected with ``heads``."""
        ...


class CompositeEntropy(Protocol):
    """§2: PPO's entropy bonus on a composite policy."""

    def entropy_loss(self, heads: dict[str, CompositeHead], *, coeff: float | dict[str, float],
                     seed: int) -> float:
        """``loss_entropy`` of the clipped PPO loss of :meth:`CompositeLogProb.ppo_step` with
        the entropy bonus on and ``entropy_coeff`` ``coeff``: one value for the summed entropy
        of the heads, or one per head name."""
        ...


class CompositeLogProbWithSum(Protocol):
    """§2: per-head log-probs and their sum in one call (``log_prob_composite``)."""

    def log_prob_with_sum(self, heads: dict[str, CompositeHead], actions: dict[str, torch.Tensor],
                          *, in_place: bool) -> CompositeLogProbs:
        """Score ``actions`` as :meth:`CompositeLogProb.log_prob` does (a sample tensordict of
        the heads' batch shape), asking in one call for the per-head log-probs *and* their sum,
        written at a log-prob key of the caller's choosing: with ``in_place``, the call made
        under ``set_composite_lp_aggregate(True)`` with ``include_sum`` left to its default
        (the entries are written into the sample itself: read them there), else
        ``include_sum=True`` under ``set_composite_lp_aggregate(False)`` (a new tensordict
        is returned: read them there). ``aggregate``: the sum entry."""
        ...


class CompositeDeclaredKeys(Protocol):
    """§2: the keys a composite actor declares (``actor.out_keys``)."""

    def actor_out_keys(self, heads: dict[str, CompositeHead]) -> list:
        """Build the actor of :meth:`CompositeLogProb.actor` (under
        ``set_composite_lp_aggregate(False)`` where the switch exists) and return its
        ``out_keys`` as TorchRL reports them, each a string or a tuple of strings."""
        ...
