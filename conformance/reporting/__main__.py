import argparse
import sys
from pathlib import Path

from conformance.reporting.matrix import write_reports


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m conformance.reporting",
        description="Build the conformance matrix (Markdown, HTML, CSV) from results files.",
    )
    parser.add_argument("results", nargs="+", type=Path, help="results.json files of one or more runs")
    parser.add_argument("-o", "--out-dir", type=Path, default=Path("reports"))
    parser.add_argument("--stem", default="conformance", help="output file name stem")
    args = parser.parse_args(argv)
    missing = [str(p) for p in args.results if not p.is_file()]
    if missing:
        parser.error(f"no such results file: {', '.join(missing)}")
    for path in write_reports(args.results, args.out_dir, stem=args.stem):
        print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
