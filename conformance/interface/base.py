"""What every implementation is, and how an area says it cannot run here."""

from __future__ import annotations

from typing import Protocol, runtime_checkable


class Untestable(Exception):
    """The implementation cannot be exercised on this machine (the reason is the message)."""


@runtime_checkable
class Implementation(Protocol):
    name: str
    version: str
