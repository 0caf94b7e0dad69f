"""The Tianshou adapter drives Tianshou's PrioritizedReplayBuffer and SACPolicy."""

from __future__ import annotations

import numpy as np
import torch

from tests.libraries.conftest import need

need("tianshou")

from conformance.implementations.tianshou import IMPLEMENTATION  # noqa: E402


def test_the_buffer_is_tianshous_and_the_eps_translation_is_exact():
    from tianshou.data import PrioritizedReplayBuffer

    buf = IMPLEMENTATION.prioritized_replay.buffer(capacity=8, alpha=0.6, beta=0.4, eps=1e-3)
    assert type(buf.rb) is PrioritizedReplayBuffer
    assert list(buf.extend(3)) == [0, 1, 2]
    p = np.array([2.0, 10.0, 0.25])
    buf.update_priority(np.arange(3), p)
    # Tianshou's own segment tree holds (p + eps)^alpha with the spec's eps
    np.testing.assert_allclose(buf.tree_values(), (p + 1e-3) ** 0.6, rtol=1e-6)
    assert abs(buf.default_priority() - 10.0) < 1e-6
    draw = buf.sample(32, torch.Generator().manual_seed(0))
    again = buf.sample(32, torch.Generator().manual_seed(0))
    assert np.array_equal(draw.index, again.index)  # numpy's global generator, seeded
    assert np.array_equal(draw.item, draw.index)  # items are written with their slot's id


def test_the_mode_is_sac_policys_deterministic_action():
    from gymnasium.spaces import Box
    from tianshou.algorithm.modelfree.sac import SACPolicy
    from tianshou.data import Batch

    area = IMPLEMENTATION.tanh_normal_mode
    loc = torch.tensor([[0.2], [-1.5]], dtype=torch.float64)
    scale = torch.tensor([[1.0], [0.3]], dtype=torch.float64)

    class Actor(torch.nn.Module):
        def forward(self, obs, state=None, info=None):
            return (loc, scale), state

    policy = SACPolicy(actor=Actor(), action_space=Box(-1.0, 1.0, (1,), dtype=np.float64))
    own = policy(Batch(obs=np.zeros((2, 1)), info={})).act
    assert torch.equal(area.mode(area.make(loc, scale)), own)


def test_the_recorded_loss_is_what_tianshous_optimiser_steps_on():
    """With Tianshou's own optimiser (plain SGD, lr 1), one _update_with_batch moves the value
    network's parameters by minus the gradient of the loss the adapter returns."""
    area = IMPLEMENTATION.ppo_value_clipping
    rng = np.random.default_rng(3)
    old = torch.as_tensor(rng.normal(0.0, 2.0, 16), dtype=torch.float64).reshape(-1, 1)
    v = old + torch.as_tensor(rng.normal(0.0, 1.0, 16), dtype=torch.float64).reshape(-1, 1)
    R = old + torch.as_tensor(rng.normal(0.0, 3.0, 16), dtype=torch.float64).reshape(-1, 1)

    def net():
        n = torch.nn.Linear(1, 1, dtype=torch.float64)
        with torch.no_grad():
            n.weight.fill_(1.0)
            n.bias.fill_(0.0)
        return n

    expected_net = net()
    out = area.critic_loss(value_net=expected_net, observation=v, old_value=old, returns=R,
                           clip_value=True, clip_epsilon=0.25, critic_coeff=0.5)
    out.loss.backward()
    expected = [p.grad.clone() for p in expected_net.parameters()]

    stepped = net()
    algo, batch = area.build(stepped, v, old, R, True, 0.25, 0.5,
                             optim=area.ts.TorchOptimizerFactory(torch.optim.SGD, lr=1.0))
    before = [p.detach().clone() for p in stepped.parameters()]
    algo._update_with_batch(batch, v.shape[0], 1)
    for b, p, g in zip(before, stepped.parameters(), expected, strict=True):
        torch.testing.assert_close(b - p.detach(), g, rtol=1e-12, atol=1e-12)
