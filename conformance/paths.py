"""Where things are: the checkout, its reports and its work folders, named once.

A leaf module (it imports nothing of the project). Every module that needs the project root or a
work folder takes it from here, so a checkout can move, and ``TORCHRL_CONFORMANCE_WORK`` can put
the large work folders (upstream environments, builds) elsewhere.
"""

from __future__ import annotations

import os
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
REPORTS = ROOT / "reports"
#: large, disposable work folders (environments, builds): ``.nox`` unless told otherwise
WORK = Path(os.environ.get("TORCHRL_CONFORMANCE_WORK") or ROOT / ".nox")


def shown(path: Path) -> str:
    """``path`` as a user reads it: relative to the checkout when inside it."""
    try:
        return str(Path(path).resolve().relative_to(ROOT))
    except ValueError:
        return str(path)


def scrub(text: str) -> str:
    """``text`` without this checkout's location (``/home/x/checkout/conformance/a.py`` ->
    ``conformance/a.py``): messages that reach committed reports hold no local path."""
    return text.replace(f"{ROOT}/", "")
