"""The skrl adapters return what skrl's own code computes and steps on: PPO.update()'s value
loss, SAC.update()'s losses, MultiCategoricalMixin's joint log-prob; mutants fail."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from tests.libraries.conftest import (
    assert_sgd_step_is_minus_the_gradient,
    composite_mean_mutant_fails,
    need,
    sac_parameters,
    sac_truncation_mutant_fails,
)

#: run in the library's layer (python -m conformance.libraries.selftests); the mutant
#: tests among them run the suite in a subprocess
pytestmark = pytest.mark.slow

need("skrl")

from conformance.implementations.skrl import IMPLEMENTATION  # noqa: E402


def test_the_returned_loss_is_the_one_skrls_optimiser_receives_gradients_from():
    """The gradients skrl hands its optimiser at step() (recorded, not applied) are those of the
    returned loss; its value equals what skrl tracks as 'Loss / Value loss'."""
    area = IMPLEMENTATION.ppo_value_clipping
    rng = np.random.default_rng(3)
    old = torch.as_tensor(rng.normal(0.0, 2.0, 16), dtype=torch.float64).reshape(-1, 1)
    v = old + torch.as_tensor(rng.normal(0.0, 1.0, 16), dtype=torch.float64).reshape(-1, 1)
    R = old + torch.as_tensor(rng.normal(0.0, 3.0, 16), dtype=torch.float64).reshape(-1, 1)
    net = torch.nn.Linear(1, 1, dtype=torch.float64)
    with torch.no_grad():
        net.weight.fill_(1.0)
        net.bias.fill_(0.0)
    agent, memory = area.build(net, v, 0.25, 0.2, 0.5)
    area.fill(agent, memory, old, R)
    mse = area.update_once(agent)
    recorded = agent.optimizer.steps
    assert len(recorded) == 1
    stepped = [recorded[0][f"value.net.{n}"] for n in ("weight", "bias")]
    net.zero_grad(set_to_none=True)
    (agent.cfg.value_loss_scale * mse).backward()
    for grad, param in zip(stepped, net.parameters(), strict=True):
        torch.testing.assert_close(grad, param.grad, rtol=1e-12, atol=1e-12)
    tracked = agent.tracking_data["Loss / Value loss"]
    assert float(agent.cfg.value_loss_scale * mse) == tracked[-1]


# ------------------------------------------------------------------------------------ §3 SAC


def test_the_sac_losses_are_what_skrls_optimisers_step_on():
    """With plain SGD (lr 1) as the critic optimiser, one skrl update() (its own scaler) moves
    each critic by minus the gradient of skrl's critic loss, half the spec's (the adapter reports
    it times 2); with SGD as the policy optimiser (the critics' a recorder, so they stay put),
    the policy moves by minus the policy loss's gradient."""
    from conformance import test_sac_done_states as spec
    from conformance.implementations.capture import RecordingOptimizer
    from conformance.implementations.introspect import quiet

    area = IMPLEMENTATION.sac_done_states
    nets, _ = spec.networks("continuous")
    data = spec.batch("continuous", "single", "truncated")
    args = (spec.ALPHA, spec.GAMMA, spec.TARGET_ENTROPY["continuous"])
    out = area.loss(networks=nets, batch=data, skip_done_states=False, alpha=args[0],
                    gamma=args[1], target_entropy=args[2])
    for stepped in ("critic", "actor"):
        agent, actor, critics = area.build(nets, data, *args)
        named = sac_parameters(actor, critics)
        for which in ("actor", "critic"):
            params = [p for _, p in named[which]]
            optimizer = (torch.optim.SGD(params, lr=1.0) if which == stepped
                         else RecordingOptimizer(named[which]))
            setattr(agent, "policy_optimizer" if which == "actor" else "critic_optimizer",
                    optimizer)
        before = {n: p.detach().clone() for n, p in named[stepped]}
        with quiet():
            agent.update(timestep=0, timesteps=1)
        assert_sgd_step_is_minus_the_gradient(named[stepped], before, out, critic_scale=2)


def test_a_skrl_sac_mutant_fails_the_truncation_spec(tmp_path):
    """skrl's SAC storing terminated | truncated fails the spec the real one passes."""
    sac_truncation_mutant_fails(tmp_path, "skrl", "SKRL_TRUNCATION_AS_TERMINATION")


# ----------------------------------------------------------------------- §2 multi-categorical


def test_the_joint_log_prob_is_skrls_and_a_mutant_fails(tmp_path):
    """The aggregate is what MultiCategoricalMixin.act returns as outputs['log_prob'] (sum
    reduction); the same model with reduction='mean' fails the specs naming the aggregate."""
    composite_mean_mutant_fails(tmp_path, "skrl", "SKRL_MEAN_OF_HEADS")
