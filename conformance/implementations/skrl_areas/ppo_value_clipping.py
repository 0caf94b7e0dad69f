"""§4 through skrl's PPO agent: the value loss ``PPO.update()`` computes and steps on.

The agent is built the ordinary way: ``PPO(models={"policy", "value"}, memory=RandomMemory(B),
cfg=PPO_CFG(rollouts=B, learning_epochs=1, mini_batches=1, value_clip=c, value_loss_scale=
critic_coeff, entropy_loss_scale=0, grad_norm_clip=0))``, ``init()``, the memory is filled with
``add_samples`` (terminal steps with reward R, so skrl's GAE gives returns = R and the stored
values are the old predictions), and ``update()`` runs once. Hooks, named with their reason:

- **float64.** skrl stores observations, values and returns as float32 tensors; the spec's data
  and value network are float64. The observation skrl sees is the row number (exact in
  float32), the value model applies the spec's network to that row's float64 observation, and
  the memory's ``values`` / ``rewards`` tensors are replaced by float64 ones (``memory.tensors``
  and ``tensors_view``), so skrl's clipping runs in float64.
- **The loss tensor.** ``update()`` keeps ``value_loss`` in a local; ``capture.recording_mse``
  records what ``F.mse_loss`` returns in ``skrl.agents.torch.ppo.ppo``. To keep its graph for
  the spec, the agent's ``scaler`` (a disabled ``GradScaler``) is replaced by one whose
  backward retains the graph, and its ``optimizer`` by one that records the gradients and does
  not step (``tests/libraries/test_skrl.py`` checks that they are the gradients of the tensor
  returned). ``update()`` reads ``_current_next_observations`` (set by ``record_transition``),
  set here directly; with every step terminal it does not affect the returns.

skrl's critic term is ``value_loss_scale * F.mse_loss`` (no 0.5): scale 2. ``value_clip <= 0``
silently disables clipping (so off is 0, and a negative threshold is accepted); there is no
"use ratio_clip" value (``clip_value=True`` raises NotImplementedError) and no clip fraction.
"""

from __future__ import annotations

import torch

from conformance.implementations.capture import (
    DisabledScaler,
    RecordingOptimizer,
    recording_mse,
)
from conformance.implementations.introspect import quiet
from conformance.implementations.skrl import HOST_ONLY
from conformance.interface import CriticLoss


class _RetainingScaler(DisabledScaler):
    """A disabled GradScaler whose backward keeps the graph (the spec differentiates it again)."""

    def scale(self, loss):
        class _Loss:
            def backward(self_inner):
                loss.backward(retain_graph=True)

        return _Loss()


def _float64(memory, name: str) -> None:
    old = memory.tensors[name]
    new = old.to(torch.float64)
    setattr(memory, f"_tensor_{name}", new)
    memory.tensors[name] = new
    memory.tensors_view[name] = new.view((-1, *new.shape[2:]))


class SkrlPPOCritic:
    devices = ("cpu",)  # conformance.interface: the devices this area runs on
    devices_why = HOST_ONLY
    critic_scale = 2.0  # F.mse_loss: no 0.5

    def __init__(self, skrl):
        self.skrl = skrl

    def build(self, value_net, observation, clip_value, clip_epsilon, critic_coeff):
        import gymnasium

        s = self.skrl
        if clip_value is True:
            raise NotImplementedError(
                "skrl's value_clip is a float (<= 0 disables it): it has no 'same as ratio_clip' "
                "option")
        value_clip = 0.0 if clip_value is None or clip_value is False else float(clip_value)
        batch = observation.shape[0]
        obs_space = gymnasium.spaces.Box(0.0, float(batch), (1,))
        act_space = gymnasium.spaces.Box(-1.0, 1.0, (1,))

        class Policy(s.GaussianMixin, s.Model):
            def __init__(self):
                s.Model.__init__(self, observation_space=obs_space, action_space=act_space,
                                 device="cpu")
                s.GaussianMixin.__init__(self)

            def compute(self, inputs, role=""):
                x = inputs["observations"]
                return torch.zeros_like(x), {"log_std": torch.zeros_like(x)}

        class Value(s.DeterministicMixin, s.Model):
            def __init__(self):
                s.Model.__init__(self, observation_space=obs_space, action_space=act_space,
                                 device="cpu")
                s.DeterministicMixin.__init__(self)
                self.net = value_net

            def compute(self, inputs, role=""):
                rows = inputs["observations"][:, 0].round().long()
                return self.net(observation[rows]), {}

        torch.manual_seed(0)  # RandomMemory shuffles with torch's global generator
        memory = s.RandomMemory(memory_size=batch, num_envs=1, device="cpu")
        cfg = s.PPO_CFG(rollouts=batch, learning_epochs=1, mini_batches=1, ratio_clip=clip_epsilon,
                        value_clip=value_clip, value_loss_scale=critic_coeff,
                        entropy_loss_scale=0.0, grad_norm_clip=0.0)
        with quiet():
            agent = s.PPO(models={"policy": Policy(), "value": Value()}, memory=memory,
                          observation_space=obs_space, action_space=act_space, device="cpu",
                          cfg=cfg)
            agent.init()
        return agent, memory

    @staticmethod
    def fill(agent, memory, old_value, returns):
        batch = old_value.shape[0]
        rows = torch.arange(batch, dtype=torch.float32).reshape(batch, 1)
        with torch.no_grad():
            _, out = agent.policy.act({"observations": rows, "taken_actions": torch.zeros(batch, 1)},
                                      role="policy")
        for i in range(batch):
            memory.add_samples(
                observations=rows[i:i + 1], states=torch.zeros(1, 0), actions=torch.zeros(1, 1),
                rewards=torch.zeros(1, 1), terminated=torch.ones(1, 1, dtype=torch.bool),
                truncated=torch.zeros(1, 1, dtype=torch.bool), log_prob=out["log_prob"][i:i + 1],
                values=torch.zeros(1, 1))
        for name in ("values", "rewards", "returns", "advantages"):
            _float64(memory, name)
        memory.tensors["values"].view(-1)[:] = old_value.detach().reshape(-1)
        memory.tensors["rewards"].view(-1)[:] = returns.detach().reshape(-1)
        agent._current_next_observations = rows[-1:]
        agent._current_next_states = None

    def update_once(self, agent):
        agent.scaler = _RetainingScaler()
        agent.optimizer = RecordingOptimizer(
            [*agent.policy.named_parameters(prefix="policy"),
             *agent.value.named_parameters(prefix="value")])
        with recording_mse(self.skrl.ppo_module) as seen, quiet():
            agent.update(timestep=0, timesteps=1)
        if len(seen) != 1:
            raise AssertionError(f"skrl PPO.update() computed {len(seen)} MSE losses, expected 1")
        return seen[0]

    def critic_loss(self, *, value_net, observation, old_value, returns, clip_value, clip_epsilon,
                    critic_coeff) -> CriticLoss:
        agent, memory = self.build(value_net, observation, clip_value, clip_epsilon, critic_coeff)
        self.fill(agent, memory, old_value, returns)
        mse = self.update_once(agent)
        value_net.zero_grad(set_to_none=True)  # update() already ran backward once
        # skrl's value_loss is `value_loss_scale * F.mse_loss(...)`; it reports no clip fraction
        return CriticLoss(agent.cfg.value_loss_scale * mse, None)


def make(adapter):
    import types

    from skrl.agents.torch.ppo import PPO, PPO_CFG
    from skrl.agents.torch.ppo import ppo as ppo_module
    from skrl.memories.torch import RandomMemory
    from skrl.models.torch import DeterministicMixin, GaussianMixin, Model

    return SkrlPPOCritic(types.SimpleNamespace(
        PPO=PPO, PPO_CFG=PPO_CFG, ppo_module=ppo_module, RandomMemory=RandomMemory,
        DeterministicMixin=DeterministicMixin, GaussianMixin=GaussianMixin, Model=Model))
