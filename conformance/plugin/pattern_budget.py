"""Expectation patterns matched under a budget: a pattern that could backtrack for minutes is
refused when its file is read (one line), never discovered while a spec runs.

Python's ``re`` backtracks: ``(.+)+Z`` against a long message does not finish. The match runs
after the spec, outside the watchdog, so a caller's expectations file could hang a gate. A
pattern is accepted only when its cost is bounded: at most :data:`MAX_LENGTH` characters, no
backreference, no repetition nested inside a repetition or over an alternation (the
exponential cases), and at most :data:`MAX_UNBOUNDED` unbounded repetitions (``*``, ``+``,
``{n,}``), each a polynomial factor of the subject's length, which is cut to
:data:`MAX_SUBJECT` characters. The committed expectations need none of this.
"""

from __future__ import annotations

import re

try:  # Python 3.11+
    from re import _constants as _c
    from re import _parser as _p
except ImportError:  # pragma: no cover - older Pythons
    import sre_constants as _c  # type: ignore[no-redef]
    import sre_parse as _p  # type: ignore[no-redef]

MAX_LENGTH = 300
MAX_UNBOUNDED = 2
MAX_SUBJECT = 2000  #: characters of "<Exception>: <message>" a pattern is searched in
_REPEATS = (_c.MAX_REPEAT, _c.MIN_REPEAT, getattr(_c, "POSSESSIVE_REPEAT", _c.MAX_REPEAT))


class PatternTooCostly(ValueError):
    """Why a pattern's match is not bounded (one line)."""


def _walk(items, inside_repeat: bool, counts: dict) -> None:
    for op, arg in items:
        if op in (_c.GROUPREF, getattr(_c, "GROUPREF_EXISTS", None)):
            raise PatternTooCostly("a backreference")
        if op in _REPEATS:
            low, high, sub = arg
            if high > 1 and inside_repeat:
                raise PatternTooCostly("a repetition inside a repetition, such as (a+)+")
            if high == _c.MAXREPEAT:
                counts["unbounded"] += 1
            _walk(sub, inside_repeat or high > 1, counts)
        elif op == _c.BRANCH:
            if inside_repeat:
                raise PatternTooCostly("an alternation inside a repetition, such as (a|ab)*")
            for branch in arg[1]:
                _walk(branch, inside_repeat, counts)
        elif op == _c.SUBPATTERN:
            _walk(arg[-1], inside_repeat, counts)
        elif op in (_c.ASSERT, _c.ASSERT_NOT):
            _walk(arg[1], inside_repeat, counts)
        elif op == getattr(_c, "ATOMIC_GROUP", None):
            _walk(arg, inside_repeat, counts)


def check(pattern: str) -> None:
    """Raise PatternTooCostly unless ``pattern`` is within the budget (re.error if invalid)."""
    if len(pattern) > MAX_LENGTH:
        raise PatternTooCostly(f"longer than {MAX_LENGTH} characters")
    counts = {"unbounded": 0}
    _walk(_p.parse(pattern), False, counts)
    if counts["unbounded"] > MAX_UNBOUNDED:
        raise PatternTooCostly(f"{counts['unbounded']} unbounded repetitions (at most "
                               f"{MAX_UNBOUNDED})")


def search(pattern: str, text: str):
    """``re.search`` of a checked pattern in the first MAX_SUBJECT characters of ``text``."""
    return re.search(pattern, text[:MAX_SUBJECT])
