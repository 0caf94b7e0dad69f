"""The library adapters' own self-tests (``tests/libraries/test_<name>.py``: the real code path
and the mutants), each run in its library's layer, where the library is installed. The stack
environment has none of the libraries, so there those modules skip; ``nox -s tests`` runs this
after them, so that an adapter that breaks fails CI. A layer that cannot be built fails the run
with pip's reason.

    python -m conformance.libraries.selftests [NAME ...] [-- PYTEST-ARGS ...]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys

from conformance.libraries import layers
from conformance.libraries.registry import BY_NAME, LIBRARIES
from conformance.paths import ROOT


def main(argv: list[str]) -> int:
    own, extra = (argv[:argv.index("--")], argv[argv.index("--") + 1:]) if "--" in argv \
        else (argv, [])
    parser = argparse.ArgumentParser(prog="python -m conformance.libraries.selftests",
                                     description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("names", nargs="*", metavar="NAME",
                        help=f"libraries (default: all of {', '.join(BY_NAME)})")
    args = parser.parse_args(own)
    unknown = [n for n in args.names if n not in BY_NAME]
    if unknown:
        parser.error(f"unknown library {unknown[0]!r}; choose from {', '.join(BY_NAME)}")
    chosen = [BY_NAME[n] for n in args.names] or list(LIBRARIES)
    statuses = {}
    for library in chosen:
        layer = layers.build(library, layers.root())
        if layer.problem:
            print(f"{library.name}: self-tests NOT RUN: {layer.problem}", flush=True)
            statuses[library.name] = "not run"
            continue
        cmd = [str(layer.python), "-m", "pytest", f"tests/libraries/test_{library.name}.py",
               "-q", "-p", "no:cacheprovider", *extra]
        print(f"\n$ {' '.join(cmd)}", flush=True)
        status = subprocess.run(cmd, cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)}
                                ).returncode
        statuses[library.name] = "passed" if status in (0, 5) else f"pytest exit status {status}"
    for name, status in statuses.items():
        print(f"{name} self-tests: {status}")
    return 0 if all(s == "passed" for s in statuses.values()) else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
