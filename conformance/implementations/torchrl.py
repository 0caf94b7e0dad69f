"""The installed TorchRL (any release from 0.6.0 to 0.14.1), seen through the interface.

Per-area adapters live in ``torchrl_areas/<area>.py``; they absorb API differences between
releases (argument renames, log-prob key names, flags that do not exist yet). A release that
lacks a feature fails the spec that needs it, with the reason in the message; a TorchRL that
does not import here makes every spec "cannot be tested here".
"""

from __future__ import annotations

import functools
import os

from conformance.implementations.adapter import LazyAdapter
from conformance.interface import Untestable
from conformance.versions import module_version


@functools.cache
def import_problem() -> str | None:
    """Why ``import torchrl, tensordict`` fails here, or None when it works."""
    try:
        import tensordict  # noqa: F401
        import torchrl  # noqa: F401
    except Exception as exc:  # noqa: BLE001 - any failure makes the release untestable here
        first = str(exc).splitlines()[0] if str(exc) else ""
        return f"import torchrl failed: {type(exc).__name__}: {first}"
    return None


VERSION_LABEL = "TORCHRL_CONFORMANCE_VERSION_LABEL"


def _require_import() -> None:
    problem = import_problem()
    if problem:
        raise Untestable(
            f"{problem} (torchrl {module_version('torchrl')}, tensordict "
            f"{module_version('tensordict')}, torch {module_version('torch')})"
        )


IMPLEMENTATION = LazyAdapter(
    "torchrl",
    lambda: os.environ.get(VERSION_LABEL) or module_version("torchrl"),
    "conformance.implementations.torchrl_areas",
    precondition=_require_import,
)
