"""python -m conformance.reporting RESULTS.json [...]: build or merge the conformance matrix.

Every input is checked first (schema 1 or 2, see ``results_file``); a bad one is a one-line error
with exit code 2 and nothing is written. Runs are merged in the order they ran (their recorded
start times), so a later run of a test replaces an earlier one whatever the argument order.
"""

import sys
from pathlib import Path

from conformance.admission import not_a_run
from conformance.cli import OneLineErrors
from conformance.reporting.results_file import ResultsFileError, read

PROG = "python -m conformance.reporting"
#: the stems of the upstream matrix (conformance/upstream/runner.py writes the same)
UPSTREAM_STEMS = ("upstream", "upstream-partial")


def _error(message: str) -> int:
    print(f"{PROG}: error: {message}", file=sys.stderr)
    return 2


def main(argv=None) -> int:
    parser = OneLineErrors(
        prog=PROG,
        description="Build the conformance matrix (Markdown, HTML, CSV) from results files.",
    )
    parser.add_argument("results", nargs="+", type=Path, help="results.json files of one or more runs")
    parser.add_argument("-o", "--out-dir", type=Path, default=Path("reports"))
    parser.add_argument("--stem", default="conformance", help="output file name stem")
    args = parser.parse_args(argv)
    # --stem upstream is the upstream matrix's merge (the fan-out workflow's merge job): it
    # replaces reports/upstream.*, so it writes as the upstream runner does, from runs only
    kind = "upstream" if args.stem in UPSTREAM_STEMS else "conformance"
    try:
        for path in args.results:
            document = read(path)
            why = not_a_run(document) if kind == "upstream" else None
            if why:
                return _error(f"{path}: not a column of the upstream matrix: {why}")
    except ResultsFileError as exc:
        return _error(str(exc))
    if args.out_dir.exists() and not args.out_dir.is_dir():
        return _error(f"-o {args.out_dir}: not a directory")
    if not args.stem or "/" in args.stem or args.stem in (".", ".."):
        return _error(f"--stem {args.stem!r}: a file name stem, without '/'")
    from conformance.reporting import destination

    try:  # before anything is built: never a file of the project or a foreign one
        destination.check_outputs([args.out_dir / f"{args.stem}{suffix}"
                                   for suffix in (".md", ".html", ".csv")], "-o/--stem",
                                  kind)
    except (destination.DestinationError, OSError) as exc:
        return _error(str(exc))
    from conformance.reporting.matrix import write_reports  # pandas: only once inputs are good

    try:
        written = write_reports(args.results, args.out_dir, stem=args.stem)
    except OSError as exc:
        return _error(f"cannot write the report in {args.out_dir}: {exc.strerror}")
    for path in written:
        print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
