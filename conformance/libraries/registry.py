"""The RL libraries the suite runs on, with the release each layer installs.

``name`` is the ``--impl`` name (``conformance/implementations/<name>.py``); ``requirement`` is
what pip installs into the library's layer; ``docs`` is where its design is documented.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Library:
    name: str
    dist: str
    version: str
    docs: str

    @property
    def requirement(self) -> str:
        return f"{self.dist}=={self.version}"


# The order of the report's columns (cheapest to install first).
LIBRARIES: tuple[Library, ...] = (
    Library("cpprb", "cpprb", "11.0.0", "https://ymd_h.gitlab.io/cpprb/"),
    Library("sb3", "stable-baselines3", "2.9.2", "https://stable-baselines3.readthedocs.io/"),
    Library("skrl", "skrl", "2.1.1", "https://skrl.readthedocs.io/"),
    Library("tianshou", "tianshou", "2.0.1", "https://tianshou.org/"),
)
BY_NAME = {lib.name: lib for lib in LIBRARIES}
