"""What an implementation must provide for the suite to check it, area by area.

An *implementation* is any object with one attribute per area (``AREAS``, defined once in
``conformance/areas.py``, in the SPECS order §1 to §5). An attribute that is missing or
``None`` declares the area unsupported: its specs are reported as "not applicable", never as
passed. An area attribute may also raise ``Untestable`` when it
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

from conformance.areas import AREAS


class Untestable(Exception):
    """The implementation cannot be exercised on this machine (the reason is the message)."""


@runtime_checkable
class Implementation(Protocol):
    name: str
    version: str


# --------------------------------------------------------------------------------------------
# §1 TanhNormal mode
# --------------------------------------------------------------------------------------------


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
        low: float = -1.0,
        high: float = 1.0,
        upscale: float = 5.0,
        tanh_loc: bool = False,
    ) -> object:
        """The implementation's distribution object for these parameters (any batch shape)."""
        ...

    def mode(self, dist: object) -> torch.Tensor:
        """The mode of ``dist``, the way its library exposes it (shape and dtype of ``loc``)."""


# --------------------------------------------------------------------------------------------
# §2 Composite distribution log-prob
# --------------------------------------------------------------------------------------------


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


# --------------------------------------------------------------------------------------------
# §3 SAC done-state handling
# --------------------------------------------------------------------------------------------


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
    """

    layout: str
    observation: torch.Tensor
    action: torch.Tensor
    next_observation: torch.Tensor
    reward: torch.Tensor
    done: torch.Tensor
    terminated: torch.Tensor

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
    """Optionally, ``documented_design``: ``{name: (account, link)}`` for known-wrong designs
    the implementation documents as its own choice (names: the values of
    ``conformance.oracles.prioritized_replay.DESIGNS``, e.g. ``"historical_max"``); a failure
    diagnosed as one of them then quotes the account and links the documentation."""

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


# --------------------------------------------------------------------------------------------
# Optional capabilities: what the family specs (conformance/test_<area>_family.py) need beyond
# an area's protocol. Each is a method (and attributes) an area object *may* have; an area
# without it has those specs reported "not applicable: <impl> does not provide <capability>"
# (conformance/capabilities.py), one that has it is held to its protocol here. An implementation
# that has the method but cannot express one case raises NotImplementedError("<why>") as usual.
# --------------------------------------------------------------------------------------------


class TanhNormalScore(Protocol):
    """§1: the sample-and-score call a SAC actor trains on."""

    def sample_and_score(self, dist: object, *, seed: int) -> tuple[torch.Tensor, torch.Tensor]:
        """One reparametrised draw from ``dist`` (made by ``make``) with torch's RNG seeded by
        ``seed``, and the log-density the implementation's actor would train on for it, the way
        its actor computes it: ``(action, log_prob)``, ``action`` of ``loc``'s shape, ``log_prob``
        summed over the last dimension (``[*batch]``)."""
        ...


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


#: the loss classes that share PPO's value clipping, in TorchRL's names
PPO_LOSS_CLASSES = ("PPOLoss", "ClipPPOLoss", "KLPENPPOLoss", "A2CLoss")


class PPOLossFamily(Protocol):
    """§4: the critic loss of each loss class that takes ``clip_value``."""

    def critic_loss_of(
        self,
        loss_class: str,
        *,
        value_net: torch.nn.Module,
        observation: torch.Tensor,
        old_value: torch.Tensor,
        returns: torch.Tensor,
        clip_value: float | bool | None,
        clip_epsilon: float | tuple[float, float],
        critic_coeff: float,
        reschedule_clip_value: float | None,
    ) -> CriticLoss:
        """As :meth:`PPOValueClipping.critic_loss`, for the loss class named ``loss_class`` (one
        of PPO_LOSS_CLASSES; ``clip_epsilon`` is ignored by classes without one). ``reschedule_clip_value``: after
        building the loss, assign ``loss.clip_value = reschedule_clip_value`` (a Python float,
        as a scheduler does) before evaluating it. A tuple ``clip_epsilon`` is an asymmetric
        clip range."""
        ...


class PrioritizedSlices(Protocol):
    """§5: a prioritized buffer that samples slices of trajectories."""

    def slice_buffer(
        self, *, capacity: int, alpha: float, beta: float, eps: float, slice_len: int,
        traj_len: int,
    ) -> PrioritizedBuffer:
        """An empty buffer of ``capacity`` items sampled as slices of ``slice_len`` consecutive
        items of one trajectory (PrioritizedSliceSampler-like, in-buffer max tracking on);
        ``extend(rows)`` writes ``rows`` items whose trajectory id is ``item_id // traj_len``.
        ``state_dict`` / ``load_state_dict`` hand the library's own checkpoint object over
        without copying it (the specs check that the buffer does not alias it)."""
        ...


#: area -> capability method -> its protocol (checked by conformance/test_interface.py)
CAPABILITIES: dict[str, dict[str, type]] = {
    "tanh_normal_mode": {"sample_and_score": TanhNormalScore},
    "composite_log_prob": {"ppo_step_changed": CompositePPOChanged,
                           "entropy_loss": CompositeEntropy},
    "ppo_value_clipping": {"critic_loss_of": PPOLossFamily},
    "prioritized_replay": {"slice_buffer": PrioritizedSlices},
}


#: area name -> the protocol its attribute must satisfy (checked by conformance/test_interface.py)
PROTOCOLS: dict[str, type] = {
    "tanh_normal_mode": TanhNormalMode,
    "composite_log_prob": CompositeLogProb,
    "sac_done_states": SACDoneStates,
    "ppo_value_clipping": PPOValueClipping,
    "prioritized_replay": PrioritizedReplay,
}
assert list(PROTOCOLS) == list(AREAS), "PROTOCOLS must follow conformance/areas.py"
