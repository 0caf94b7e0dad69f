"""What an adapter may ask of a library's classes without calling them: accepted keywords, and a
quiet context for calls whose deprecation chatter is not what a spec is about.

A plain ``"x" in inspect.signature(cls.__init__).parameters`` is wrong for the classes adapters
meet: many TorchRL constructors end in ``**kwargs`` forwarded to a parent (and some silently
swallow unknown names), so the answer is in the first ``__init__`` along the MRO that names the
keyword or does not forward ``**kwargs``.
"""

from __future__ import annotations

import contextlib
import inspect
import warnings
from collections.abc import Iterator


def keyword_parameters(cls: type) -> set[str]:
    """The keyword names ``cls(...)`` accepts, following ``**kwargs`` up the MRO."""
    names: set[str] = set()
    for klass in cls.__mro__:
        init = klass.__dict__.get("__init__")
        if init is None:
            continue
        try:
            params = inspect.signature(init).parameters
        except (TypeError, ValueError):  # a C-implemented __init__: nothing to read
            break
        names |= {n for n, p in params.items() if p.kind not in (p.VAR_KEYWORD, p.VAR_POSITIONAL)}
        if not any(p.kind is p.VAR_KEYWORD for p in params.values()):
            break
    names.discard("self")
    return names


def accepts(cls: type, name: str) -> bool:
    """Whether ``cls(..., name=...)`` is a real parameter, not swallowed by ``**kwargs``."""
    return name in keyword_parameters(cls)


def first_accepted(cls: type, *names: str) -> str | None:
    """The first of ``names`` that ``cls`` accepts (for arguments renamed across releases)."""
    params = keyword_parameters(cls)
    return next((n for n in names if n in params), None)


@contextlib.contextmanager
def quiet() -> Iterator[None]:
    """Silence warnings inside a library call (deprecations of the very API being probed)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield
