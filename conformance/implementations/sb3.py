"""Stable-Baselines3 (https://github.com/DLR-RM/stable-baselines3), seen through the interface.

Areas: §1 the squashed Gaussian's ``mode()`` (``sb3_areas/tanh_normal_mode.py``) and §4 PPO's
value clipping through ``PPO.train()`` (``sb3_areas/ppo_value_clipping.py``). SB3 has no
composite (dict-action) distribution and no prioritized replay: those areas do not apply.
§3 (SAC) exists in SB3 but is not adapted yet (``sb3_areas/sac_done_states.py`` says why).
"""

from __future__ import annotations

from conformance.implementations.library import library_adapter

IMPLEMENTATION = library_adapter("sb3", "stable-baselines3", "stable_baselines3")
