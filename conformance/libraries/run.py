"""``nox -s libraries``: the suite on reference, torchrl and every RL library, one matrix.

    python -m conformance.libraries.run [pytest arguments...]
    python -m conformance.libraries.run --report-only   # rebuild the matrix from the last results

Builds (or reuses) one layer per library (``conformance.libraries.layers``) under
``.nox/_libraries-<stack>/``, runs ``pytest conformance`` once on ``reference,torchrl`` with this
(the stack's) python and once per library with its layer's python (``--impl <name>``; the
library's expectations file applies automatically), and writes ``reports/libraries.{md,html,
csv}`` from the results files in ``reports/libraries/``. A library whose layer cannot be built
still gets its column: every spec "NOT TESTED: <why>" (and the run fails). ``TORCHRL_CONFORMANCE_
LIBRARIES=cpprb,sb3`` limits the libraries. Each library's adapter self-tests
(``tests/libraries/test_<name>.py``: the real code path, a mutant) run in its layer too. The exit
status is non-zero when any run had an unexpected result (a failure not listed in the library's
expectations, or a stale entry) or a self-test failed.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from conformance.implementations.library import FORCE_UNTESTABLE
from conformance.libraries import layers
from conformance.libraries.registry import BY_NAME, LIBRARIES
from conformance.paths import ROOT

SELECT = "TORCHRL_CONFORMANCE_LIBRARIES"


def _selected():
    raw = os.environ.get(SELECT, "")
    names = [n.strip() for n in raw.split(",") if n.strip()] or [lib.name for lib in LIBRARIES]
    unknown = [n for n in names if n not in BY_NAME]
    if unknown:
        raise SystemExit(f"{SELECT}: unknown library {', '.join(unknown)}; choose "
                         f"{', '.join(BY_NAME)}")
    return [BY_NAME[n] for n in names]


def _pytest(python, impl: str, results: Path, extra: list[str], env_extra=None) -> int:
    env = {**os.environ, "PYTHONPATH": str(ROOT), **(env_extra or {})}
    cmd = [str(python), "-m", "pytest", "conformance", "-p", "no:cacheprovider", "--impl", impl,
           "--results", str(results), "--no-report", *extra]
    print(f"\n$ {' '.join(cmd)}", flush=True)
    return subprocess.run(cmd, cwd=ROOT, env=env).returncode


def write_report(out: Path, ran: list[str]) -> None:
    """reports/libraries.* from this run's results plus, for the libraries not run this time
    (``TORCHRL_CONFORMANCE_LIBRARIES``), their last results files, named as such."""
    from conformance.reporting.matrix import write_reports

    files = [out / "reference-torchrl.json"] + [out / f"{lib.name}.json" for lib in LIBRARIES]
    present = [p for p in files if p.is_file()]
    earlier = [lib.name for lib in LIBRARIES
               if lib.name not in ran and (out / f"{lib.name}.json").is_file()]
    preface = [
        "Each column is one implementation with its version: our reference, the installed "
        "TorchRL and each RL library, run through its adapter in "
        "`conformance/implementations/<name>.py` (each library in its own install layer over "
        "the shared stack). Known failures come from `conformance/expectations/<name>-"
        "<version>.txt`, each with its reason and a link to the library's code or issue.",
    ]
    if not ran:
        preface.append("Rebuilt (--report-only) from the last results file of each column in "
                       "`reports/libraries/`.")
    elif earlier:
        preface.append(f"Columns from an earlier run (not run this time): {', '.join(earlier)}.")
    for written in write_reports(present, ROOT / "reports", stem="libraries",
                                 title="How RL libraries compare", preface=preface):
        print(written)


def main(argv: list[str]) -> int:
    if argv[:1] in (["-h"], ["--help"]):  # not passed on to pytest: it would start the run
        print(__doc__)
        return 0
    if argv[:1] == ["--report-only"]:
        write_report(ROOT / "reports" / "libraries", [])
        return 0
    libraries = _selected()
    root = layers.root()
    out = ROOT / "reports" / "libraries"
    out.mkdir(parents=True, exist_ok=True)
    results, statuses = [], {}
    path = out / "reference-torchrl.json"
    statuses["reference,torchrl"] = _pytest(sys.executable, "reference,torchrl", path, argv)
    results.append(path)
    for library in libraries:
        layer = layers.build(library, root)
        path = out / f"{library.name}.json"
        if layer.problem:
            print(f"{library.name}: NOT TESTED: {layer.problem}", flush=True)
            env = {FORCE_UNTESTABLE.format(library.name.upper()): layer.problem}
            statuses[library.name] = _pytest(sys.executable, library.name, path, argv, env)
        else:
            statuses[library.name] = _pytest(layer.python, library.name, path, argv)
            # the adapter's own self-tests (real code path, mutant) need the library: run here
            selftest = ["-m", "pytest", f"tests/libraries/test_{library.name}.py", "-q",
                        "-p", "no:cacheprovider"]
            print(f"\n$ {layer.python} {' '.join(selftest)}", flush=True)
            statuses[f"{library.name} self-tests"] = subprocess.run(
                [str(layer.python), *selftest], cwd=ROOT,
                env={**os.environ, "PYTHONPATH": str(ROOT)}).returncode
        results.append(path)
    write_report(out, [lib.name for lib in libraries])
    bad = {k: v for k, v in statuses.items() if v not in (0, 5)}
    for name, status in statuses.items():
        print(f"{name}: pytest exit status {status}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
