"""Does an object provide a protocol of ``conformance.interface``? Named, one-line answers.

Checked the way array-api-tests checks signatures: every method present and callable, every
parameter the suite passes accepted under its name (or by ``**kwargs``), no required parameter
the suite never passes, every declared attribute present. A plug-in missing one method then gets
one failure naming the area and the method, instead of an AttributeError deep inside each spec.
"""

from __future__ import annotations

import inspect
import typing

_VAR = (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD)


def _members(protocol: type) -> tuple[list[str], dict[str, typing.Callable]]:
    attributes = [n for n in getattr(protocol, "__annotations__", {}) if not n.startswith("_")]
    methods = {n: f for n, f in vars(protocol).items()
               if not n.startswith("_") and inspect.isfunction(f)}
    return attributes, methods


def _call_form(name: str, fn) -> str:
    params = list(inspect.signature(fn).parameters.values())[1:]  # without self
    return f"{name}({', '.join(str(p).split(':')[0].split('=')[0].strip() for p in params)})"


def _signature_problems(name: str, wanted, got) -> list[str]:
    try:
        have = inspect.signature(got)
    except (TypeError, ValueError):  # a builtin or C callable: nothing to read, nothing to claim
        return []
    params = have.parameters
    var_kw = any(p.kind is p.VAR_KEYWORD for p in params.values())
    var_pos = any(p.kind is p.VAR_POSITIONAL for p in params.values())
    wanted_params = list(inspect.signature(wanted).parameters.values())[1:]
    out = []
    for p in wanted_params:
        mine = params.get(p.name)
        if p.kind is p.KEYWORD_ONLY:
            ok = (mine is not None and mine.kind in (mine.KEYWORD_ONLY, mine.POSITIONAL_OR_KEYWORD)) or var_kw
            if not ok:
                out.append(f"{name}() does not accept keyword {p.name!r}")
        elif mine is None and not (var_pos or var_kw):
            out.append(f"{name}() does not accept argument {p.name!r}")
    names = {p.name for p in wanted_params}
    for p in params.values():
        if p.kind not in _VAR and p.default is p.empty and p.name not in names:
            out.append(f"{name}() requires {p.name!r}, which the suite never passes")
    return out


def problems(obj: object, protocol: type) -> list[str]:
    """What ``obj`` lacks to satisfy ``protocol`` (empty when it conforms)."""
    attributes, methods = _members(protocol)
    out = []
    for name in attributes:
        if not hasattr(obj, name):
            out.append(f"attribute {name!r} is missing")
    for name, wanted in methods.items():
        got = getattr(obj, name, None)
        if got is None:
            out.append(f"method {name}() is missing")
        elif not callable(got):
            out.append(f"{name} is not callable (a {type(got).__name__})")
        else:
            out += _signature_problems(name, wanted, got)
    return out


def describe(protocol: type) -> str:
    """The protocol's calls in one line, for failure messages."""
    attributes, methods = _members(protocol)
    return "; ".join([*(f".{a}" for a in attributes),
                      *(_call_form(n, f) for n, f in methods.items())])
