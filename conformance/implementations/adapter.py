"""Adapters whose areas load lazily, one module per area.

``LazyAdapter(name, version, package)`` resolves the attribute ``<area>`` by importing
``<package>.<area>`` and calling its ``make(adapter)``. A missing module means the adapter does
not provide that area ("not applicable"); ``make`` may raise ``Untestable``. Laziness keeps one
broken area (say, a C++ extension that does not load) from taking the others down with it.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable

from conformance.interface import AREAS, Untestable


class LazyAdapter:
    def __init__(
        self,
        name: str,
        version: str | Callable[[], str],
        package: str,
        *,
        precondition: Callable[[], None] | None = None,
    ):
        self.name = name
        self._version = version
        self._package = package
        self._precondition = precondition
        self._areas: dict[str, object] = {}

    @property
    def package(self) -> str:
        """Where the areas' code lives: a NotImplementedError raised from inside it declares a
        spec "not applicable" (``conformance.plugin.not_applicable``)."""
        return self._package

    @property
    def version(self) -> str:
        return self._version() if callable(self._version) else self._version

    def __getattr__(self, area: str):
        if area.startswith("_") or area not in AREAS:
            raise AttributeError(area)
        if area not in self._areas:
            if self._precondition is not None:
                self._precondition()  # raises Untestable
            try:
                module = importlib.import_module(f"{self._package}.{area}")
            except ModuleNotFoundError as exc:
                if exc.name != f"{self._package}.{area}":
                    raise Untestable(f"{type(exc).__name__}: {exc}") from exc
                self._areas[area] = None
            else:
                self._areas[area] = module.make(self)
        return self._areas[area]

    def __repr__(self) -> str:
        return f"<{self.name} {self.version}>"
