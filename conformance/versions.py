"""Installed distribution versions: the one lookup the header, results and adapters share."""

from __future__ import annotations

from importlib import metadata

NOT_INSTALLED = "not installed"
STACK = ("torch", "torchrl", "tensordict")


def installed_version(dist: str) -> str:
    """The installed version of ``dist``, or ``"not installed"``."""
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return NOT_INSTALLED


def stack_versions() -> dict[str, str]:
    return {dist: installed_version(dist) for dist in STACK}
