"""Where a run will write its results and reports, checked before the first spec runs.

A run that takes minutes must not end in a traceback because its results cannot be written, and
must never overwrite a file of the project that is not one of its own reports (``--results
README.json`` would replace README.md with the report). Each problem is one line.
"""

from __future__ import annotations

import fnmatch
import os
import sys
import tempfile
from pathlib import Path

from conformance import paths

#: the checkout (conformance/reporting/destination.py -> ..): a leaf module, no project import
ROOT = Path(__file__).resolve().parent.parent.parent

#: the one destination rule: inside the checkout, a writer of each kind may replace only the
#: files of that kind (``--results reports/upstream.json`` of a pytest run must not replace the
#: release matrix, ``--stem README`` the README); outside it, only files that read as this
#: suite's output (the signatures below)
KINDS = {
    # a pytest run: its own results and reports; the results (only) of the upstream runner's
    # and the libraries runner's pytest runs, which build their matrices themselves
    "conformance": ("reports/results.json", "reports/conformance.*", "reports/partial/*",
                    "reports/gate/*", "reports/upstream/partial/*.json",
                    "reports/libraries/*.json",
                    # a GPU run (tools/gpu_run.sh): each device's results and reports, side by side
                    "reports/gpu/results-*", "reports/gpu/conformance-*"),
    "upstream": ("reports/upstream/*.json", "reports/upstream/sources/*.json",
                 "reports/upstream/partial/*", "reports/upstream.*", "reports/upstream-partial.*",
                 "reports/gate/*"),
    "dropin": ("reports/dropin.md", "reports/dropin-*"),
    "bisect": ("reports/bisect*.json", "reports/upstream/bisect*.json"),
}
#: the project's own folders whose names start with a dot; any other dot folder of the checkout
#: is a command's work folder (.nox, the watch's .watch-reports), not a file of the project
PROJECT_DOT_FOLDERS = (".github/", ".ci/", ".git/", ".gitignore", ".gitattributes")
WORK_FOLDERS = ("site",)  # the dashboard's default output folder
GATE_MARK = ".gate-reports"
DEFAULT_GATE = ROOT / "reports" / "gate"

#: how the first bytes of each kind of file this suite writes begin (see conformance.reporting.matrix
#: and conformance.plugin.results): a file that exists and does not begin so is not ours
_SIGNATURES = {
    ".json": ('{\n "schema"', '{"schema"'),
    ".md": ("## ",),
    ".html": ("<!doctype html><html><head><meta charset='utf-8'><title>",),
    ".csv": ("nodeid,area,spec,",),
}
_MD_VERDICT = ("**verdict:", "**PARTIAL RUN")


class DestinationError(ValueError):
    """Why the results or reports cannot go where asked, in one line."""


def _ours(path: Path) -> bool:
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            head = fh.read(4096)
    except OSError:
        return False
    if not head.startswith(_SIGNATURES[path.suffix]):
        return False
    if path.suffix == ".md":  # "## <title>", a blank line, then the verdict
        lines = head.splitlines()
        return len(lines) > 2 and lines[2].startswith(_MD_VERDICT)
    return True


def _writable_folder(folder: Path, option: str) -> None:
    existing = folder
    while not existing.exists():  # it will be created: its nearest existing parent must allow it
        existing = existing.parent
    if not existing.is_dir():
        raise DestinationError(f"{option}: {existing} is not a directory")
    try:
        fd, probe = tempfile.mkstemp(prefix=".conformance-probe-", dir=existing)
    except OSError as exc:
        raise DestinationError(f"{option}: cannot write in {existing}: "
                               f"{exc.strerror or exc}") from None
    os.close(fd)
    os.unlink(probe)


def check_kind(target: Path, kind: str, option: str) -> None:
    """Inside the checkout, ``target`` must be a file of ``kind`` (see KINDS)."""
    resolved = Path(os.path.abspath(target))
    try:
        resolved = Path(target).resolve()
        inside = resolved.relative_to(ROOT).as_posix()
    except (ValueError, OSError):
        return  # outside the checkout: the signature rule
    if inside.split("/", 1)[0] in WORK_FOLDERS or (
            inside.startswith(".") and not inside.startswith(PROJECT_DOT_FOLDERS)):
        return  # a command's own work folder (.nox/_upstream/bisect-reports, .watch-reports):
        # not the project's; what exists there is checked by its signature (check_outputs)
    if not any(fnmatch.fnmatchcase(inside, pattern) for pattern in KINDS[kind]):
        # an existing file of the project, or a place of another kind's reports (a new file
        # elsewhere in the checkout replaces nothing)
        if resolved.exists() or inside.startswith(("reports/", "conformance/", ".")):
            raise DestinationError(
                f"{option}: {inside} is a file of the project, not a {kind} report (those are "
                f"{', '.join(KINDS[kind])}): choose another place")


def check(results: Path, report_stem: str | None, option: str = "--results",
          kind: str = "conformance") -> None:
    """Raise DestinationError unless ``results`` (and, with ``report_stem``, the reports beside
    it) can be written without replacing anything that is not this suite's output of ``kind``."""
    results = Path(results)
    if paths.inside_install(results):
        raise DestinationError(f"{option} {results}: inside the installed package's folder "
                               f"({paths.ROOT}); run from another folder or give --results")
    if results.is_dir():
        raise DestinationError(f"{option} {results}: is a directory; give a file such as "
                               f"{results / 'results.json'}")
    _writable_folder(results.parent, f"{option} {results}")
    targets = [results]
    if report_stem is not None:
        targets += [results.parent / f"{report_stem}{suffix}" for suffix in (".md", ".html", ".csv")]
    check_outputs(targets, f"{option} {results}", kind)


def check_outputs(targets, option: str, kind: str) -> None:
    """Each of ``targets`` (files a writer of ``kind`` will replace) may be written."""
    for target in map(Path, targets):
        check_kind(target, kind, option)
        if target.is_dir():
            raise DestinationError(f"{option}: {target} is a directory")
        if target.exists() and target.suffix in _SIGNATURES and not _ours(target):
            raise DestinationError(
                f"{option}: {target} exists and is not a results file or report of "
                "this suite; it would be overwritten: choose another name")
        if target.exists() and target.suffix not in _SIGNATURES:
            raise DestinationError(f"{option}: {target} exists and is not a report of this "
                                   "suite; it would be overwritten: choose another name")


def check_gate_folder(folder: Path) -> None:
    """``GATE_REPORTS``: a folder of the gate's own, which the gate empties. Never the checkout,
    a folder that holds it, its reports/ or any folder of it; elsewhere a folder that does not
    exist yet, is empty, or was made by the gate (it holds GATE_MARK)."""
    given = str(folder)
    if not given.strip():
        raise DestinationError("GATE_REPORTS is empty: give a folder of the gate's own")
    resolved = Path(folder).resolve()
    if resolved == DEFAULT_GATE:
        return
    if resolved == ROOT or ROOT.is_relative_to(resolved):
        raise DestinationError(f"GATE_REPORTS={given}: the checkout or a folder holding it; "
                               "the gate empties it: give a folder of its own")
    if resolved.is_relative_to(ROOT) and not resolved.is_relative_to(DEFAULT_GATE):
        raise DestinationError(f"GATE_REPORTS={given}: a folder of the project; the gate empties "
                               f"it: use {DEFAULT_GATE.relative_to(ROOT)} or a folder outside")
    if resolved.exists():
        if not resolved.is_dir():
            raise DestinationError(f"GATE_REPORTS={given}: not a directory")
        if any(resolved.iterdir()) and not (resolved / GATE_MARK).is_file():
            raise DestinationError(f"GATE_REPORTS={given}: holds files the gate did not write "
                                   f"(no {GATE_MARK}); the gate empties it: give a new folder")


def main(argv=None) -> int:
    """``python -m conformance.reporting.destination --gate-folder DIR`` (for .ci/gate.sh)."""
    args = list(sys.argv[1:] if argv is None else argv)
    if args in (["--help"], ["-h"]):
        print(f"{__doc__}\n{main.__doc__}")
        return 0
    if len(args) != 2 or args[0] != "--gate-folder":
        print("usage: python -m conformance.reporting.destination --gate-folder DIR",
              file=sys.stderr)
        return 2
    try:
        check_gate_folder(Path(args[1]))
    except (DestinationError, OSError) as exc:
        print(f"gate.sh: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
