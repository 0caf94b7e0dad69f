"""The SB3 adapters return what SB3's own code computes and steps on: PPO.train()'s value loss,
SAC.train()'s losses, MultiCategoricalDistribution's joint log-prob; mutants fail."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from tests.libraries.conftest import (
    assert_sgd_step_is_minus_the_gradient,
    composite_mean_mutant_fails,
    identity_value_net,
    need,
    sac_parameters,
    sac_truncation_mutant_fails,
)

#: run in the library's layer (python -m conformance.libraries.selftests); the mutant
#: tests among them run the suite in a subprocess
pytestmark = pytest.mark.slow

need("stable_baselines3")

from conformance.implementations.sb3 import IMPLEMENTATION  # noqa: E402


def _data(seed=3, n=16):
    rng = np.random.default_rng(seed)
    old = rng.normal(0.0, 2.0, n)
    v = old + rng.normal(0.0, 1.0, n)
    R = old + rng.normal(0.0, 3.0, n)
    col = lambda x: torch.as_tensor(x, dtype=torch.float64).reshape(-1, 1)  # noqa: E731
    return col(v), col(old), col(R)


def test_the_returned_loss_is_the_value_loss_sb3_logs():
    area = IMPLEMENTATION.ppo_value_clipping
    v, old, R = _data()
    model = area.build(v.shape[0], 0.25, 0.2, 0.5)
    area.fill(model, identity_value_net(), v, old, R)
    loss = area.train_once(model)
    logged = model.logger.name_to_value["train/value_loss"]
    assert float(loss) == logged


def test_the_gradient_of_the_returned_loss_is_what_sb3s_optimiser_steps_on():
    """A full train() with plain SGD (lr 1, no gradient clipping, no early stop) moves the value
    network's parameters by minus the gradient of vf_coef * the loss the adapter returns."""
    area = IMPLEMENTATION.ppo_value_clipping
    v, old, R = _data()
    expected_net = identity_value_net()
    out = area.critic_loss(value_net=expected_net, observation=v, old_value=old, returns=R,
                           clip_value=0.25, clip_epsilon=0.2, critic_coeff=0.5)
    out.loss.backward()
    expected = [p.grad.clone() for p in expected_net.parameters()]

    net = identity_value_net()
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


# ------------------------------------------------------------------------------------ §3 SAC


def _sac_case():
    from conformance import test_sac_done_states as spec

    nets, _ = spec.networks("continuous")
    data = spec.batch("continuous", "single", "truncated")
    return nets, data, (spec.ALPHA, spec.GAMMA, spec.TARGET_ENTROPY["continuous"])


def test_the_sac_losses_are_what_sb3s_optimisers_step_on():
    """With plain SGD (lr 1) as the critic's optimiser, one SB3 train() step moves each critic by
    minus the gradient of SB3's critic loss, half the spec's (the adapter reports it times 2);
    with SGD as the actor's (the critic's a recorder, so it stays put), the actor moves by minus
    the actor loss's gradient."""
    from conformance.implementations.capture import RecordingOptimizer
    from conformance.implementations.introspect import quiet

    area = IMPLEMENTATION.sac_done_states
    nets, data, (alpha, gamma, entropy) = _sac_case()
    out = area.loss(networks=nets, batch=data, skip_done_states=False, alpha=alpha, gamma=gamma,
                    target_entropy=entropy)
    for stepped in ("critic", "actor"):
        model, actor, critics = area.build(nets, data, alpha, gamma, entropy)
        model.lr_schedule = lambda _: 1.0  # train() resets every optimiser's lr from it
        named = sac_parameters(actor, critics)
        for which, owner in (("actor", model.actor), ("critic", model.critic)):
            params = [p for _, p in named[which]]
            owner.optimizer = (torch.optim.SGD(params, lr=1.0) if which == stepped
                               else RecordingOptimizer(named[which]))
        before = {n: p.detach().clone() for n, p in named[stepped]}
        with quiet():
            model.train(gradient_steps=1, batch_size=model.batch_size)
        assert_sgd_step_is_minus_the_gradient(named[stepped], before, out, critic_scale=2)


def test_an_sb3_sac_mutant_fails_the_truncation_spec(tmp_path):
    """SB3 with handle_timeout_termination=False (time-limit truncations stored as done) fails
    the spec the default SB3 passes, naming the bug."""
    sac_truncation_mutant_fails(tmp_path, "sb3", "SB3_NO_TIMEOUT_HANDLING")


# ----------------------------------------------------------------------- §2 multi-categorical


def test_the_joint_log_prob_is_sb3s_and_a_mutant_fails(tmp_path):
    """The aggregate is MultiCategoricalDistribution.log_prob itself; a distribution that
    averages its heads instead of summing them fails the specs naming the aggregate."""
    from stable_baselines3.common.distributions import MultiCategoricalDistribution

    from conformance.test_composite_log_prob import seed_heads

    heads = seed_heads()
    got = IMPLEMENTATION.composite_log_prob.actor(heads, exploration="random", seed=0)
    logits = torch.cat([x.params["logits"] for x in heads.values()], dim=-1)
    own = MultiCategoricalDistribution([8, 1]).proba_distribution(logits)
    action = torch.stack([got.actions[h] for h in heads], dim=-1)
    assert torch.equal(got.aggregate, own.log_prob(action))
    composite_mean_mutant_fails(tmp_path, "sb3", "SB3_MEAN_OF_HEADS")
