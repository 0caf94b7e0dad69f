"""Command-line parsing shared by the suite's tools: a bad argument is one line, exit code 2,
with what was probably meant: the nearest option for a typo, the ``--`` form for an option of the
tool that runs behind it (pytest)."""

from __future__ import annotations

import argparse
import difflib


class OneLineErrors(argparse.ArgumentParser):
    """argparse, except that a usage error prints one line (argparse prints the usage first).

    ``passthrough``: the tool that takes the arguments after ``--`` (e.g. "pytest"); an unknown
    option that is no typo of this parser's own options is then shown in the ``--`` form."""

    def __init__(self, *args, passthrough: str | None = None, **kwargs):
        super().__init__(*args, **kwargs)
        self.passthrough = passthrough

    def parse_known_args(self, args=None, namespace=None):
        import sys

        self._argv = list(sys.argv[1:] if args is None else args)  # for the hint
        return super().parse_known_args(args, namespace)

    def error(self, message):
        self.exit(2, f"{self.prog}: error: {message}{self.hint(message)}\n")

    def hint(self, message: str) -> str:
        """What was probably meant, for an "unrecognized arguments" message ("" otherwise)."""
        prefix = "unrecognized arguments: "
        if not message.startswith(prefix):
            return ""
        unknown = message[len(prefix):].split()
        known = [s for action in self._actions for s in action.option_strings]
        typos = []
        for token in unknown:
            if token.startswith("--"):
                close = difflib.get_close_matches(token.split("=", 1)[0], known, n=1, cutoff=0.6)
                if close:
                    typos.append(close[0])
        if typos:
            return f" (did you mean {' '.join(typos)}?)"
        options = [t for t in unknown if t.startswith("-")]
        if not (self.passthrough and options):
            return ""
        argv = getattr(self, "_argv", unknown)
        cut = argv.index(options[0]) if options[0] in argv else 0
        mine, theirs = argv[:cut], [t for t in argv[cut:] if t != "--"]
        return (f" ({self.passthrough} options go after --: "
                f"{' '.join([self.prog, *mine, '--', *theirs])})")
