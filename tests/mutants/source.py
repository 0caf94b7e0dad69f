"""Mutants of the reference made the way a mutation tool makes them: one edit of one line of
``impls/``, the rest of the module as it is.

``mutated_module`` executes a module's source with one exact substring replaced into a fresh
module object (``impls`` itself is not touched, so the reference and any number of mutants
share one process). Modules that import the mutated one get it through ``overrides``."""

from __future__ import annotations

import importlib.util
import sys
import types
from pathlib import Path


def source_of(module_name: str) -> tuple[str, str]:
    origin = importlib.util.find_spec(module_name).origin
    return origin, Path(origin).read_text()


def mutated_module(module_name: str, old: str = "", new: str = "", *, tag: str = "mutant",
                   **overrides) -> types.ModuleType:
    """``module_name`` with its only occurrence of ``old`` replaced by ``new`` (no edit when
    ``old`` is empty), then the names in ``overrides`` rebound in its namespace."""
    origin, source = source_of(module_name)
    if old:
        found = source.count(old)
        if found != 1:
            raise AssertionError(f"{module_name}: the mutated text occurs {found} times, "
                                 f"not once: {old!r}")
        source = source.replace(old, new)
    name = f"{module_name}__{tag}"
    module = types.ModuleType(name)
    module.__file__ = origin
    sys.modules[name] = module
    exec(compile(source, origin, "exec"), module.__dict__)
    module.__dict__.update(overrides)
    return module
