"""``torchrl-conformance``: check the TorchRL installed here, from any folder.

    torchrl-conformance                          # the installed torchrl, its shipped expectations
    torchrl-conformance --impl mypkg.mod:IMPL    # a third-party implementation
    torchrl-conformance --report-dir out -- -k ppo

It runs ``pytest --pyargs conformance`` in a CHILD process with the suite's plug-in, which
writes ``results.json`` and ``conformance.{md,html,csv}`` to ``--report-dir`` (default
``./reports``; a narrowed run's to ``./reports/partial``, beside a complete one), and gives its
verdict from the results file that child wrote (``conformance.parent``): 0 only for a complete
run conformant to the expectations; no results (an implementation that exits the process at
import or mid-run), a partial run (6) or an unexpected result is red, with one line saying why.
Everything it can check before the specs start (torchrl importable, the folder writable,
expectations shipped for the installed version, the arguments after ``--`` on the pass-through
allow-list, ``--workers`` within this machine's CPUs) is checked first, and a problem is one
line with exit code 2.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import sys
from pathlib import Path

from conformance import __version__, parent, paths
from conformance.cli import OneLineErrors

PLUGIN = "conformance.pytest_plugin"
DEFAULT_DIR = Path("reports")  # the plug-in's default for an installed run: under the folder


def build_parser() -> argparse.ArgumentParser:
    parser = OneLineErrors(
        prog="torchrl-conformance", passthrough="pytest",
        description=__doc__.split("\n\n", 1)[0].replace("``", ""),
        epilog="Arguments after -- go to pytest (-k EXPR, -x, ...); a narrowed run's report "
               "says PARTIAL RUN.")
    parser.add_argument("--impl", default="torchrl",
                        help="what to check: torchrl (default), reference, or pkg.module:OBJECT")
    parser.add_argument("--report-dir", type=Path, default=None, metavar="DIR",
                        help="where results.json and conformance.{md,html,csv} go (default: "
                             "./reports, a narrowed run's in ./reports/partial)")
    parser.add_argument("--expectations", action="append", default=[], metavar="[IMPL=]FILE",
                        help="a known-failures file instead of the shipped one; 'none': no "
                             "expectations (repeatable)")
    parser.add_argument("--device", default=None, help="cpu (default), cuda or cuda:N")
    parser.add_argument("--workers", type=int, default=0, metavar="N",
                        help="pytest-xdist worker processes (default 0: one process)")
    parser.add_argument("--build-trees", action="store_true",
                        help="where TorchRL's shipped C++ replay trees do not load next to the "
                             "installed torch, build them from the installed torchrl's "
                             "torchrl/csrc (a C++ compiler; cached) and use them for this run")
    parser.add_argument("--version", action="version", version=f"torchrl-conformance {__version__}")
    parser.add_argument("pytest_args", nargs=argparse.REMAINDER,
                        help="after --: more pytest arguments")
    return parser


def preflight(args) -> str | None:
    """The first problem a run would meet before its first spec, as one line (None: none)."""
    from conformance import shipped
    from conformance.implementations import names as impl_names
    from conformance.reporting import destination
    from conformance.upstream import passthrough
    from conformance.versions import module_version

    if not args.impl.replace(",", "").strip():  # names('') would be the default: never silently
        return f"--impl {args.impl!r}: names no implementation (torchrl, reference, pkg.module:OBJECT)"
    names = impl_names(args.impl)
    bound = passthrough.max_workers()
    if not 0 <= args.workers <= bound:
        return f"--workers {args.workers}: from 0 to {bound} (this machine's CPUs)"
    try:
        passthrough.check(extra_args(args), paths.PACKAGE.parent, "arguments after --")
    except passthrough.PassThroughError as exc:
        return str(exc)
    if "torchrl" in names:
        try:  # a finder that raises (a broken install, a site hook) is "cannot find it", one line
            found = importlib.util.find_spec("torchrl")
        except (ImportError, ValueError) as exc:
            return f"torchrl cannot be found here: {type(exc).__name__}: {exc}"
        if found is None:
            return (f"torchrl is not installed in this environment ({sys.executable}); install "
                    "it, or check another implementation with --impl pkg.module:OBJECT")
        version = module_version("torchrl")
        if not args.expectations and shipped.shipped_file("torchrl", version) is None:
            return (f"torchrl {version}: no shipped expectations for this version (shipped: "
                    f"{', '.join(shipped.shipped_versions('torchrl'))}, nightly); give "
                    "--expectations FILE, or --expectations none to count every failure")
    try:
        destination.check((args.report_dir or DEFAULT_DIR) / "results.json", "conformance",
                          option="--report-dir")
    except destination.DestinationError as exc:
        return str(exc)
    return None


def pytest_command(args) -> list[str]:
    # -p: the plug-in in every process (pytest-xdist workers too), with or without the entry
    # point; this module has imported the package already, so pytest cannot rewrite its asserts
    command = ["--pyargs", "conformance", "-p", PLUGIN, "-p", "no:cacheprovider",
               "-W", "ignore:Module already imported so cannot be rewritten; conformance:"
                     "pytest.PytestAssertRewriteWarning", "--impl", args.impl]
    if args.report_dir is not None:
        command += ["--results", str(args.report_dir / "results.json")]
    for value in args.expectations:
        command += ["--expectations", value]
    if args.device:
        command += ["--device", args.device]
    if args.workers:
        command += ["--numprocesses", str(args.workers)]
    return command + extra_args(args) + ["--require-complete"]


def extra_args(args) -> list[str]:
    """The user's pytest arguments (after ``--``); ``--require-complete`` is the console's own
    (it always judges completeness), so it is dropped, not refused."""
    extra = args.pytest_args[1:] if args.pytest_args[:1] == ["--"] else args.pytest_args
    return [a for a in extra if a != "--require-complete"]


def results_candidates(args) -> list[Path]:
    """Where the child may write its results: the --report-dir's, or the plug-in's default
    (``./reports``; the checkout's ``reports/`` when run from the checkout)."""
    folders = [args.report_dir] if args.report_dir is not None else [
        Path.cwd() / DEFAULT_DIR, paths.REPORTS]
    return [p for folder in folders for p in parent.candidates(folder / "results.json")]


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    problem = preflight(args)
    if problem:
        parser.exit(2, f"torchrl-conformance: error: {problem}\n")
    if args.build_trees:
        from conformance.build_trees import build_trees

        problem = build_trees()  # the child finds the built trees through PYTHONPATH
        if problem:
            parser.exit(2, f"torchrl-conformance: error: {problem}\n")
    # the specs run in a child: an implementation that ends its process (os._exit(0) at import
    # or mid-run) ends the child, and this parent finds no results: red, never 0
    # (PYTHONDONTWRITEBYTECODE: pytest would cache rewritten spec modules in site-packages)
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
    return parent.run_judged([sys.executable, "-m", "pytest", *pytest_command(args)],
                              results_candidates(args), env=env, prog="torchrl-conformance")


if __name__ == "__main__":
    sys.exit(main())
