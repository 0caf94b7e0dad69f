"""§1 through Tianshou's ``SACPolicy`` in evaluation: its deterministic action.

``SACPolicy(actor, action_space=Box(low, high), deterministic_eval=True)`` builds
``Independent(Normal(loc, scale), 1)`` from the actor's output and, outside a training step,
acts with ``tanh(dist.mode)``; ``policy.map_action`` then maps [-1, 1] onto the action space's
bounds. The actor here returns the spec's ``(loc, scale)`` as given. Tianshou has no
``tanh_loc`` option (NotImplementedError). ``map_action`` works in numpy: it is called only for
bounds other than [-1, 1] (where it is the identity), and its result is cast back to the dtype
of ``loc``.
"""

from __future__ import annotations

import numpy as np
import torch

from conformance.implementations.introspect import quiet
from conformance.implementations.tianshou import HOST_ONLY


class _GivenParameters(torch.nn.Module):
    """The actor: returns the spec's (loc, scale) [N, D] whatever the observation."""

    def __init__(self, loc, scale):
        super().__init__()
        self.loc, self.scale = loc, scale

    def forward(self, obs, state=None, info=None):
        return (self.loc, self.scale), state


class _Made:
    def __init__(self, policy, shape, batch):
        self.policy, self.shape, self.batch = policy, shape, batch


class SACPolicyMode:
    devices = ("cpu",)  # conformance.interface: the devices this area runs on
    devices_why = HOST_ONLY

    def __init__(self, policy_cls, batch_cls, box_cls):
        self.policy_cls, self.batch_cls, self.box_cls = policy_cls, batch_cls, box_cls

    def make(self, loc, scale, *, low=-1.0, high=1.0, upscale=5.0, tanh_loc=False):
        if tanh_loc:
            raise NotImplementedError("Tianshou's SACPolicy has no tanh_loc option")
        loc2, scale2 = torch.broadcast_tensors(loc, scale)
        shape = loc2.shape  # a scale may broadcast loc to more rows
        # Independent(Normal, 1): one action of D dimensions per row
        loc2 = loc2.reshape(-1, shape[-1] if len(shape) >= 2 else 1)
        scale2 = scale2.reshape(loc2.shape)
        space = self.box_cls(np.full(loc2.shape[-1], low), np.full(loc2.shape[-1], high),
                             dtype=np.float64)
        with quiet():
            policy = self.policy_cls(actor=_GivenParameters(loc2, scale2), action_space=space,
                                     deterministic_eval=True, action_scaling=True)
        batch = self.batch_cls(obs=np.zeros((loc2.shape[0], 1)), info={})
        return _Made(policy, shape, batch)

    def mode(self, dist: _Made) -> torch.Tensor:
        made = dist
        with quiet(), torch.no_grad():
            act = made.policy(made.batch).act
            low, high = made.policy.action_space.low, made.policy.action_space.high
            if not (np.all(low == -1.0) and np.all(high == 1.0)):
                dtype = act.dtype
                act = torch.as_tensor(np.asarray(made.policy.map_action(act), dtype=np.float64)).to(dtype)
        return act.reshape(made.shape)


def make(adapter):
    from gymnasium.spaces import Box
    from tianshou.algorithm.modelfree.sac import SACPolicy
    from tianshou.data import Batch

    return SACPolicyMode(SACPolicy, Batch, Box)
