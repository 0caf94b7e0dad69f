"""Skip a library's self-tests, visibly, where the library is not installed."""

from __future__ import annotations

import pytest


def need(module: str):
    """``pytest.importorskip`` with a reason that says where the test does run."""
    return pytest.importorskip(
        module, reason=f"{module} is not installed here; `nox -s libraries` runs this test in "
                       "the library's layer")
