"""The SB3 adapter returns the value loss SB3's own PPO.train() computes, logs and steps on."""

from __future__ import annotations

import numpy as np
import torch

from tests.libraries.conftest import need

need("stable_baselines3")

from conformance.implementations.sb3 import IMPLEMENTATION  # noqa: E402


def _data(seed=3, n=16):
    rng = np.random.default_rng(seed)
    old = rng.normal(0.0, 2.0, n)
    v = old + rng.normal(0.0, 1.0, n)
    R = old + rng.normal(0.0, 3.0, n)
    col = lambda x: torch.as_tensor(x, dtype=torch.float64).reshape(-1, 1)  # noqa: E731
    return col(v), col(old), col(R)


def _net():
    net = torch.nn.Linear(1, 1, dtype=torch.float64)
    with torch.no_grad():
        net.weight.fill_(1.0)
        net.bias.fill_(0.0)
    return net


def test_the_returned_loss_is_the_value_loss_sb3_logs():
    area = IMPLEMENTATION.ppo_value_clipping
    v, old, R = _data()
    model = area.build(v.shape[0], 0.25, 0.2, 0.5)
    area.fill(model, _net(), v, old, R)
    loss = area.train_once(model)
    logged = model.logger.name_to_value["train/value_loss"]
    assert float(loss) == logged


def test_the_gradient_of_the_returned_loss_is_what_sb3s_optimiser_steps_on():
    """A full train() with plain SGD (lr 1, no gradient clipping, no early stop) moves the value
    network's parameters by minus the gradient of vf_coef * the loss the adapter returns."""
    area = IMPLEMENTATION.ppo_value_clipping
    v, old, R = _data()
    expected_net = _net()
    out = area.critic_loss(value_net=expected_net, observation=v, old_value=old, returns=R,
                           clip_value=0.25, clip_epsilon=0.2, critic_coeff=0.5)
    out.loss.backward()
    expected = [p.grad.clone() for p in expected_net.parameters()]

    net = _net()
    model = area.build(v.shape[0], 0.25, 0.2, 0.5, target_kl=None)
    area.fill(model, net, v, old, R)
    model.policy.optimizer = torch.optim.SGD(model.policy.parameters(), lr=1.0)
    model.lr_schedule = lambda _: 1.0  # train() resets the optimiser's lr from this schedule
    before = [p.detach().clone() for p in net.parameters()]
    area.train_once(model)
    steps = [b - p.detach() for b, p in zip(before, net.parameters(), strict=True)]
    for step, grad in zip(steps, expected, strict=True):
        torch.testing.assert_close(step, grad, rtol=1e-12, atol=1e-12)


def test_the_mode_is_sb3s_squashed_gaussian_mode():
    from stable_baselines3.common.distributions import SquashedDiagGaussianDistribution

    area = IMPLEMENTATION.tanh_normal_mode
    loc = torch.tensor([[0.2, -1.0]], dtype=torch.float64)
    scale = torch.tensor([[1.0, 0.5]], dtype=torch.float64)
    own = SquashedDiagGaussianDistribution(2).proba_distribution(loc, scale.log()).mode()
    assert torch.equal(area.mode(area.make(loc, scale)), own)
    # other bounds go through BasePolicy.unscale_action: low + (a + 1) (high - low) / 2
    shifted = area.mode(area.make(loc, scale, low=0.0, high=2.0))
    torch.testing.assert_close(shifted, own + 1.0, rtol=0, atol=1e-15)
