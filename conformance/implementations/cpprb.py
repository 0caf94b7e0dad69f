"""cpprb (https://github.com/ymd-h/cpprb): a C++ replay buffer. Only §5 applies: it has no
distributions, losses or agents. See ``cpprb_areas/prioritized_replay.py``."""

from __future__ import annotations

from conformance.implementations.library import library_adapter

IMPLEMENTATION = library_adapter("cpprb", "cpprb", "cpprb")
