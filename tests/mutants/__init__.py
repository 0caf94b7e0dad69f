"""Deliberately broken implementations (historical bugs), plugged into the suite with
``--impl tests.mutants.<module>:<NAME>`` exactly as a user plugs in their own code."""

from types import SimpleNamespace


def implementation(name: str, **areas) -> SimpleNamespace:
    """A one-area implementation as a user would write it: a name, a version, the area."""
    return SimpleNamespace(name=name, version="mutant", **areas)
