"""§1 through SB3's ``SquashedDiagGaussianDistribution``, the distribution of SAC's actor.

``SquashedDiagGaussianDistribution(d).proba_distribution(mean_actions, log_std).mode()`` is what
``predict(deterministic=True)`` uses. It lives on [-1, 1]; a policy maps that onto the action
space's bounds with ``BasePolicy.unscale_action`` (``low + 0.5 (a + 1) (high - low)``), which
this adapter calls for bounds other than [-1, 1] (its ``self`` only needs ``action_space``).
SB3 has no ``tanh_loc`` / ``upscale`` option: asking for it raises NotImplementedError.
"""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import torch

from conformance.implementations.introspect import quiet


class _Squashed:
    def __init__(self, dist, low, high):
        self.dist, self.low, self.high = dist, low, high


class SquashedGaussianMode:
    devices = ("cpu",)  # conformance.interface: the devices this area runs on
    devices_why = "this adapter computes SB3's squashed-Gaussian mode through numpy on the host"

    def __init__(self, dist_cls, unscale_action, box_cls):
        self.dist_cls, self.unscale_action, self.box_cls = dist_cls, unscale_action, box_cls

    def make(self, loc, scale, *, low=-1.0, high=1.0, upscale=5.0, tanh_loc=False):
        if tanh_loc:
            raise NotImplementedError(
                "SB3's SquashedDiagGaussianDistribution has no tanh_loc option (the mean is used "
                "as given)")
        dim = loc.shape[-1] if loc.dim() else 1
        with quiet():
            dist = self.dist_cls(dim).proba_distribution(loc, torch.log(scale))
        return _Squashed(dist, low, high)

    def mode(self, dist: _Squashed) -> torch.Tensor:
        squashed = dist
        with quiet():
            action = squashed.dist.mode()
        shape = action.shape[-1:] if action.dim() else (1,)
        # numbers or per-dimension tensors, as the interface gives them
        low, high = (np.broadcast_to(torch.as_tensor(b, dtype=torch.float64).cpu().numpy(), shape)
                     for b in (squashed.low, squashed.high))
        if (low == -1.0).all() and (high == 1.0).all():
            return action
        space = self.box_cls(low.copy(), high.copy(), dtype=np.float64)
        out = self.unscale_action(SimpleNamespace(action_space=space),
                                  action.detach().cpu().numpy())
        return torch.as_tensor(np.asarray(out), dtype=action.dtype).reshape(action.shape)


def make(adapter):
    from gymnasium.spaces import Box
    from stable_baselines3.common.distributions import SquashedDiagGaussianDistribution
    from stable_baselines3.common.policies import BasePolicy

    return SquashedGaussianMode(SquashedDiagGaussianDistribution, BasePolicy.unscale_action, Box)
