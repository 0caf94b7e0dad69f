"""When a ``NotImplementedError`` means "not applicable: <why>", and when it stays a failure.

An adapter cannot express every spec for every library: SB3's value clipping has no "use the
policy's threshold" value, cpprb has no upper bound on the default priority, no library but
TorchRL has ``skip_done_states``. The adapter says so by raising ``NotImplementedError("<why>")``
from its own code; the test is then reported **not applicable: <why>**, never passed.

The rule is narrow on purpose, so that it cannot hide a real failure:

- the exception is a ``NotImplementedError`` (or a subclass) with a non-empty message (the why);
- its *raising frame* (the innermost frame of its traceback, where the ``raise`` ran) is in the
  implementation's own code: the package of a built-in adapter's areas (``LazyAdapter.package``,
  e.g. ``conformance.implementations.sb3_areas``) or the module that defines the class of the
  area object the test used (``type(area).__module__``, or the module itself when the area is a
  module), and their submodules;
- it is never in the suite itself: a frame in a spec, an oracle, the interface or the plugin
  (any ``conformance`` module outside ``conformance.implementations``) does not count, whatever
  the implementation claims as its code.

So a ``NotImplementedError`` raised inside the library under test (SB3, torch, torchrl...), by a
network or distribution the spec hands in, by a helper module of a plug-in other than the area's
own module, or re-raised unchanged by an adapter from any of those (``raise`` keeps the original
innermost frame) stays what it was: a failure. A test that raises after some of its checks have
passed is not applicable as a whole (the checks it could not reach are not claimed).
"""

from __future__ import annotations

import types

from conformance.areas import AREAS

#: the part of the suite that may hold implementation code (adapters); the rest never counts
ADAPTERS = "conformance.implementations"
SUITE = "conformance"


def _inside(module: str, home: str) -> bool:
    return module == home or module.startswith(home + ".")


def home_modules(impl_obj: object, area_objs) -> set[str]:
    """The modules whose ``NotImplementedError`` counts as the implementation's own."""
    homes: set[str] = set()
    package = getattr(impl_obj, "package", None)
    if isinstance(package, str) and package:
        homes.add(package)
    for area in area_objs:
        if area is None:
            continue
        module = area.__name__ if isinstance(area, types.ModuleType) else type(area).__module__
        if isinstance(module, str) and module and module != "builtins":
            homes.add(module)
    # a home that covers the suite's own specs, oracles or plugin would let them declare
    # "not applicable": refuse it (adapters live under conformance.implementations)
    return {h for h in homes if not (_inside(SUITE, h) or (
        _inside(h, SUITE) and not _inside(h, ADAPTERS)))}


def raising_module(exc: BaseException) -> str | None:
    """The module of the frame that raised ``exc`` (the innermost frame of its traceback)."""
    tb = exc.__traceback__
    if tb is None:
        return None
    while tb.tb_next is not None:
        tb = tb.tb_next
    return tb.tb_frame.f_globals.get("__name__")


def reason(exc: BaseException, homes: set[str]) -> str | None:
    """The "why" of a not-applicable declaration, or None when ``exc`` is not one."""
    if not isinstance(exc, NotImplementedError):
        return None
    why = str(exc).strip()
    module = raising_module(exc)
    if not why or module is None:
        return None
    if _inside(module, SUITE) and not _inside(module, ADAPTERS):
        return None
    if not any(_inside(module, home) for home in homes):
        return None
    return why


def for_item(item, exc: BaseException) -> str | None:
    """``reason`` for the implementation and area objects a collected test item was given."""
    callspec = getattr(item, "callspec", None)
    selected = callspec.params.get("impl") if callspec is not None else None
    if selected is None:
        return None
    funcargs = getattr(item, "funcargs", {}) or {}
    areas = [funcargs[a] for a in AREAS if a in funcargs]
    return reason(exc, home_modules(getattr(selected, "obj", None), areas))
