"""§3 SAC done-state handling: the calls its specs make."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

import torch

#: Where the tensors of a SAC batch live (``SACBatch.layout``).
SAC_LAYOUTS = ("single", "per_agent", "nested")


@dataclass
class SACNetworks:
    """Small float64 networks chosen by the spec; the implementation uses them as given
    (copies are fine, re-initialising is not). The target Q-networks are copies of ``qvalues``
    (a freshly built loss); next actions come from the online actor.

    kind "continuous": ``actor(observation)`` returns the tensors named by ``actor_outputs``
    (``loc, scale, noise``, each [..., A]); ``distribution(**outputs)`` is the policy, a
    diagonal Normal(loc, scale) whose reparametrised draw is ``loc + scale * noise``: the noise
    comes with the state, so every draw is known to the oracle. ``qvalues[i](observation,
    action)`` returns [..., 1].
    kind "discrete": ``actor(observation)`` returns ``logits`` [..., n]; ``distribution(logits=)``
    is a one-hot categorical; ``qvalues[i](observation)`` returns [..., n], one value per action.
    """

    kind: str
    actor: torch.nn.Module
    actor_outputs: tuple[str, ...]
    distribution: type
    qvalues: list[torch.nn.Module]


@dataclass
class SACBatch:
    """Transitions, per agent-step shaped ``[B, 1]`` (single) or ``[B, N, 1]`` (agents) for
    reward / done / terminated and ``[B, (N,) F]`` for observations and actions (discrete
    actions one-hot).

    layout "single": a tensordict of batch [B] holding everything at the root.
    "per_agent": batch [B] with per-agent leaves at the root (done [B, N, 1]).
    "nested": an agent group ``"agents"`` of batch [B, N] holding observation, action and, under
    ``("next", "agents", ...)``, next observation, reward, done, terminated; the root also has
    ``("next", "done")`` / ``("next", "terminated")`` [B, 1] (= all agents), which the loss must
    leave alone (its keys point into the group).

    has_terminated False: the batch carries no terminated entry (data written before TorchRL
    split done into terminated and truncated, 0.4); ``terminated`` then equals ``done`` and is
    what a loss must take as the termination. Libraries without the split read it as before.
    """

    layout: str
    observation: torch.Tensor
    action: torch.Tensor
    next_observation: torch.Tensor
    reward: torch.Tensor
    done: torch.Tensor
    terminated: torch.Tensor
    has_terminated: bool = True

    @property
    def root_done(self) -> torch.Tensor:
        return self.done.all(dim=1)

    @property
    def root_terminated(self) -> torch.Tensor:
        return self.terminated.all(dim=1)


@dataclass
class SACOutcome:
    """What one forward (and backward) of a SAC loss gave.

    losses: ``loss_actor``, ``loss_qvalue``, ``loss_alpha`` as float64 scalars (detached).
    actor_grad: d loss_actor / d each actor parameter, keyed by ``networks.actor``'s
        ``named_parameters()`` names.
    qvalue_grad: d loss_qvalue / d each parameter of ``networks.qvalues[i]``, same keying.
    skip_done_states: the flag the built loss holds (None when the loss has no such flag).
    """

    losses: dict[str, torch.Tensor]
    actor_grad: dict[str, torch.Tensor]
    qvalue_grad: list[dict[str, torch.Tensor]]
    skip_done_states: bool | None


class SACDoneStates(Protocol):
    def loss(
        self,
        *,
        networks: SACNetworks,
        batch: SACBatch,
        skip_done_states: bool | None,
        alpha: float,
        gamma: float,
        target_entropy: float,
    ) -> SACOutcome:
        """Build a SAC (kind "continuous") or discrete SAC loss on ``networks`` with a fixed
        entropy coefficient ``alpha``, TD(0) targets with discount ``gamma`` and the squared
        error, and evaluate it on ``batch``. ``skip_done_states`` None: do not pass the flag
        (its default applies); True/False: pass it (a loss without the flag must raise
        AssertionError saying so). With y = r + gamma (1 - terminated) V(s') the losses are
        means over agent-steps of::

            loss_qvalue = sum_i (Q_i(s, a) - y)^2
            loss_actor  = alpha log pi(a~|s) - min_i Q_i(s, a~)       (a~ drawn at s)
            loss_alpha  = -log(alpha) (log pi(a~|s) + target_entropy)

        with V(s') = min_i Qtarget_i(s', a') - alpha log pi(a'|s') (a' drawn at s'); for kind
        "discrete" the draws are replaced by exact expectations over the actions.
        """


@dataclass
class SACHeldBatch:
    """The caller's batch around one loss call, each entry by its key path (a tuple of str;
    the key names are the implementation's own). ``before``: copies taken just before the
    call; ``after``: what the very batch object the loss was given holds just after it;
    ``written``: the entries the loss may write into its input (TorchRL: the priority,
    ``"td_error"``, which prioritized replay buffers read back, and the outputs of the actor
    run on the current step, which tensordict modules write where they run); nothing under
    ``"next"``."""

    before: dict[tuple[str, ...], torch.Tensor]
    after: dict[tuple[str, ...], torch.Tensor]
    written: tuple[tuple[str, ...], ...]


class SACCallerBatch(Protocol):
    """The caller's batch around a loss call (optional capability)."""

    def batch_around_loss(
        self,
        *,
        networks: SACNetworks,
        batch: SACBatch,
        skip_done_states: bool | None,
        alpha: float,
        gamma: float,
        target_entropy: float,
    ) -> SACHeldBatch:
        """Build and evaluate the loss exactly as ``SACDoneStates.loss`` does, on a batch the
        caller keeps, and return that batch's entries before and after the call."""


@dataclass
class SACUnreduced:
    """What a SAC loss built without reduction reports (issue #43, pytorch/rl#3426).

    losses: ``loss_actor``, ``loss_qvalue``, ``loss_alpha``, each as the loss returned them
        (detached): one value per agent-step, so of shape [B] (layout "single") or [B, N]
        ("per_agent", "nested").
    batch_shape: the batch shape of the container the losses come in (TorchRL: the output
        TensorDict's ``batch_size``), or None when they come in no container with a batch shape
        (a dict).
    scalars: the other values reported beside the losses, by name, as returned (TorchRL:
        ``alpha`` and ``entropy``, which 0.14 leaves out of an unreduced output unless asked
        for as non-tensor data); a value not reported is absent.
    """

    losses: dict[str, torch.Tensor]
    batch_shape: tuple[int, ...] | None
    scalars: dict[str, torch.Tensor]


class SACUnreducedLosses(Protocol):
    """§3 without reduction: the SAC losses per agent-step."""

    def losses_unreduced(
        self,
        *,
        networks: SACNetworks,
        batch: SACBatch,
        skip_done_states: bool | None,
        alpha: float,
        gamma: float,
        target_entropy: float,
    ) -> SACUnreduced:
        """Build and evaluate the loss as ``SACDoneStates.loss`` does, but with no reduction
        (TorchRL: ``reduction="none"``), asking for the scalar outputs (``alpha``, ``entropy``)
        beside the losses where the loss can report them (TorchRL 0.14:
        ``scalar_output_mode="non_tensor"``). The losses are the terms of
        ``SACDoneStates.loss``'s means, one per agent-step."""
        ...


@dataclass
class SACActionSpace:
    """The action space a continuous SAC loss is told about, for its automatic target entropy.

    heads: each head's event shape (one agent's action), e.g. ``{"action": (2,)}``; every head
        is a box [-1, 1] drawn from a tanh-squashed Normal.
    composite: False: one head, a plain action (TorchRL: a ``Bounded`` spec at ``"action"``);
        True: the heads are drawn together as one composite action (TorchRL: a ``Composite``
        spec ``{"action": {head: Bounded}}`` and a ``CompositeDistribution`` actor).
    agents: None, or the number of agents N of a multi-agent group: the action lives at
        ``("agents", "action")`` of a group of batch shape (N,), the spec's shape (N, *event).
    given_to: where the action's spec is handed over: ``"loss"`` (TorchRL: the loss's
        ``action_spec`` argument), ``"actor"`` (TorchRL: the actor's ``spec``, which the
        loss reads when it is given none) or ``"nowhere"`` (neither: the automatic rule cannot
        know the action's size, and the loss must refuse it).
    summed_log_prob: for a composite action, the actor reports one log-probability, the sum
        over the heads (TorchRL: built under tensordict's ``set_composite_lp_aggregate(True)``,
        how ``SACLoss`` scores a composite draw), instead of one per head (the default).
    """

    heads: dict[str, tuple[int, ...]]
    composite: bool = False
    agents: int | None = None
    given_to: str = "loss"
    summed_log_prob: bool = False


class SACAutoTargetEntropy(Protocol):
    """§3 target entropy left to the loss: SAC's automatic target entropy."""

    def auto_target_entropy(self, *, action_space: SACActionSpace) -> float:
        """Build a continuous SAC loss whose target entropy is left to its automatic rule
        (TorchRL: ``target_entropy="auto"``, the default) for an actor of this action space,
        and return the target entropy the loss's temperature loss uses (TorchRL: the
        ``target_entropy`` the loss holds once built)."""
        ...


#: how a weighted mean is normalised (``SACWeighted.normalisation``), over the M agent-steps of
#: the batch with w_i the weight of agent-step i's row and t_i its term: "weights":
#: sum_i w_i t_i / sum_i w_i (a weighted average; TorchRL's ``_reduce``); "count":
#: sum_i w_i t_i / M (Schaul et al. 2016's update, weights already scaled by 1 / max w)
WEIGHT_NORMALISATIONS = ("weights", "count")


@dataclass
class SACWeighted:
    """What a SAC loss gives on a batch carrying importance weights (pytorch/rl#3235).

    losses: ``loss_actor``, ``loss_qvalue``, ``loss_alpha`` (detached): scalars for reduction
        "mean", one value per agent-step ([B] or [B, N]) for "none".
    normalisation: one of ``WEIGHT_NORMALISATIONS``: how the implementation normalises its
        weighted mean (a documented constant of the library, as §4's critic coefficient).
    """

    losses: dict[str, torch.Tensor]
    normalisation: str


class SACWeightedLosses(Protocol):
    """§3 with importance weights: the SAC losses of a batch drawn by a prioritized sampler."""

    def losses_weighted(
        self,
        *,
        networks: SACNetworks,
        batch: SACBatch,
        alpha: float,
        gamma: float,
        target_entropy: float,
        weights: torch.Tensor,
        reduction: str,
    ) -> SACWeighted:
        """Build the loss as ``SACDoneStates.loss`` does (flag not passed) with ``reduction``
        ("mean" or "none"), and evaluate it on ``batch`` carrying ``weights`` [B], one
        importance weight per batch row, where a prioritized sampler leaves them (TorchRL:
        ``"priority_weight"``, read by the losses since 0.11). Every agent-step of a row
        carries its row's weight: unreduced, each term times its weight; reduced, the weighted
        mean the implementation's ``normalisation`` names."""
        ...
