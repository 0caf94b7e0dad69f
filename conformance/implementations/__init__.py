"""Choosing implementations by name: ``reference``, ``torchrl`` or ``pkg.module:obj``."""

from __future__ import annotations

import importlib
import os
import sys
from dataclasses import dataclass

BUILTIN = {
    "reference": "conformance.implementations.reference:IMPLEMENTATION",
    "torchrl": "conformance.implementations.torchrl:IMPLEMENTATION",
    # the reference's replay with its tree walks in one C call each (issue #45; replay area only)
    "reference-fused": "conformance.implementations.reference_fused:IMPLEMENTATION",
    # other RL libraries (installed by `nox -s libraries`, one layer each)
    "sb3": "conformance.implementations.sb3:IMPLEMENTATION",
    "tianshou": "conformance.implementations.tianshou:IMPLEMENTATION",
    "cpprb": "conformance.implementations.cpprb:IMPLEMENTATION",
    "skrl": "conformance.implementations.skrl:IMPLEMENTATION",
}
DEFAULT = "reference,torchrl"
ENV_VAR = "TORCHRL_CONFORMANCE_IMPL"


class UnknownImplementation(ValueError):
    """A name on --impl / TORCHRL_CONFORMANCE_IMPL that names nothing usable (a usage error)."""


@dataclass(frozen=True)
class Selected:
    """One implementation chosen for this run, under the id used in test ids and reports."""

    id: str
    obj: object

    @property
    def version(self) -> str:
        return str(getattr(self.obj, "version", "unknown"))


def _import_target(spec: str) -> object:
    module_name, _, attr = spec.partition(":")
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        if exc.name is None or not module_name.startswith(exc.name):
            raise
        # `pytest` (unlike `python -m pytest`) does not put the working directory on sys.path;
        # a user naming a module of their checkout expects it to be found, as `python -m` would.
        if os.getcwd() in sys.path:
            raise
        sys.path.insert(0, os.getcwd())
        module = importlib.import_module(module_name)
    obj = module
    for part in attr.split(".") if attr else []:
        obj = getattr(obj, part)
    return obj


def _id_for(name: str) -> str:
    if name in BUILTIN:
        return name
    return name.rpartition(":")[2] or name.rpartition(".")[2]


def choices_text() -> str:
    return ", ".join(BUILTIN) + ", or pkg.module:object"


def raw_value(value: str | None) -> str:
    """The --impl value in force: the one given, else ``$ENV_VAR``, else ``DEFAULT``."""
    return value if value else os.environ.get(ENV_VAR) or DEFAULT


def names(value: str | None) -> list[str]:
    """The implementations an --impl value lists, as written (the one parser of the value: the
    plug-in, the console entry point and the benchmarks all read it here)."""
    return [n.strip() for n in raw_value(value).split(",") if n.strip()]


def resolve(value: str | None) -> list[Selected]:
    """Turn an --impl value into implementations; raise UnknownImplementation with one line."""
    raw = raw_value(value)
    names_ = names(value)
    if not names_:
        raise UnknownImplementation(f"--impl {raw!r} names no implementation; choose {choices_text()}")
    selected: list[Selected] = []
    for name in names_:
        if name in BUILTIN:
            target = BUILTIN[name]
        elif ":" in name:
            target = name
        else:
            raise UnknownImplementation(
                f"unknown implementation {name!r}; choose {choices_text()}"
            )
        try:
            obj = _import_target(target)
        except Exception as exc:  # noqa: BLE001 - any import failure of a user target is a usage error
            raise UnknownImplementation(
                f"implementation {name!r} could not be loaded ({type(exc).__name__}: "
                f"{str(exc).splitlines()[0] if str(exc) else ''}); choose {choices_text()}"
            ) from None
        ident = _id_for(name)
        if any(s.id == ident for s in selected):
            raise UnknownImplementation(f"implementation {name!r} is selected twice")
        selected.append(Selected(ident, obj))
    return selected
