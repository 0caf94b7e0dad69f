"""The Tianshou adapter drives Tianshou's PrioritizedReplayBuffer, SACPolicy, PPO and SAC /
DiscreteSAC: what it returns is what Tianshou's optimisers step on; a mutant fails."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from tests.libraries.conftest import identity_value_net, need, sac_truncation_mutant_fails

#: run in the library's layer (python -m conformance.libraries.selftests); the mutant
#: tests among them run the suite in a subprocess
pytestmark = pytest.mark.slow

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

    expected_net = identity_value_net()
    out = area.critic_loss(value_net=expected_net, observation=v, old_value=old, returns=R,
                           clip_value=True, clip_epsilon=0.25, critic_coeff=0.5)
    out.loss.backward()
    expected = [p.grad.clone() for p in expected_net.parameters()]

    stepped = identity_value_net()
    algo, batch = area.build(stepped, v, old, R, True, 0.25, 0.5,
                             optim=area.ts.TorchOptimizerFactory(torch.optim.SGD, lr=1.0))
    before = [p.detach().clone() for p in stepped.parameters()]
    algo._update_with_batch(batch, v.shape[0], 1)
    for b, p, g in zip(before, stepped.parameters(), expected, strict=True):
        torch.testing.assert_close(b - p.detach(), g, rtol=1e-12, atol=1e-12)


# ------------------------------------------------------------------------------------ §3 SAC


def _sac_case(kind):
    from conformance import test_sac_done_states as spec

    nets, _ = spec.networks(kind)
    data = spec.batch(kind, "single", "truncated")
    return nets, data, (spec.ALPHA, spec.GAMMA, spec.TARGET_ENTROPY[kind])


@pytest.mark.parametrize("kind", ["continuous", "discrete"])
def test_the_sac_losses_are_what_tianshous_optimisers_step_on(kind):
    """With Tianshou's own optimisers (plain SGD), one update moves each critic by minus the
    gradient the adapter reports for it (policy lr 0), and the policy by minus the actor loss's
    gradient (critics lr 0, so the actor loss sees them unchanged)."""
    from tianshou.algorithm.optim import TorchOptimizerFactory

    area = IMPLEMENTATION.sac_done_states
    nets, data, (alpha, gamma, entropy) = _sac_case(kind)
    out = area.loss(networks=nets, batch=data, skip_done_states=False, alpha=alpha, gamma=gamma,
                    target_entropy=entropy)

    def sgd(lr):
        return TorchOptimizerFactory(torch.optim.SGD, lr=lr)

    algo, buffer, actor, critics = area.build(nets, data, alpha, gamma, entropy,
                                              critic_optim=sgd(1.0), policy_optim=sgd(0.0))
    before = [{n: p.detach().clone() for n, p in c.q.named_parameters()} for c in critics]
    stats = area.update(algo, buffer)
    assert stats.critic1_loss + stats.critic2_loss == pytest.approx(
        float(out.losses["loss_qvalue"]), rel=1e-12)
    for i, critic in enumerate(critics):
        for name, p in critic.q.named_parameters():
            torch.testing.assert_close(before[i][name] - p.detach(), out.qvalue_grad[i][name],
                                       rtol=1e-10, atol=1e-12)
    algo, buffer, actor, critics = area.build(nets, data, alpha, gamma, entropy,
                                              critic_optim=sgd(0.0), policy_optim=sgd(1.0))
    before = {n: p.detach().clone() for n, p in actor.named_parameters()}
    area.update(algo, buffer)
    for name, p in actor.named_parameters():
        torch.testing.assert_close(before[name] - p.detach(), out.actor_grad[name], rtol=1e-10,
                                   atol=1e-12)


def test_a_tianshou_sac_mutant_fails_the_truncation_spec(tmp_path):
    """Tianshou with truncated transitions stored as terminated fails the spec the real one
    passes, naming the bug."""
    sac_truncation_mutant_fails(tmp_path, "tianshou", "TIANSHOU_TRUNCATION_AS_TERMINATION")
