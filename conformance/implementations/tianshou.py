"""Tianshou (https://github.com/thu-ml/tianshou), seen through the interface.

Areas: §5 ``PrioritizedReplayBuffer`` (``tianshou_areas/prioritized_replay.py``) and §1 the
deterministic action of its SAC policy (``tianshou_areas/tanh_normal_mode.py``). Tianshou has no
composite (dict-action) distribution: §2 does not apply. Its SAC (§3) and PPO (§4) are not
adapted yet (their modules say why).
"""

from __future__ import annotations

from conformance.implementations.library import library_adapter

IMPLEMENTATION = library_adapter("tianshou", "tianshou", "tianshou")
