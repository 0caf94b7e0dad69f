"""skrl (https://github.com/Toni-SM/skrl), seen through the interface.

Areas: §2 a ``MultiCategoricalMixin`` model (``skrl_areas/composite_log_prob.py``), §3 the SAC
agent's ``update()`` (``skrl_areas/sac_done_states.py``) and §4 PPO value clipping through the
PPO agent's ``update()`` (``skrl_areas/ppo_value_clipping.py``). skrl has no squashed-Gaussian
(TanhNormal) distribution and no prioritized replay memory: those areas do not apply.
"""

from __future__ import annotations

from conformance.implementations.library import library_adapter

#: why this adapter's areas declare the CPU only (``conformance.interface``: Devices)
HOST_ONLY = ("this adapter builds skrl's agents, models and memories with "
             'device="cpu"; skrl on a GPU is not wired in')

IMPLEMENTATION = library_adapter("skrl", "skrl", "skrl")
