"""§3 through Tianshou's ``SAC`` and ``DiscreteSAC`` algorithms: one ``update()`` on a buffer.

The transitions go into a ``ReplayBuffer(B)`` with ``add(Batch(obs, act, rew, terminated,
truncated, obs_next, info))`` (float64 as given, discrete actions as indices), and
``algo.update(buffer, sample_size=0)`` (0: every transition, in order; inside
``policy_within_training_step``) runs Tianshou's own pipeline: ``_preprocess_batch`` computes the
TD(0) targets with ``compute_nstep_return`` (``value_mask = ~terminated``: truncated transitions
bootstrap), then ``_update_with_batch`` computes the critic, actor and alpha losses. Tianshou's
continuous SAC is Box-only and squashes with tanh; its discrete SAC is ``DiscreteSAC``.

Hooks, each named with its reason:

- **The continuous policy.** ``SACPolicy.forward`` draws ``tanh(Normal.rsample())``; the spec's
  policy is its own unsquashed Normal whose draw comes with the state. A subclass of
  ``SACPolicy`` overrides ``forward`` to return the spec's draw ``act`` and its ``log_prob``
  (what ``SAC`` reads from the policy's output). The discrete policy is Tianshou's own
  ``DiscreteSACPolicy`` (a ``Categorical`` over the spec actor's logits).
- **Critics** are the spec's Q-networks (copies) behind a module that turns Tianshou's numpy
  observations into float64 tensors; Tianshou's lagged copies are the target networks.
- **The losses.** ``algo.critic_optim``, ``critic2_optim`` and ``policy_optim`` (Tianshou's
  optimiser wrappers, ``step(loss)``) are replaced by recorders that keep the loss tensor and
  neither differentiate nor step (as a single evaluation: the actor loss sees the critics
  unchanged); gradients are taken from the recorded tensors.
  ``tests/libraries/test_tianshou.py`` checks they are what Tianshou's optimiser steps on.
- **alpha** is an ``AutoAlpha(target_entropy, log(alpha))``, so that Tianshou computes its alpha
  loss (a fixed float alpha computes none); its value is ``alpha`` for this update (exp of the
  float32 log(0.5) rounds back to 0.5).

``loss_qvalue`` is ``critic1_loss + critic2_loss`` (each a mean of squared TD errors): the spec's
sum over critics. Not expressible (NotImplementedError, see conformance/implementations/
library_sac.py): ``skip_done_states`` True or unset, the multi-agent layouts.
"""

from __future__ import annotations

import copy
import math

import numpy as np
import torch

from conformance.implementations.capture import LossRecorder
from conformance.implementations.introspect import quiet
from conformance.implementations.library_sac import grads, unsupported
from conformance.implementations.tianshou import HOST_ONLY
from conformance.interface import SACOutcome


class _Critic(torch.nn.Module):
    """A spec Q-network as a Tianshou critic: numpy observations (and actions) to float64."""

    def __init__(self, q):
        super().__init__()
        self.q = q

    def forward(self, obs, act=None):
        obs = torch.as_tensor(obs, dtype=torch.float64)
        if act is None:  # discrete: Q(s) for every action
            return self.q(obs)
        return self.q(obs, torch.as_tensor(act, dtype=torch.float64))


class _DiscreteActor(torch.nn.Module):
    """The spec's logits network with Tianshou's actor signature."""

    def __init__(self, actor):
        super().__init__()
        self.actor = actor

    def forward(self, obs, state=None, info=None):
        return self.actor(torch.as_tensor(obs, dtype=torch.float64)), state


def _spec_policy_class(sac_policy_cls, batch_cls):
    class SpecPolicy(sac_policy_cls):
        """``SACPolicy`` whose action is the spec's (unsquashed, noise given with the state)."""

        def __init__(self, networks, action_space):
            super().__init__(actor=networks.actor, action_space=action_space,
                             action_scaling=False)
            self.outputs, self.distribution = networks.actor_outputs, networks.distribution

        def forward(self, batch, state=None, **kwargs):
            out = self.actor(torch.as_tensor(batch.obs, dtype=torch.float64))
            dist = self.distribution(**dict(zip(self.outputs, out, strict=True)))
            act = dist.rsample()
            return batch_cls(act=act, log_prob=dist.log_prob(act).unsqueeze(-1), dist=dist,
                             state=state)

    return SpecPolicy


class TianshouSAC:
    devices = ("cpu",)  # conformance.interface: the devices this area runs on
    devices_why = HOST_ONLY

    def __init__(self, ts):
        self.ts = ts

    def build(self, networks, batch, alpha, gamma, target_entropy, critic_optim=None,
              policy_optim=None):
        """The algorithm (optimisers from the given OptimizerFactory's, or Adam) and the filled
        buffer."""
        ts = self.ts
        n_actions = batch.action.shape[-1]
        critic_optim = critic_optim or ts.AdamOptimizerFactory()
        actor = copy.deepcopy(networks.actor)
        critics = [_Critic(copy.deepcopy(q)) for q in networks.qvalues]
        auto = ts.AutoAlpha(target_entropy, math.log(alpha), ts.AdamOptimizerFactory())
        common = dict(policy_optim=policy_optim or ts.AdamOptimizerFactory(), critic=critics[0],
                      critic_optim=critic_optim, critic2=critics[1], critic2_optim=critic_optim,
                      tau=0.005, gamma=gamma, alpha=auto, n_step_return_horizon=1)
        with quiet():
            if networks.kind == "continuous":
                space = ts.Box(-1.0, 1.0, (n_actions,), dtype=np.float64)
                policy = ts.SpecPolicy(_Networks(networks, actor), space)
                algo = ts.SAC(policy=policy, **common)
            else:
                policy = ts.DiscreteSACPolicy(actor=_DiscreteActor(actor),
                                              action_space=ts.Discrete(n_actions))
                algo = ts.DiscreteSAC(policy=policy, **common)
        buffer = ts.ReplayBuffer(batch.reward.shape[0])
        for i in range(batch.reward.shape[0]):
            terminated = bool(batch.terminated[i, 0])
            act = batch.action[i].numpy()
            if networks.kind == "discrete":
                act = int(np.argmax(act))
            buffer.add(ts.Batch(obs=batch.observation[i].numpy(), act=act,
                                rew=float(batch.reward[i, 0]), terminated=terminated,
                                truncated=bool(batch.done[i, 0]) and not terminated,
                                obs_next=batch.next_observation[i].numpy(), info={}))
        return algo, buffer, actor, critics

    def update(self, algo, buffer):
        with quiet(), self.ts.policy_within_training_step(algo.policy):
            return algo.update(buffer, sample_size=0)

    def loss(self, *, networks, batch, skip_done_states, alpha, gamma,
             target_entropy) -> SACOutcome:
        why = unsupported("Tianshou", kind=networks.kind, layout=batch.layout,
                          skip=skip_done_states, kinds=("continuous", "discrete"))
        if why:
            raise NotImplementedError(why)
        if len(networks.qvalues) != 2:  # critic1 and critic2 are its only Q-networks
            raise NotImplementedError(
                f"Tianshou's SAC has exactly two critics (critic1, critic2), not "
                f"{len(networks.qvalues)} Q-networks")
        algo, buffer, actor, critics = self.build(networks, batch, alpha, gamma, target_entropy)
        recorders = {name: LossRecorder() for name in ("critic_optim", "critic2_optim",
                                                    "policy_optim")}
        for name, recorder in recorders.items():
            setattr(algo, name, recorder)
        stats = self.update(algo, buffer)
        (q1,), (q2,), (actor_loss,) = (recorders[n].losses for n in recorders)
        f64 = lambda x: torch.as_tensor(float(x), dtype=torch.float64)  # noqa: E731
        return SACOutcome(
            losses={"loss_actor": actor_loss.detach().to(torch.float64),
                    "loss_qvalue": (q1 + q2).detach().to(torch.float64),
                    "loss_alpha": f64(stats.alpha_loss)},
            actor_grad=grads(actor_loss, list(actor.named_parameters())),
            qvalue_grad=[grads(loss, list(c.q.named_parameters()))
                         for loss, c in zip((q1, q2), critics, strict=True)],
            skip_done_states=None,
        )


class _Networks:
    """The spec's networks with the actor replaced by the adapter's copy."""

    def __init__(self, networks, actor):
        self.actor, self.actor_outputs = actor, networks.actor_outputs
        self.distribution = networks.distribution


def make(adapter):
    import types

    from gymnasium.spaces import Box, Discrete
    from tianshou.algorithm.modelfree.discrete_sac import DiscreteSAC, DiscreteSACPolicy
    from tianshou.algorithm.modelfree.sac import SAC, AutoAlpha, SACPolicy
    from tianshou.algorithm.optim import AdamOptimizerFactory
    from tianshou.data import Batch, ReplayBuffer
    from tianshou.utils.torch_utils import policy_within_training_step

    return TianshouSAC(types.SimpleNamespace(
        SAC=SAC, DiscreteSAC=DiscreteSAC, DiscreteSACPolicy=DiscreteSACPolicy,
        SpecPolicy=_spec_policy_class(SACPolicy, Batch), AutoAlpha=AutoAlpha,
        AdamOptimizerFactory=AdamOptimizerFactory, Batch=Batch, ReplayBuffer=ReplayBuffer,
        Box=Box, Discrete=Discrete, policy_within_training_step=policy_within_training_step))
