"""Tianshou (https://github.com/thu-ml/tianshou), seen through the interface.

Areas: §5 ``PrioritizedReplayBuffer`` (``tianshou_areas/prioritized_replay.py``), §1 the
deterministic action of its SAC policy (``tianshou_areas/tanh_normal_mode.py``), §4 PPO's
value clipping (``tianshou_areas/ppo_value_clipping.py``) and §3 one ``update()`` of its ``SAC`` /
``DiscreteSAC`` (``tianshou_areas/sac_done_states.py``). Tianshou has no composite (dict-action)
distribution: §2 does not apply.
"""

from __future__ import annotations

from conformance.implementations.library import library_adapter

#: why this adapter's areas declare the CPU only (``conformance.interface``: Devices)
HOST_ONLY = ("this adapter feeds Tianshou's policy numpy batches on the host; Tianshou "
             'on a GPU is not wired in')

IMPLEMENTATION = library_adapter("tianshou", "tianshou", "tianshou")
