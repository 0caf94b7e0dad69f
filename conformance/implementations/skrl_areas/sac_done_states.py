"""§3 through skrl's SAC agent: one ``update()`` on the spec's transitions.

The agent is built the ordinary way: ``SAC(models={"policy", "critic_1", "critic_2",
"target_critic_1", "target_critic_2"}, memory=RandomMemory(B), cfg=SAC_CFG(batch_size=B,
discount_factor=gamma, learn_entropy=True, initial_entropy_value=alpha, target_entropy=...))``,
``init()``, the transitions are recorded with ``record_transition(..., terminated, truncated,
...)`` (as a trainer does; skrl's SAC stores ``terminated`` only) and ``update()`` runs once:
TD(0) targets with ``terminated.logical_not()``, then the critic, policy and entropy losses.
skrl's ``RandomMemory`` samples without replacement (``randperm``): with ``batch_size = B`` the
update sees every transition once, in some order (the losses are means). skrl has no discrete
SAC and always uses two critics.

Hooks, each named with its reason:

- **float64.** skrl's memory stores observations, actions and rewards as float32 tensors; the
  spec's networks and data are float64. The observation skrl stores is a row number (exact in
  float32: ``i`` for s_i, ``B + i`` for s'_i) that the models look the float64 state up with, and
  the memory's ``actions`` / ``rewards`` tensors are float64 (``memory.tensors``,
  ``tensors_view``) before anything is recorded.
- **Models.** The critics are ``DeterministicMixin`` models around the spec's Q-networks
  (copies; skrl hard-copies them into the target critics in its constructor). The policy is a
  skrl ``Model`` whose ``act()`` returns the spec's draw and its log-prob: the spec's policy is an
  unsquashed Normal whose noise comes with the state, which ``GaussianMixin`` (it draws its own
  noise) cannot express.
- **The losses.** ``update()`` keeps its losses in locals and hands each to ``scaler.scale()``
  before ``backward()``: the agent's ``scaler`` (a disabled ``GradScaler``) is replaced by one that
  records those tensors and otherwise behaves the same, and the policy and critic optimisers by
  recorders of the gradients present at ``step()`` that change nothing (as a single evaluation:
  the policy loss sees the critics unchanged). ``tests/libraries/test_skrl.py`` checks them
  against skrl's own optimisers.

skrl's critic loss is ``(mse(Q_1, y) + mse(Q_2, y)) / 2``: half the spec's ``sum_i mean (Q_i -
y)^2``, so ``loss_qvalue`` and its gradients are reported times 2. Not expressible
(NotImplementedError, see conformance/implementations/library_sac.py): discrete SAC,
``skip_done_states`` True or unset, the multi-agent layouts.
"""

from __future__ import annotations

import copy

import torch

from conformance.implementations.capture import DisabledScaler, RecordingOptimizer
from conformance.implementations.introspect import quiet
from conformance.implementations.library_sac import as_rows, state_table, unsupported
from conformance.implementations.skrl import HOST_ONLY
from conformance.implementations.skrl_areas.ppo_value_clipping import _float64
from conformance.interface import SACOutcome


class _RecordingScaler(DisabledScaler):
    """A disabled GradScaler that keeps every loss it is asked to scale."""

    def __init__(self):
        self.losses: list[torch.Tensor] = []

    def scale(self, loss):
        self.losses.append(loss)
        return loss


class SkrlSAC:
    devices = ("cpu",)  # conformance.interface: the devices this area runs on
    devices_why = HOST_ONLY

    def __init__(self, skrl):
        self.skrl = skrl

    def build(self, networks, batch, alpha, gamma, target_entropy):
        """The agent, with the spec's transitions recorded; and the actor / critic copies."""
        import gymnasium

        s = self.skrl
        b, n_actions = batch.reward.shape[0], batch.action.shape[-1]
        obs_space = gymnasium.spaces.Box(0.0, float(2 * b), (1,))
        act_space = gymnasium.spaces.Box(-1.0, 1.0, (n_actions,))
        table = state_table(batch)
        space = dict(observation_space=obs_space, action_space=act_space, device="cpu")

        class Policy(s.Model):
            def __init__(self, actor):
                s.Model.__init__(self, **space)
                self.actor = actor

            def compute(self, inputs, role=""):
                out = self.actor(table[as_rows(inputs["observations"])])
                dist = networks.distribution(**dict(zip(networks.actor_outputs, out,
                                                        strict=True)))
                action = dist.rsample()
                return action, {"log_prob": dist.log_prob(action).unsqueeze(-1)}

            def act(self, inputs, *, role=""):
                return self.compute(inputs, role)

        class Critic(s.DeterministicMixin, s.Model):
            def __init__(self, q):
                s.Model.__init__(self, **space)
                s.DeterministicMixin.__init__(self)
                self.q = q

            def compute(self, inputs, role=""):
                state = table[as_rows(inputs["observations"])]
                return self.q(state, inputs["taken_actions"].to(torch.float64)), {}

        actor = copy.deepcopy(networks.actor)
        critics = [Critic(copy.deepcopy(q)) for q in networks.qvalues]
        targets = [Critic(copy.deepcopy(q)) for q in networks.qvalues]
        memory = s.RandomMemory(memory_size=b, num_envs=1, device="cpu")
        cfg = s.SAC_CFG(batch_size=b, discount_factor=gamma, learn_entropy=True,
                        initial_entropy_value=alpha, target_entropy=float(target_entropy),
                        grad_norm_clip=0.0)
        with quiet():
            agent = s.SAC(models={"policy": Policy(actor), "critic_1": critics[0],
                                  "critic_2": critics[1], "target_critic_1": targets[0],
                                  "target_critic_2": targets[1]},
                          memory=memory, observation_space=obs_space, action_space=act_space,
                          device="cpu", cfg=cfg)
            agent.init()
        for name in ("actions", "rewards"):
            _float64(memory, name)
        agent.enable_training_mode(True)
        for i in range(b):
            terminated = batch.terminated[i:i + 1]
            agent.record_transition(
                observations=torch.tensor([[float(i)]]), states=None,
                actions=batch.action[i:i + 1], rewards=batch.reward[i:i + 1],
                next_observations=torch.tensor([[float(b + i)]]), next_states=None,
                terminated=terminated, truncated=batch.done[i:i + 1] & ~terminated, infos={},
                timestep=i, timesteps=b)
        return agent, actor, critics

    def update_once(self, agent, actor, critics):
        """One skrl ``update()`` with recording scaler and optimisers."""
        agent.scaler = _RecordingScaler()
        agent.policy_optimizer = RecordingOptimizer(actor.named_parameters())
        agent.critic_optimizer = RecordingOptimizer(
            (f"{i}.{n}", p) for i, c in enumerate(critics) for n, p in c.q.named_parameters())
        with quiet():
            agent.update(timestep=0, timesteps=1)
        return agent.scaler.losses, agent.policy_optimizer.steps, agent.critic_optimizer.steps

    def loss(self, *, networks, batch, skip_done_states, alpha, gamma,
             target_entropy) -> SACOutcome:
        why = unsupported("skrl", kind=networks.kind, layout=batch.layout, skip=skip_done_states)
        if why:
            raise NotImplementedError(why)
        if len(networks.qvalues) != 2:
            raise NotImplementedError("skrl's SAC has exactly two critics (critic_1, critic_2)")
        agent, actor, critics = self.build(networks, batch, alpha, gamma, target_entropy)
        losses, (actor_grad,), (critic_grad,) = self.update_once(agent, actor, critics)
        if len(losses) != 3:
            raise AssertionError(f"skrl SAC.update() scaled {len(losses)} losses, expected 3 "
                                 "(critic, policy, entropy)")
        critic_loss, policy_loss, entropy_loss = (x.detach().to(torch.float64) for x in losses)
        # skrl's critic loss is (mse_1 + mse_2) / 2: the spec's loss_qvalue is twice it
        qvalue_grad = [{n: 2 * critic_grad[f"{i}.{n}"] for n, _ in c.q.named_parameters()}
                       for i, c in enumerate(critics)]
        return SACOutcome(
            losses={"loss_actor": policy_loss, "loss_qvalue": 2 * critic_loss,
                    "loss_alpha": entropy_loss},
            actor_grad=actor_grad, qvalue_grad=qvalue_grad, skip_done_states=None)


def make(adapter):
    import types

    from skrl.agents.torch.sac import SAC, SAC_CFG
    from skrl.memories.torch import RandomMemory
    from skrl.models.torch import DeterministicMixin, Model

    return SkrlSAC(types.SimpleNamespace(SAC=SAC, SAC_CFG=SAC_CFG, RandomMemory=RandomMemory,
                                         DeterministicMixin=DeterministicMixin, Model=Model))
