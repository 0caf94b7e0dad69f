"""Implementations that leave the process's global state changed (issue #22, item 3).

Each is the reference's PPO area (other areas not provided), correct in what it returns, with
one leak after computing it: run beside the reference (``--impl reference,tests.leaks.state:X``)
they used to move the reference's verdicts; the suite must blame them and nothing else.
"""

from __future__ import annotations

import warnings

import numpy as np
import torch

from conformance.implementations.reference import IMPLEMENTATION as REFERENCE


class _LeakyPPO:
    def __init__(self, leak):
        self._leak = leak

    @property
    def critic_scale(self):
        return REFERENCE.ppo_value_clipping.critic_scale

    def critic_loss(self, *, value_net, observation, old_value, returns, clip_value,
                    clip_epsilon, critic_coeff):
        result = REFERENCE.ppo_value_clipping.critic_loss(
            value_net=value_net, observation=observation, old_value=old_value, returns=returns,
            clip_value=clip_value, clip_epsilon=clip_epsilon, critic_coeff=critic_coeff)
        self._leak()
        return result


class Leaky:
    version = "0"
    tanh_normal_mode = composite_log_prob = sac_done_states = prioritized_replay = None

    def __init__(self, name, leak):
        self.name = name
        self.ppo_value_clipping = _LeakyPPO(leak)


GRAD_OFF = Leaky("grad-off", lambda: torch.set_grad_enabled(False))
NUMPY_RAISES = Leaky("numpy-raises", lambda: np.seterr(all="raise"))
WARNINGS_ERROR = Leaky("warnings-error", lambda: warnings.simplefilter("error"))
DETERMINISTIC = Leaky("deterministic", lambda: torch.use_deterministic_algorithms(True))
