"""The five areas, in the one order used everywhere (SPECS numbering, README, interface, reports).

A leaf module: it imports nothing of the project, so reports, benchmarks and the pytest plugin can
all share it without pulling each other in. The areas are declared here once: their number,
name, title and the reference implementation's files (``impls/``, which ``nox -s mutation``
mutates); docs/architecture.md lists what else a new area needs.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Area:
    number: int
    name: str  #: attribute name on an implementation; also ``test_<name>.py``, ``impls/<name>.py``
    title: str
    #: the reference implementation's files of the area (what the mutation run mutates)
    impls: tuple[str, ...] = ()


ORDER: tuple[Area, ...] = (
    Area(1, "tanh_normal_mode", "TanhNormal mode", ("impls/tanh_normal_mode.py",)),
    # composite_entropy.py: the per-head entropy weights mixed into the reference ClipPPOLoss,
    # checked by the composite specs (entropy_loss), not by the PPO value-clipping ones
    Area(2, "composite_log_prob", "Composite distribution log-prob",
         ("impls/composite_log_prob.py", "impls/composite_entropy.py")),
    Area(3, "sac_done_states", "SAC done-state handling",
         ("impls/sac_done_states.py", "impls/sac_target_entropy.py",
          "impls/sac_priority_weights.py")),
    Area(4, "ppo_value_clipping", "PPO value clipping", ("impls/ppo_value_clipping.py",)),
    Area(5, "prioritized_replay", "Prioritized replay max priority",
         ("impls/segment_tree.py", "impls/prioritized_replay.py", "impls/replay_checkpoint.py",
          "impls/prioritized_buffers.py", "impls/fused_tree.py")),
)

#: attribute name on an implementation -> human title, in area order
AREAS: dict[str, str] = {a.name: a.title for a in ORDER}
NUMBER: dict[str, int] = {a.name: a.number for a in ORDER}
