"""Stable-Baselines3 (https://github.com/DLR-RM/stable-baselines3), seen through the interface.

Areas: §1 the squashed Gaussian's ``mode()`` (``sb3_areas/tanh_normal_mode.py``), §2 the
``MultiCategoricalDistribution`` of a MultiDiscrete action space (``sb3_areas/
composite_log_prob.py``), §3 ``SAC.train()`` (``sb3_areas/sac_done_states.py``) and §4 PPO's
value clipping through ``PPO.train()`` (``sb3_areas/ppo_value_clipping.py``). SB3 has no
prioritized replay: §5 does not apply.
"""

from __future__ import annotations

from conformance.implementations.library import library_adapter

#: why this adapter's areas declare the CPU only (``conformance.interface``: Devices)
HOST_ONLY = ('this adapter builds Stable-Baselines3\'s models with device="cpu" and '
             'feeds their numpy rollout/replay buffers on the host; SB3 on a GPU is '
             'not wired in')

IMPLEMENTATION = library_adapter("sb3", "stable-baselines3", "stable_baselines3")
