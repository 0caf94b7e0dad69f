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
    """The specs pass the protocol's positional parameters by position (any name will do) and
    its keyword-only parameters by name."""
    try:
        have = inspect.signature(got)
    except (TypeError, ValueError):  # a builtin or C callable: nothing to read, nothing to claim
        return []
    params = list(have.parameters.values())
    var_kw = any(p.kind is p.VAR_KEYWORD for p in params)
    var_pos = any(p.kind is p.VAR_POSITIONAL for p in params)
    wanted_params = list(inspect.signature(wanted).parameters.values())[1:]
    positional = [p for p in wanted_params if p.kind is not p.KEYWORD_ONLY]
    keywords = [p for p in wanted_params if p.kind is p.KEYWORD_ONLY]
    takes_position = [p for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    out = []
    if len(takes_position) < len(positional) and not var_pos:
        out.append(f"{name}() takes {len(takes_position)} positional argument(s), the suite "
                   f"passes {len(positional)} ({', '.join(p.name for p in positional)})")
    by_name = {p.name: p for p in params}
    for p in keywords:
        mine = by_name.get(p.name)
        if not ((mine is not None and mine.kind in (mine.KEYWORD_ONLY, mine.POSITIONAL_OR_KEYWORD))
                or var_kw):
            out.append(f"{name}() does not accept keyword {p.name!r}")
    passed_by_position = {p.name for p in takes_position[:len(positional)]}
    passed_by_name = {p.name for p in keywords}
    for p in params:
        if (p.kind not in _VAR and p.default is p.empty
                and p.name not in passed_by_position | passed_by_name):
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
