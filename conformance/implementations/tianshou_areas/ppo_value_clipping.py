"""§4 through Tianshou's ``PPO`` algorithm: the loss its update hands to its optimiser.

The algorithm is built the ordinary way: ``PPO(policy=ProbabilisticActorPolicy(...),
critic=<the spec's value network>, optim=AdamOptimizerFactory(), eps_clip=c, value_clip=True,
vf_coef=critic_coeff, ent_coef=0, advantage_normalization=False)``. Tianshou clips the value
with ``eps_clip``, the policy's own threshold (``value_clip`` is a bool): ``clip_value=True``
maps to it directly, and a float threshold is accepted only when it equals ``clip_epsilon``
(otherwise NotImplementedError: there is no independent value threshold).

Hooks, named with their reason:

- ``_update_with_batch(batch, batch_size, repeat=1)`` (private) runs the update on a batch that
  already holds ``v_s`` (old values), ``returns``, ``adv`` and ``logp_old``; the public
  ``update()`` would recompute them from a replay buffer with GAE, so the spec's returns could
  not be given as they are.
- ``algo.optim`` is replaced by a recorder whose ``step(loss)`` keeps the loss tensor and
  neither differentiates nor steps, so its graph reaches the spec's value network intact. The
  advantages are 0 and ``ent_coef`` is 0, so that loss is exactly ``vf_coef * vf_loss``.

Tianshou's critic loss is ``max(vf1, vf2).mean()`` with no 0.5: scale 2. It reports no value
clip fraction.
"""

from __future__ import annotations

import torch

from conformance.implementations.capture import LossRecorder
from conformance.implementations.introspect import quiet
from conformance.implementations.tianshou import HOST_ONLY
from conformance.interface import CriticLoss


class _ZeroMeanUnitScale(torch.nn.Module):
    # The policy is irrelevant to the critic loss; a fixed Normal keeps the ratio exactly 1.
    def forward(self, obs, state=None, info=None):
        obs = torch.as_tensor(obs)
        return (torch.zeros_like(obs), torch.ones_like(obs)), state


class TianshouPPOCritic:
    devices = ("cpu",)  # conformance.interface: the devices this area runs on
    devices_why = HOST_ONLY
    critic_scale = 2.0

    def __init__(self, ts):
        self.ts = ts

    def build(self, value_net, observation, old_value, returns, clip_value, clip_epsilon,
              critic_coeff, optim=None):
        """The algorithm (with ``optim``, an OptimizerFactory, or Adam) and the batch."""
        ts = self.ts
        if clip_value is None or clip_value is False:
            value_clip, eps = False, clip_epsilon
        elif clip_value is True:
            value_clip, eps = True, clip_epsilon
        elif abs(float(clip_value) - float(clip_epsilon)) <= 1e-6 * abs(float(clip_epsilon)):
            # the same threshold (up to the float32 rounding of the spec's thresholds)
            value_clip, eps = True, float(clip_value)
        else:
            raise NotImplementedError(
                "Tianshou clips the value with eps_clip, the policy's threshold (value_clip is a "
                "bool): a value threshold other than clip_epsilon cannot be set")
        space = ts.Box(-1.0, 1.0, (1,))

        def dist_fn(loc_scale):  # Tianshou passes the actor's (loc, scale) as one argument
            loc, scale = loc_scale
            return ts.Independent(ts.Normal(loc, scale), 1)

        with quiet():
            policy = ts.ProbabilisticActorPolicy(actor=_ZeroMeanUnitScale(), dist_fn=dist_fn,
                                                 action_space=space, action_scaling=False)
            algo = ts.PPO(policy=policy, critic=value_net, optim=optim or ts.AdamOptimizerFactory(),
                          eps_clip=eps, value_clip=value_clip, vf_coef=critic_coeff,
                          ent_coef=0.0, advantage_normalization=False, max_grad_norm=None)
        batch_size = observation.shape[0]
        act = torch.zeros_like(observation)
        with torch.no_grad():
            logp = dist_fn((torch.zeros_like(observation), torch.ones_like(observation))).log_prob(act)
        batch = ts.Batch(obs=observation, act=act, adv=torch.zeros(batch_size, dtype=torch.float64),
                         returns=returns.reshape(-1), v_s=old_value.reshape(-1),
                         logp_old=logp.reshape(-1), info=ts.Batch())
        return algo, batch

    def critic_loss(self, *, value_net, observation, old_value, returns, clip_value, clip_epsilon,
                    critic_coeff) -> CriticLoss:
        algo, batch = self.build(value_net, observation, old_value, returns, clip_value,
                                 clip_epsilon, critic_coeff)
        batch_size = observation.shape[0]
        algo.optim = LossRecorder()
        with quiet():
            algo._update_with_batch(batch, batch_size, 1)
        if len(algo.optim.losses) != 1:
            raise AssertionError(f"Tianshou PPO stepped {len(algo.optim.losses)} times, expected 1")
        return CriticLoss(algo.optim.losses[0], None)


def make(adapter):
    import types

    from gymnasium.spaces import Box
    from tianshou.algorithm import PPO
    from tianshou.algorithm.modelfree.reinforce import ProbabilisticActorPolicy
    from tianshou.algorithm.optim import AdamOptimizerFactory, TorchOptimizerFactory
    from tianshou.data import Batch
    from torch.distributions import Independent, Normal

    return TianshouPPOCritic(types.SimpleNamespace(
        PPO=PPO, ProbabilisticActorPolicy=ProbabilisticActorPolicy,
        AdamOptimizerFactory=AdamOptimizerFactory, TorchOptimizerFactory=TorchOptimizerFactory,
        Batch=Batch, Box=Box,
        Independent=Independent, Normal=Normal))
