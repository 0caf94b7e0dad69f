"""skrl (https://github.com/Toni-SM/skrl), seen through the interface.

Areas: §4 PPO value clipping through the PPO agent's ``update()`` (``skrl_areas/
ppo_value_clipping.py``). skrl has no squashed-Gaussian (TanhNormal) distribution and no
prioritized replay memory: those areas do not apply. Its SAC agent (§3) and its
MultiCategorical model (§2) are not adapted yet (their modules say why).
"""

from __future__ import annotations

from conformance.implementations.library import library_adapter

IMPLEMENTATION = library_adapter("skrl", "skrl", "skrl")
