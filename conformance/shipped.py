"""Which shipped expectations file describes an installed implementation: the detection that
``pytest --pyargs conformance`` and ``torchrl-conformance`` share with the upstream runner.

A release has its own file (``torchrl-0.14.1.txt``; a local version such as ``0.14.1+cu128`` is
the same release); a nightly build (``torchrl-nightly``, version ``2026.10.27``) is described by
``torchrl_nightly.txt``, as ``nox -s upstream -- nightly`` does. Anything else has no shipped
file: an installed run says so in one line (``conformance.pytest_plugin``) instead of counting
every known bug as a regression.

A base module: it imports only ``conformance.paths`` (the plug-in reads it, never the reverse).
"""

from __future__ import annotations

import re
from pathlib import Path

from conformance.paths import EXPECTATIONS as EXPECTATIONS_DIR

NIGHTLY_VERSION = re.compile(r"^\d{4}\.\d{1,2}\.\d{1,2}")


def auto_file(impl_id: str, version: str) -> Path | None:
    """The release's own file; it includes the shared entries that cover its version."""
    path = EXPECTATIONS_DIR / f"{impl_id}-{version}.txt"
    return path if path.is_file() else None


def shipped_file(impl_id: str, version: str) -> Path | None:
    """The shipped expectations of ``impl_id`` at ``version``, or None."""
    found = auto_file(impl_id, version) or auto_file(impl_id, version.split("+", 1)[0])
    if found is None and NIGHTLY_VERSION.match(version):
        nightly = EXPECTATIONS_DIR / f"{impl_id}_nightly.txt"
        found = nightly if nightly.is_file() else None
    return found


def shipped_versions(impl_id: str) -> list[str]:
    """The versions of ``impl_id`` that have a file of their own (for the one-line error)."""
    prefix = f"{impl_id}-"
    return sorted((p.stem.removeprefix(prefix) for p in EXPECTATIONS_DIR.glob(f"{prefix}*.txt")),
                  key=lambda v: [int(x) if x.isdigit() else 0 for x in re.split(r"[.]", v)])
