"""§2 through SB3's ``MultiCategoricalDistribution`` (the distribution of a ``MultiDiscrete``
action space) and ``PPO.train()``.

- **The actor** is what ``ActorCriticPolicy.forward`` does with its action logits:
  ``MultiCategoricalDistribution([n_1, ...]).proba_distribution(logits)``, ``get_actions(
  deterministic)`` (``sample()`` or ``mode()``, the argmax of each head) and ``log_prob(actions)``
  (the joint log-prob, summed over the heads). The logits are the heads' own tensors side by
  side, so gradients reach them. Each head's log-prob is read from the distribution's public
  per-head ``Categorical`` list (``distribution[i].log_prob``). Exploration "random" is
  ``get_actions(False)``, "deterministic" and "mode" are ``get_actions(True)``; SB3 has no "mean"
  action (NotImplementedError).
- **Scoring** stacks the heads' actions into SB3's one ``[*batch, n_heads]`` action tensor.
- **PPO** is ``PPO("MlpPolicy", env with MultiDiscrete([n_1, ...]), n_steps=B, batch_size=B,
  n_epochs=1, clip_range=clip_epsilon, ent_coef=0, normalize_advantage=False)``: the policy's
  ``action_net`` (public) is replaced by the heads' logits looked up by row (the observation SB3
  stores is the row number, exact in float32), the rollout buffer is filled with what the
  policy's ``forward`` returns under ``torch.manual_seed(seed)`` (as ``collect_rollouts`` does)
  and the given advantages, and one ``train()`` runs. The objective is SB3's logged
  ``train/policy_gradient_loss``; SB3 does not expose the ratio (None).

Not expressible (NotImplementedError, see conformance/implementations/library_composite.py):
Normal heads, a sample container of another batch size, per-head ``[*batch, 1]`` actions, the
misconfigurations, the "mean" exploration type. SB3 distributions take one batch dimension
(``split``/``unbind`` along dim 1): a ``(B, T)`` batch is given as it is and fails in SB3.
"""

from __future__ import annotations

import numpy as np
import torch

from conformance.implementations.introspect import quiet
from conformance.implementations.library_composite import (
    batch_shape,
    categorical_only,
    logits,
    misconfiguration,
    one_action_tensor,
)
from conformance.implementations.library_sac import as_rows
from conformance.implementations.sb3 import HOST_ONLY
from conformance.implementations.sb3_areas.rows import quiet_logger, rows_env
from conformance.interface import COMPOSITE_EXPLORATION_TYPES, CompositeLogProbs, CompositePPOStep

_WHERE = "MultiCategoricalDistribution"


class _RowLogits(torch.nn.Module):
    """The policy's action_net: the logits of the row whose number is the observation."""

    def __init__(self, table):
        super().__init__()
        self.table = table

    def forward(self, latent):
        return self.table[as_rows(latent)]


class SB3MultiCategorical:
    devices = ("cpu",)  # conformance.interface: the devices this area runs on
    devices_why = HOST_ONLY
    # "mean" raises NotImplementedError (not applicable), rather than failing as an exploration
    # type a TorchRL release lacks: SB3 has no such notion
    exploration_types = COMPOSITE_EXPLORATION_TYPES

    def __init__(self, dist_cls, ppo_cls, env_factory, logger_factory):
        self.dist_cls, self.ppo_cls = dist_cls, ppo_cls
        self.env_factory, self.logger_factory = env_factory, logger_factory

    def _dist(self, heads):
        why = categorical_only("SB3", heads)
        if why:
            raise NotImplementedError(why)
        sizes = [int(x.params["logits"].shape[-1]) for x in heads.values()]
        with quiet():
            return self.dist_cls(sizes).proba_distribution(logits(heads))

    @staticmethod
    def _scored(dist, heads, action) -> CompositeLogProbs:
        per_head = {h: dist.distribution[i].log_prob(action[..., i])
                    for i, h in enumerate(heads)}
        where = {h: f"{_WHERE}.distribution[{i}].log_prob" for i, h in enumerate(heads)}
        where.update(aggregate=f"{_WHERE}.log_prob", written=f"{_WHERE}: actions [*batch, "
                     f"{len(heads)}], log_prob")
        actions = {h: action[..., i] for i, h in enumerate(heads)}
        return CompositeLogProbs(actions, per_head, dist.log_prob(action), where)

    def actor(self, heads, *, exploration, seed) -> CompositeLogProbs:
        if exploration == "mean":
            raise NotImplementedError(
                "SB3's distributions have no mean action: get_actions(deterministic) chooses "
                "between sample() and mode()")
        dist = self._dist(heads)
        torch.manual_seed(seed)
        action = dist.get_actions(deterministic=exploration != "random")
        return self._scored(dist, heads, action)

    def log_prob(self, heads, actions, *, sample_batch_shape) -> CompositeLogProbs:
        why = categorical_only("SB3", heads) or one_action_tensor(
            "SB3", heads, actions, sample_batch_shape)
        if why:
            raise NotImplementedError(why)
        dist = self._dist(heads)
        action = torch.stack([actions[h] for h in heads], dim=-1)
        out = self._scored(dist, heads, action)
        out.actions = {}
        return out

    def build_ppo(self, heads, clip_epsilon):
        from gymnasium import spaces

        batch = batch_shape(heads)
        if len(batch) != 1:
            raise NotImplementedError(
                f"SB3's PPO collects a rollout of [n_steps] transitions: a batch {tuple(batch)} "
                "cannot be given")
        b = int(batch[0])
        nvec = [int(x.params["logits"].shape[-1]) for x in heads.values()]
        with quiet():
            model = self.ppo_cls(
                "MlpPolicy", self.env_factory(b, spaces.MultiDiscrete(nvec)), n_steps=b,
                batch_size=b, n_epochs=1, clip_range=clip_epsilon, ent_coef=0.0, vf_coef=0.0,
                normalize_advantage=False, max_grad_norm=float("inf"), seed=0, device="cpu",
                policy_kwargs={"net_arch": {"pi": [], "vf": []}})
        model.set_logger(self.logger_factory())
        model.policy.action_net = _RowLogits(logits(heads).detach())
        return model

    def ppo_step(self, heads, *, advantage, clip_epsilon, seed,
                 trailing_singleton) -> CompositePPOStep:
        why = categorical_only("SB3", heads)
        if why:
            raise NotImplementedError(why)
        if trailing_singleton:
            raise NotImplementedError(
                "SB3 stores a multi-discrete action as one [B, n_heads] array in its rollout "
                "buffer: a per-head [B, 1] layout cannot be given")
        model = self.build_ppo(heads, clip_epsilon)
        b = int(batch_shape(heads)[0])
        rows = torch.arange(b, dtype=torch.float32).reshape(b, 1)
        torch.manual_seed(seed)
        with torch.no_grad():
            action, value, log_prob = model.policy(rows)  # what collect_rollouts calls
        buf = model.rollout_buffer
        buf.reset()
        for i in range(b):
            buf.add(rows[i:i + 1].numpy(), action[i:i + 1].numpy(), np.zeros(1), np.zeros(1),
                    value[i:i + 1], log_prob[i:i + 1])
        buf.advantages = advantage.detach().double().numpy().reshape(b, 1)
        buf.returns = value.double().numpy().reshape(b, 1)
        with quiet():
            model.train()
        objective = float(model.logger.name_to_value["train/policy_gradient_loss"])
        return CompositePPOStep(objective, None, {h: action[:, i] for i, h in enumerate(heads)})

    def misconfigured_actor(self, heads, *, fault) -> CompositeLogProbs:
        raise NotImplementedError(misconfiguration("SB3", fault))


def make(adapter):
    from stable_baselines3 import PPO
    from stable_baselines3.common.distributions import MultiCategoricalDistribution

    return SB3MultiCategorical(MultiCategoricalDistribution, PPO, rows_env, quiet_logger)
