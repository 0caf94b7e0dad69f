"""Which pytest arguments a caller may pass through the runner and the gate, and which it may not.

The runner and the gate decide what is tested: the implementation (``--impl``), where its
results go (``--results``, ``--no-report``), what is known to fail (``--expectations``), where
it runs (``--device``), how long a spec may take (``--spec-timeout``), and which configuration,
conftest files and plug-ins pytest loads (``-p``, ``-c``, ``-o``, ``--rootdir``,
``--confcutdir``, ``--noconftest``, ``--pyargs``...). Passed through, these came after the
runner's own and won: ``--impl reference`` labelled 257 reference rows "torchrl 0.14.1". Each is
now a one-line usage error, in every spelling pytest accepts (``--impl=x``, ``-pno:x``, ``-qp
x``, an abbreviation). Paths must lie in the suite (``conformance/...``): another folder brings
its own ``conftest.py``.

A leaf module (standard library only): ``.ci/gate.sh`` runs it before anything is installed::

    python -m conformance.upstream.passthrough ARG [ARG ...]   # exit 2 and one line if refused
"""

from __future__ import annotations

import sys
from pathlib import Path

#: long options the runner or the gate own (pytest's and the suite's)
OWNED_LONG = (
    "--impl", "--results", "--no-report", "--expectations", "--device", "--spec-timeout",
    "--require-complete", "--config-file", "--override-ini", "--rootdir", "--confcutdir",
    "--noconftest", "--pyargs", "--import-mode", "--plugins", "--basetemp", "--junit-xml",
    "--junitxml", "--pdb", "--pdbcls", "--trace",
)
#: short options pytest reads as -p PLUGIN, -c FILE, -o INI
OWNED_SHORT = "pco"
#: short options that take a value (the rest of a cluster is that value)
VALUED_SHORT = "kmWrn"


class PassThroughError(ValueError):
    """An argument the caller may not pass through (one line)."""


def _long_owned(arg: str) -> str | None:
    name = arg.split("=", 1)[0]
    for owned in OWNED_LONG:
        # an abbreviation (argparse accepts unambiguous prefixes) is the option it abbreviates
        if name == owned or (len(name) > 3 and owned.startswith(name)):
            return owned
    return None


def _short_owned(arg: str) -> str | None:
    for char in arg[1:]:
        if char in OWNED_SHORT:
            return f"-{char}"
        if char in VALUED_SHORT:
            return None  # the rest is the value of -k, -m, -W, -r, -n
    return None


def check(args: list[str], root: Path, option: str = "--pytest-args") -> None:
    """Raise PassThroughError unless every one of ``args`` may be passed through."""
    expects_value = False
    for arg in args:
        if expects_value:  # the value of -k, -m, ... may be anything
            expects_value = False
            continue
        if arg == "--":
            raise PassThroughError(f"{option}: '--' is not accepted (everything after it would "
                                   "be read as a path)")
        if arg.startswith("-") and any(c.isspace() for c in arg.split("=", 1)[0]):
            raise PassThroughError(f"{option}: {arg!r}: an option with a space in its name")
        if arg.startswith("--"):
            owned = _long_owned(arg)
            if owned:
                name = arg.split("=", 1)[0]
                raise PassThroughError(
                    f"{option}: {name}{'' if name == owned else f' ({owned})'} is decided by "
                    "the runner and the gate, not passed through; drop it")
            continue
        if arg.startswith("-") and len(arg) > 1:
            owned = _short_owned(arg)
            if owned:
                raise PassThroughError(
                    f"{option}: {arg}{'' if arg == owned else f' ({owned})'} is decided by the "
                    "runner and the gate, not passed through; drop it")
            expects_value = len(arg) == 2 and arg[1] in VALUED_SHORT
            continue
        path = arg.split("::", 1)[0]
        suite = (root / "conformance").resolve()
        resolved = (root / path).resolve()
        if resolved != suite and not resolved.is_relative_to(suite):
            raise PassThroughError(f"{option}: {arg!r} is not a path in the suite "
                                   "(conformance/...); another folder brings its own conftest.py")


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
