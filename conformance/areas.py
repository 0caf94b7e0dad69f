"""The five areas, in the one order used everywhere (SPECS numbering, README, interface, reports).

A leaf module: it imports nothing of the project, so reports, benchmarks and the pytest plugin can
all share it without pulling each other in.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Area:
    number: int
    name: str  #: attribute name on an implementation; also ``test_<name>.py``, ``impls/<name>.py``
    title: str


ORDER: tuple[Area, ...] = (
    Area(1, "tanh_normal_mode", "TanhNormal mode"),
    Area(2, "composite_log_prob", "Composite distribution log-prob"),
    Area(3, "sac_done_states", "SAC done-state handling"),
    Area(4, "ppo_value_clipping", "PPO value clipping"),
    Area(5, "prioritized_replay", "Prioritized replay max priority"),
)

#: attribute name on an implementation -> human title, in area order
AREAS: dict[str, str] = {a.name: a.title for a in ORDER}
NUMBER: dict[str, int] = {a.name: a.number for a in ORDER}
