"""§3 through SB3's ``SAC.train()``: one gradient step on the spec's transitions.

The algorithm is built the ordinary way, ``SAC("MlpPolicy", env, buffer_size=B, batch_size=B,
gamma=gamma, ent_coef=f"auto_{alpha}", target_entropy=..., policy_kwargs={"n_critics": 2})``, its
``replay_buffer`` is filled with ``add(obs, next_obs, action, reward, done, infos)`` (a truncated
transition is ``done`` with ``infos[0]["TimeLimit.truncated"] = True``, as SB3's VecEnv reports
it; the buffer then stores ``done * (1 - timeout)``), and ``train(1, B)`` runs SB3's own loss
code: TD(0) targets with ``(1 - dones)``, the critic, actor and entropy-coefficient losses.
SB3's SAC is continuous (Box) only.

Hooks, each named with its reason:

- **float64.** SB3 casts Box observations to float32 (``preprocess_obs``) and float64 actions
  and rewards to float32 (``ReplayBuffer._maybe_cast_dtype``, ``rewards``); the spec's networks
  and data are float64. So the observation SB3 stores is a row number (exact in float32: ``i``
  for s_i, ``B + i`` for s'_i), the networks look the float64 state up, and the buffer's
  ``actions`` / ``rewards`` arrays are float64 before anything is added.
- **The networks.** The critics' ``q_networks`` (and the target critic's, copies) are the spec's
  Q-networks behind that lookup (``ContinuousCritic.forward`` still extracts features and
  concatenates the action); the actor's ``action_log_prob`` (the one method ``train()`` calls
  on it) draws from the spec's policy, an unsquashed Normal whose noise comes with the state,
  instead of SB3's tanh-squashed Gaussian.
- **The batch.** ``replay_buffer.sample`` draws indices at random (with replacement); it is
  replaced by ``_get_samples(arange(B))`` (private), SB3's own sampling of given indices, so the
  step sees every transition once.
- **The gradients.** The actor and critic optimisers are recorders: at ``step()`` they keep the
  gradients SB3's ``backward()`` left and change nothing (as a single evaluation: the actor loss
  sees the critics unchanged). The losses are the values SB3 logs (``train/actor_loss``,
  ``train/critic_loss``, ``train/ent_coef_loss``). ``tests/libraries/test_sb3.py`` checks them
  against SB3's own optimiser step.
- **alpha.** ``ent_coef="auto_<alpha>"`` so that SB3 computes its entropy-coefficient loss (a
  fixed ``ent_coef`` computes none); this step uses exp(float32 log(alpha)) = alpha (0.5 here).

SB3's critic loss is ``0.5 * sum_i mse(Q_i, y)``: half the spec's ``sum_i mean (Q_i - y)^2``, so
``loss_qvalue`` and its gradients are reported times 2. Not expressible (NotImplementedError,
see conformance/implementations/library_sac.py): discrete SAC, ``skip_done_states`` True or
unset, the multi-agent layouts.
"""

from __future__ import annotations

import copy

import numpy as np
import torch

from conformance.implementations.capture import RecordingOptimizer
from conformance.implementations.introspect import quiet
from conformance.implementations.library_sac import as_rows, state_table, unsupported
from conformance.implementations.sb3 import HOST_ONLY
from conformance.implementations.sb3_areas.rows import quiet_logger, rows_env
from conformance.interface import SACOutcome


class _RowQ(torch.nn.Module):
    """A spec Q-network fed by SB3's critic: input ``[row number, action]``."""

    def __init__(self, q, table):
        super().__init__()
        self.q, self.table = q, table

    def forward(self, x):
        return self.q(self.table[as_rows(x[:, :1])], x[:, 1:].to(torch.float64))


class SB3SAC:
    devices = ("cpu",)  # conformance.interface: the devices this area runs on
    devices_why = HOST_ONLY

    def __init__(self, sac_cls, env_factory, logger_factory):
        self.sac_cls, self.env_factory, self.logger_factory = sac_cls, env_factory, logger_factory

    def build(self, networks, batch, alpha, gamma, target_entropy):
        """The model, filled, with the spec's networks in place; and the actor / critic copies."""
        b, n_actions = batch.reward.shape[0], batch.action.shape[-1]
        with quiet():
            model = self.sac_cls(
                "MlpPolicy", self.env_factory(b, n_actions), buffer_size=b, batch_size=b,
                gamma=gamma, ent_coef=f"auto_{alpha}", target_entropy=float(target_entropy),
                learning_starts=0, seed=0, device="cpu",
                policy_kwargs={"net_arch": [], "n_critics": len(networks.qvalues)})
        model.set_logger(self.logger_factory())
        table = state_table(batch)
        actor = copy.deepcopy(networks.actor)
        critics = []
        for critic, own in ((model.critic, True), (model.critic_target, False)):
            qs = [_RowQ(copy.deepcopy(q), table) for q in networks.qvalues]
            critic.q_networks = qs
            for i, q in enumerate(qs):
                critic.add_module(f"qf{i}", q)  # replaces SB3's own qf{i}
            if own:
                critics = qs

        def action_log_prob(obs):
            out = actor(table[as_rows(obs)])
            dist = networks.distribution(**dict(zip(networks.actor_outputs, out, strict=True)))
            action = dist.rsample()
            return action, dist.log_prob(action)

        model.actor.action_log_prob = action_log_prob
        self.fill(model, batch)
        return model, actor, critics

    @staticmethod
    def fill(model, batch):
        b = batch.reward.shape[0]
        rb = model.replay_buffer
        rb.actions = np.zeros((b, 1, batch.action.shape[-1]), dtype=np.float64)
        rb.rewards = np.zeros((b, 1), dtype=np.float64)
        for i in range(b):
            terminated, done = bool(batch.terminated[i, 0]), bool(batch.done[i, 0])
            rb.add(np.array([[i]], np.float32), np.array([[b + i]], np.float32),
                   batch.action[i].numpy()[None], np.array([float(batch.reward[i, 0])]),
                   np.array([done]), [{"TimeLimit.truncated": done and not terminated}])
        rb.sample = lambda batch_size, env=None: rb._get_samples(np.arange(b), env=env)

    def train_once(self, model, actor, critics):
        """One SB3 ``train()`` step with recording optimisers; the recorded gradients."""
        model.actor.optimizer = RecordingOptimizer(actor.named_parameters())
        model.critic.optimizer = RecordingOptimizer(
            (f"{i}.{n}", p) for i, q in enumerate(critics) for n, p in q.q.named_parameters())
        with quiet():
            model.train(gradient_steps=1, batch_size=model.batch_size)
        (actor_grad,), (critic_grad,) = model.actor.optimizer.steps, model.critic.optimizer.steps
        return actor_grad, critic_grad

    def loss(self, *, networks, batch, skip_done_states, alpha, gamma,
             target_entropy) -> SACOutcome:
        why = unsupported("SB3", kind=networks.kind, layout=batch.layout, skip=skip_done_states)
        if why:
            raise NotImplementedError(why)
        model, actor, critics = self.build(networks, batch, alpha, gamma, target_entropy)
        actor_grad, critic_grad = self.train_once(model, actor, critics)
        logged = model.logger.name_to_value
        f64 = lambda x: torch.as_tensor(float(x), dtype=torch.float64)  # noqa: E731
        # SB3's critic loss is 0.5 * sum_i mse_i: the spec's loss_qvalue is twice it
        qvalue_grad = [{n: 2 * critic_grad[f"{i}.{n}"] for n, _ in q.q.named_parameters()}
                       for i, q in enumerate(critics)]
        return SACOutcome(
            losses={"loss_actor": f64(logged["train/actor_loss"]),
                    "loss_qvalue": 2 * f64(logged["train/critic_loss"]),
                    "loss_alpha": f64(logged["train/ent_coef_loss"])},
            actor_grad=actor_grad, qvalue_grad=qvalue_grad, skip_done_states=None)


def sac_env(batch: int, n_actions: int):
    """The environment a SAC model of ``batch`` rows is built on (observations up to 2 batch)."""
    return rows_env(2 * batch, n_actions=n_actions)


def make(adapter):
    from stable_baselines3 import SAC

    return SB3SAC(SAC, sac_env, quiet_logger)
