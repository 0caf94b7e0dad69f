"""The family oracles against independent computations: torch.distributions, float64 draws
whose pre-tanh value is known, and hand values."""

import math

import numpy as np
import torch

from conformance.interface import CompositeHead
from conformance.oracles import composite_log_prob as composite
from conformance.oracles import tanh_normal_mode as tanh


def test_score_bounds_contain_the_score_of_known_draws_and_exclude_the_rounded_one():
    g = torch.Generator().manual_seed(0)
    mu = torch.tensor([[0.3, -2.0, 12.0]], dtype=torch.float64)
    s = torch.tensor([[0.5, 0.1, 0.05]], dtype=torch.float64)
    lower, upper = tanh.score_bounds(mu.numpy(), s.numpy(), low=0.0, high=4.0, z_max=6.0)
    for _ in range(200):
        x = mu + s * torch.randn(mu.shape, generator=g, dtype=torch.float64).clamp(-6, 6)
        base = torch.distributions.Normal(mu, s).log_prob(x)
        # log|dy/dx| of y = 2 + 2 tanh(x), computed independently of the oracle's formula
        log_det = math.log(2.0) + torch.log1p(-torch.tanh(x) ** 2)
        exact = (base - log_det).sum(-1)
        if torch.isfinite(exact).all():
            assert lower[0] - 1e-9 <= float(exact) <= upper[0] + 1e-9
    # the rounded action's pre-image (float32 tanh(12) == 1, atanh of 1 - 2^-24 ~ 8.66)
    x_rounded = torch.tensor([[0.3, -2.0, math.atanh(1 - 2**-24)]], dtype=torch.float64)
    rounded = (torch.distributions.Normal(mu, s).log_prob(x_rounded)
               - math.log(2.0) - torch.log1p(-torch.tanh(x_rounded) ** 2)).sum(-1)
    assert float(rounded) < lower[0] - 1000


def test_head_entropies_match_torch_distributions():
    g = torch.Generator().manual_seed(1)
    logits = torch.randn(4, 3, 6, generator=g)
    logits[..., 0] = -math.inf  # a masked category: 0 log 0 = 0
    loc, scale = torch.randn(4, 3, 2, generator=g), 0.3 + torch.rand(4, 3, 2, generator=g)
    cat = composite.head_entropy("categorical", {"logits": logits})
    want = torch.distributions.Categorical(logits=logits.double()).entropy()
    assert torch.allclose(cat, want, rtol=1e-12)
    normal = composite.head_entropy("normal", {"loc": loc, "scale": scale})
    assert torch.allclose(normal, torch.distributions.Normal(loc.double(), scale.double())
                          .entropy().sum(-1), rtol=1e-12)
    heads = {"a": CompositeHead("categorical", {"logits": logits}),
             "b": CompositeHead("normal", {"loc": loc, "scale": scale})}
    assert math.isclose(composite.entropy_loss(heads, {"a": 0.1, "b": 0.3}),
                        -float((0.1 * cat + 0.3 * normal).mean()), rel_tol=1e-12)
    assert composite.entropy_loss_broadcast(heads, 0.1) != composite.entropy_loss(heads, 0.1)


def test_clipped_objective_by_hand():
    # r = 0.5, 1.0, 1.5 with A = 1, -1, 2 and eps 0.2: min(rA, clip(r)A) = 0.5, -1.0, 2.4
    got = composite.clipped_objective([0.5, 1.0, 1.5], [[1.0], [-1.0], [2.0]], 0.2)
    assert np.isclose(got, -(0.5 - 1.0 + 2.4) / 3)
