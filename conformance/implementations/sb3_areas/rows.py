"""The do-nothing environment the SB3 areas build their models on, and their silent logger.

SB3 builds a model from an environment but reads only its spaces here: the specs feed the
rollout buffer themselves, so the environment never steps for real. Observations are row
numbers, hence a ``[0, observation_high]`` box.
"""

from __future__ import annotations

import numpy as np


def rows_env(observation_high: float, action_space=None, *, n_actions: int = 1):
    """An environment with a one-dimensional observation box and ``action_space`` (default: a
    ``[-1, 1]^n_actions`` box). gymnasium is imported here: only the SB3 layer has it."""
    import gymnasium as gym

    class Rows(gym.Env):
        def __init__(self):
            self.observation_space = gym.spaces.Box(0.0, float(observation_high), (1,),
                                                    np.float32)
            self.action_space = (action_space if action_space is not None
                                 else gym.spaces.Box(-1.0, 1.0, (n_actions,), np.float32))

        def reset(self, *, seed=None, options=None):
            return np.zeros(1, np.float32), {}

        def step(self, action):
            return np.zeros(1, np.float32), 0.0, True, False, {}

    return Rows()


def quiet_logger():
    """An SB3 logger that records values (``name_to_value``) and writes nothing."""
    from stable_baselines3.common.logger import Logger

    return Logger(folder=None, output_formats=[])
