"""python -m conformance.dashboard [-o site] [--reports reports]: build the static site.

The site is one folder (index.html, libraries.html, benchmarks.html, data/, assets/, bugs/,
benchmarks/) that works from file:// and from GitHub Pages: no CDN, no build chain. The output
folder is replaced as a whole, and only when it is empty, absent, or a site this command built
(it holds data/built.json): ``-o reports`` or ``-o .`` is refused, never emptied; so is a
symbolic link. It is built in a new staging folder of its own beside ``-o`` and replaces it only
when within its budget (over it: exit code 1 and nothing written).
"""

import os
import sys
from pathlib import Path

from conformance.cli import OneLineErrors

PROG = "python -m conformance.dashboard"
MARKER = Path("data") / "built.json"
BUDGET = 5 * 1024 * 1024  # the limit for the whole site


def _refusal(out: Path) -> str | None:
    """Why ``out`` cannot become the site, checked before anything is built (None: it can)."""
    if out.is_symlink():
        return f"-o {out}: a symbolic link; give the folder itself"
    parent = out.parent
    while not parent.exists():
        parent = parent.parent
    if not parent.is_dir():
        return f"-o {out}: {parent} is not a directory"
    if not os.access(parent, os.W_OK):
        return f"-o {out}: {parent} is not writable"
    if out.exists() and not out.is_dir():
        return f"-o {out}: exists and is not a directory"
    if out.is_dir() and any(out.iterdir()) and not (out / MARKER).is_file():
        return (f"-o {out}: not empty and not a site built by this command (no {MARKER}); "
                "it would be replaced: choose another folder")
    return None


def main(argv=None) -> int:
    from conformance import paths

    parser = OneLineErrors(prog=PROG, description=__doc__.splitlines()[0])
    parser.add_argument("-o", "--out", type=Path, default=paths.ROOT / "site")
    parser.add_argument("--reports", type=Path, default=paths.REPORTS,
                        help="the results files' folder (default: reports/)")
    parser.add_argument("--history-dir", type=Path, help="default: REPORTS/history")
    args = parser.parse_args(argv)
    refusal = _refusal(args.out)
    if refusal:
        print(f"{PROG}: error: {refusal}", file=sys.stderr)
        return 2
    from conformance.dashboard.build import OverBudget, build

    try:
        summary = build(args.reports, args.out, args.history_dir, budget=BUDGET)
    except OverBudget as exc:  # nothing written: the workflow's upload finds no site
        print(f"{PROG}: error: {exc}", file=sys.stderr)
        return 1
    except (FileNotFoundError, ValueError) as exc:
        print(f"{PROG}: error: {exc}", file=sys.stderr)
        return 2
    for problem in summary["skipped"]:
        print(f"{PROG}: warning: history file left out: {problem}", file=sys.stderr)
    size = summary["bytes"]
    print(f"{args.out}/index.html: {summary['sources']} sources, {len(summary['flips'])} flip(s), "
          f"{size / 1e6:.2f} MB in all")
    return 0


if __name__ == "__main__":
    sys.exit(main())
