"""The tested stack's pins (torch, torchrl, tensordict), read from the one place they are written:
the ``stack`` extra of ``pyproject.toml``. Everything else that needs them asks here (a self-test
checks the one file that cannot, ``asv.conf.json``)."""

from __future__ import annotations

import functools
import re

from conformance.paths import ROOT


@functools.cache
def pins() -> dict[str, str]:
    """{'torch': '2.14.1', 'torchrl': '0.14.1', 'tensordict': '0.14.3'}."""
    text = (ROOT / "pyproject.toml").read_text()
    try:
        import tomllib
    except ImportError:  # Python 3.10: the one line is simple enough to read directly
        line = re.search(r"^stack\s*=\s*\[(.*)\]", text, re.MULTILINE).group(1)
        requirements = re.findall(r'"([^"]+)"', line)
    else:
        requirements = tomllib.loads(text)["project"]["optional-dependencies"]["stack"]
    return dict(r.split("==", 1) for r in requirements)
