"""Adapters for RL libraries other than TorchRL: one ``LazyAdapter`` per library, shared wiring.

Each library adapter (``sb3.py``, ``tianshou.py``, ``cpprb.py``, ``skrl.py``) names the PyPI
distribution and the import that must work; its areas live in ``<name>_areas/<area>.py``. A
library that is not installed or does not import here raises ``Untestable`` for every area, so
the suite reports it NOT TESTED with the reason (``nox -s libraries`` installs each library in its own layer over the
shared stack environment, so a plain ``nox -s conformance`` environment usually lacks them).
"""

from __future__ import annotations

import functools
import importlib
import os

from conformance.implementations.adapter import LazyAdapter
from conformance.interface import Untestable
from conformance.versions import NOT_INSTALLED, installed_version


@functools.cache
def import_problem(module: str, dist: str) -> str | None:
    """Why ``import module`` fails here, or None when it works."""
    if installed_version(dist) == NOT_INSTALLED:
        return (f"{dist} is not installed in this environment (`nox -s libraries` installs it "
                "in a layer of its own)")
    try:
        importlib.import_module(module)
    except Exception as exc:  # noqa: BLE001 - any import failure makes the library untestable
        first = str(exc).splitlines()[0] if str(exc) else ""
        return f"import {module} failed: {type(exc).__name__}: {first}"
    return None


def version_tuple(dist: str) -> tuple[int, ...]:
    """The installed release of ``dist`` as a tuple of ints (for feature switches)."""
    parts = []
    for p in installed_version(dist).split("+")[0].split("."):
        if not p.isdigit():
            break
        parts.append(int(p))
    return tuple(parts)


#: Set by `nox -s libraries` (``TORCHRL_CONFORMANCE_UNTESTABLE_SB3=<reason>``) for a library
#: whose layer could not be built: its column then says why instead of being left out.
FORCE_UNTESTABLE = "TORCHRL_CONFORMANCE_UNTESTABLE_{}"


def library_adapter(name: str, dist: str, module: str) -> LazyAdapter:
    def require_import() -> None:
        forced = os.environ.get(FORCE_UNTESTABLE.format(name.upper()))
        problem = forced or import_problem(module, dist)
        if problem:
            raise Untestable(problem)

    return LazyAdapter(name, lambda: installed_version(dist),
                       f"conformance.implementations.{name}_areas", precondition=require_import)
