"""The skrl adapter returns the value loss skrl's own PPO.update() computes and steps on."""

from __future__ import annotations

import numpy as np
import torch

from tests.libraries.conftest import need

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
    stepped = recorded[0][-2:]  # the value model's parameters: net.weight, net.bias
    net.zero_grad(set_to_none=True)
    (agent.cfg.value_loss_scale * mse).backward()
    for grad, param in zip(stepped, net.parameters(), strict=True):
        torch.testing.assert_close(grad, param.grad, rtol=1e-12, atol=1e-12)
    tracked = agent.tracking_data["Loss / Value loss"]
    assert float(agent.cfg.value_loss_scale * mse) == tracked[-1]
