"""Which pytest arguments a caller may pass through the runner, the gate, the console script and
the embed: a short ALLOW-list; everything else is a one-line usage error naming the option.

The entry points that give a verdict decide what is tested (implementation, results file,
expectations, device, configuration, plug-ins): a deny-list of those never ended (``--reruns``,
``--log-file=README.md``, ``--debug=FILE``, ``--co`` read as an abbreviation...). Only these
pass through, in exactly these spellings:

- selection (a narrowed run is PARTIAL, never a verdict): ``-k EXPR``, ``-m EXPR``, paths and
  node ids in the suite (``conformance/...``), ``-x``/``--exitfirst``, ``--maxfail N``;
- verbosity: ``-v``/``-q`` (and clusters of them: ``-vv``), ``--verbose``, ``--quiet``,
  ``-r CHARS``, ``--tb STYLE``, ``--durations N``;
- workers: ``-n N``/``--numprocesses N``, ``0 <= N <=`` this machine's CPU count;
- timeouts: ``--spec-timeout SECONDS``, a finite number in [:data:`MIN_TIMEOUT`,
  :data:`MAX_TIMEOUT`] (the suite's watchdog; pytest-timeout's ``--timeout`` kills pytest
  before it writes its results, so it is not among them).

A plug-in that changes outcomes (``--reruns``, flaky, repeat) is refused by name; and whatever
reruns a spec anyway, its row is not a pass (``conformance/plugin/results.py``).

A leaf module (standard library only): ``.ci/gate.sh`` runs it before anything is installed::

    python -m conformance.upstream.passthrough ARG [ARG ...]   # exit 2 and one line if refused
"""

from __future__ import annotations

import math
import os
import sys
from pathlib import Path

MIN_TIMEOUT, MAX_TIMEOUT = 1.0, 86400.0
TB_STYLES = ("auto", "long", "short", "line", "native", "no")
#: options of plug-ins that turn a failure into a pass or a spec into several: named in the
#: refusal, since a maintainer may well bring them from TorchRL's own CI
OUTCOME_CHANGING = ("--reruns", "--reruns-delay", "--only-rerun", "--rerun-except",
                    "--force-flaky", "--max-runs", "--min-passes", "--no-flaky-report",
                    "--count", "--repeat-scope", "--flake-finder", "--flake-runs",
                    "--runxfail")
#: pytest-timeout's options: it kills pytest (thread method) before results are written
KILLING = ("--timeout", "--timeout-method", "--timeout_method", "--timeout-disable-debugger-detection")
#: long options that take a value, and the check of that value (None: any text)
_VALUED_LONG = {"--maxfail": "count", "--tb": "tb", "--durations": "count",
                "--numprocesses": "workers", "--spec-timeout": "seconds"}
_FLAG_LONG = ("--exitfirst", "--verbose", "--quiet")
#: short options that take a value (attached: -kEXPR, or the next argument)
_VALUED_SHORT = {"k": "text", "m": "text", "r": "chars", "n": "workers"}
_FLAG_SHORT = "vqx"
ALLOWED = ("-k EXPR, -m EXPR, node ids and paths in conformance/, -x, --maxfail N, -v, -q, "
           "-r CHARS, --tb STYLE, --durations N, -n/--numprocesses N, --spec-timeout S")


class PassThroughError(ValueError):
    """An argument the caller may not pass through (one line)."""


def max_workers() -> int:
    """The most worker processes this machine takes: its CPU count (one where unknown)."""
    return os.cpu_count() or 1


def _whole(value: str) -> bool:
    """Digits 0-9 only (``"²".isdigit()`` is true, and int() refuses it)."""
    return value.isascii() and value.isdigit()


def _value_problem(kind: str, value: str) -> str | None:
    """Why ``value`` is not a valid value of this kind (None: it is)."""
    if not value or (value.startswith("-") and kind in ("text", "chars", "tb")):
        return "needs a value"  # an option in its place would be read as one
    if kind == "text":
        return None
    if kind == "chars":
        return None if value and value.isalpha() else "takes letters (e.g. -rN)"
    if kind == "tb":
        return None if value in TB_STYLES else f"takes one of {', '.join(TB_STYLES)}"
    if kind == "count":
        return None if _whole(value) and int(value) < 10**6 else "takes a whole number >= 0"
    if kind == "workers":
        bound = max_workers()
        if _whole(value) and int(value) <= bound:
            return None
        return f"takes a number of workers from 0 to {bound} (this machine's CPUs)"
    try:
        seconds = float(value)
    except ValueError:
        seconds = math.nan
    if math.isfinite(seconds) and MIN_TIMEOUT <= seconds <= MAX_TIMEOUT:
        return None
    return f"takes a finite number of seconds from {MIN_TIMEOUT:g} to {MAX_TIMEOUT:g}"


def _refuse(option: str, arg: str, why: str | None = None) -> PassThroughError:
    name = arg.split("=", 1)[0]
    if why is None and name in OUTCOME_CHANGING:
        why = ("changes outcomes (reruns, flaky or repeated specs, --runxfail): a spec that "
               "needs a rerun is not a pass; drop it")
    if why is None and name in KILLING:
        why = ("may kill pytest before it writes results; the suite's watchdog times each spec: "
               "use --spec-timeout S")
    if why is None:
        why = f"is not a pass-through option (allowed: {ALLOWED})"
    return PassThroughError(f"{option}: {arg[:80]!r} {why}")


def _check_path(arg: str, root: Path, option: str) -> None:
    if arg.startswith("@"):  # argparse reads arguments from a file: never a path in the suite
        raise _refuse(option, arg, "reads arguments from a file; give them directly")
    path = arg.split("::", 1)[0]
    suite = (root / "conformance").resolve()
    resolved = (root / path).resolve()
    if resolved != suite and not resolved.is_relative_to(suite):
        raise _refuse(option, arg, "is not a path in the suite (conformance/...); another "
                      "folder brings its own conftest.py")


def check(args: list[str], root: Path, option: str = "--pytest-args") -> None:
    """Raise PassThroughError unless every one of ``args`` is on the allow-list."""
    args = [str(a) for a in args]
    i = 0
    while i < len(args):
        arg = args[i]
        i += 1
        if arg == "--":
            raise _refuse(option, arg, "is not accepted (everything after it would be read as "
                          "a path)")
        if arg.startswith("--"):
            name, eq, value = arg.partition("=")
            if name in _FLAG_LONG and not eq:
                continue
            if name not in _VALUED_LONG:
                raise _refuse(option, arg)
            i = _check_value(option, arg, name, _VALUED_LONG[name], value if eq else None, args, i)
            continue
        if arg.startswith("-") and len(arg) > 1:
            head = arg[1]
            if all(c in _FLAG_SHORT for c in arg[1:]):
                continue  # -v, -vv, -q, -x, -vx
            if head not in _VALUED_SHORT:
                raise _refuse(option, arg)
            i = _check_value(option, arg, f"-{head}", _VALUED_SHORT[head], arg[2:] or None, args, i)
            continue
        _check_path(arg, root, option)


def _check_value(option, arg, name, kind, value, args, i) -> int:
    """Check an option's value, given in the same word or (``value`` None) the next one; the
    index of the word after it. A missing or bad value is refused in one line."""
    if value is None:
        if i >= len(args):
            raise _refuse(option, arg, "needs a value")
        value, i = args[i], i + 1
    problem = _value_problem(kind, value)
    if problem:
        raise _refuse(option, f"{name} {value}", problem)
    return i


def main(argv=None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if args in (["--help"], ["-h"]):
        print(__doc__)
        return 0
    try:
        check(args, Path(__file__).resolve().parent.parent.parent, "PYTEST_ARGS")
    except PassThroughError as exc:
        print(f"gate.sh: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
