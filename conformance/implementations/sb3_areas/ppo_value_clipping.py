"""§4 through SB3's ``PPO.train()``: the value loss SB3 computes and steps on.

The algorithm is built the ordinary way, ``PPO("MlpPolicy", env, n_steps=B, batch_size=B,
n_epochs=1, clip_range=clip_epsilon, clip_range_vf=c, vf_coef=critic_coeff, ent_coef=0,
normalize_advantage=False)``, its ``rollout_buffer`` is filled with the spec's data and
``train()`` runs one minibatch. Two hooks, both named here with their reason:

- **The value head.** SB3 casts every Box observation to float32 (``preprocess_obs``), while the
  spec's value network and data are float64. So the observation SB3 sees is the row number (exact
  in float32) and ``policy.value_net`` (a public attribute) is replaced by the spec's network
  applied to that row's float64 observation: ``values`` in ``train()`` is the spec's prediction,
  unrounded, and the graph reaches the spec's parameters. The buffer's ``values`` and ``returns``
  arrays are float64 too, so SB3's clipping runs in float64.
- **The loss tensor.** ``train()`` keeps the value loss in a local (``value_loss =
  F.mse_loss(returns, values_pred)``) and logs only its float. The module global ``F`` of
  ``stable_baselines3.ppo.ppo`` is swapped, for the call, for a proxy of
  ``torch.nn.functional`` that records what ``mse_loss`` returns. ``target_kl=-1`` makes
  ``train()`` stop after computing the loss and before ``backward()`` / ``step()`` (its early
  stop tests ``approx_kl > 1.5 * target_kl``), so the graph is intact for the spec.
  ``tests/libraries/test_sb3.py`` checks that this tensor is the one SB3's optimiser steps on.

The critic term of SB3's loss is ``vf_coef * value_loss`` with the plain MSE (no 0.5): scale 2.
SB3 has no "use clip_range" value (``clip_value=True`` raises NotImplementedError), validates
the threshold with ``assert`` (AssertionError, not ValueError) and logs no value clip fraction.
"""

from __future__ import annotations

import numpy as np
import torch

from conformance.implementations.capture import recording_mse
from conformance.implementations.introspect import quiet
from conformance.implementations.sb3 import HOST_ONLY
from conformance.implementations.sb3_areas.rows import quiet_logger, rows_env
from conformance.interface import CriticLoss


class _RowValue(torch.nn.Module):
    """SB3's value head: the spec's network applied to the float64 observation of each row."""

    def __init__(self, value_net, observation):
        super().__init__()
        self.net = value_net
        self.observation = observation

    def forward(self, latent):
        rows = latent.reshape(latent.shape[0], -1)[:, 0].round().long()
        return self.net(self.observation[rows])


class SB3PPOCritic:
    devices = ("cpu",)  # conformance.interface: the devices this area runs on
    devices_why = HOST_ONLY
    critic_scale = 2.0  # F.mse_loss: no 0.5

    def __init__(self, ppo_cls, ppo_module, env_factory, logger_factory):
        self.ppo_cls, self.ppo_module = ppo_cls, ppo_module
        self.env_factory, self.logger_factory = env_factory, logger_factory

    def build(self, batch, clip_value, clip_epsilon, critic_coeff, *, target_kl=-1.0, **extra):
        if clip_value is True:
            raise NotImplementedError(
                "SB3's clip_range_vf is a float or None: it has no 'same as clip_range' option")
        clip_range_vf = None if clip_value is None or clip_value is False else float(clip_value)
        with quiet():
            model = self.ppo_cls(
                "MlpPolicy", self.env_factory(batch), n_steps=batch, batch_size=batch, n_epochs=1,
                clip_range=clip_epsilon, clip_range_vf=clip_range_vf, vf_coef=critic_coeff,
                ent_coef=0.0, normalize_advantage=False, max_grad_norm=float("inf"),
                target_kl=target_kl, seed=0, device="cpu",
                policy_kwargs={"net_arch": {"pi": [], "vf": []}}, **extra)
        model.set_logger(self.logger_factory())
        return model

    @staticmethod
    def fill(model, value_net, observation, old_value, returns):
        batch = observation.shape[0]
        model.policy.value_net = _RowValue(value_net, observation)
        buf = model.rollout_buffer
        buf.reset()
        buf.observations[:] = np.arange(batch, dtype=np.float32).reshape(batch, 1, 1)
        buf.actions[:] = 0.0
        # float64 arrays: SB3 turns them into tensors as they are (RolloutBuffer.to_torch)
        buf.values = old_value.detach().cpu().numpy().astype(np.float64).reshape(batch, 1)
        buf.returns = returns.detach().cpu().numpy().astype(np.float64).reshape(batch, 1)
        buf.advantages = np.ones((batch, 1), dtype=np.float64)
        with torch.no_grad():  # the stored log-prob of the unchanged policy: ratio 1
            obs = torch.as_tensor(buf.observations.reshape(batch, 1))
            _, log_prob, _ = model.policy.evaluate_actions(obs, torch.zeros(batch, 1))
        buf.log_probs = log_prob.double().numpy().reshape(batch, 1)
        buf.pos, buf.full = buf.buffer_size, True

    def train_once(self, model):
        with recording_mse(self.ppo_module) as seen, quiet():
            model.train()
        if len(seen) != 1:
            raise AssertionError(f"SB3 PPO.train() computed {len(seen)} MSE losses, expected 1")
        return seen[0]

    def critic_loss(self, *, value_net, observation, old_value, returns, clip_value, clip_epsilon,
                    critic_coeff) -> CriticLoss:
        model = self.build(observation.shape[0], clip_value, clip_epsilon, critic_coeff)
        self.fill(model, value_net, observation, old_value, returns)
        value_loss = self.train_once(model)
        # SB3 adds `vf_coef * value_loss` to its loss; it logs no value clip fraction
        return CriticLoss(model.vf_coef * value_loss, None)


def make(adapter):
    from stable_baselines3 import PPO
    from stable_baselines3.ppo import ppo as ppo_module

    return SB3PPOCritic(PPO, ppo_module, rows_env, quiet_logger)
