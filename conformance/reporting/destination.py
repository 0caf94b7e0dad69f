"""Where a run will write its results and reports, checked before the first spec runs.

A run that takes minutes must not end in a traceback because its results cannot be written, and
must never overwrite a file of the project that is not one of its own reports (``--results
README.json`` would replace README.md with the report). Each problem is one line.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from conformance import paths

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


def check(results: Path, report_stem: str | None, option: str = "--results") -> None:
    """Raise DestinationError unless ``results`` (and, with ``report_stem``, the reports beside
    it) can be written without replacing anything that is not this suite's output."""
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
    for target in targets:
        if target.is_dir():
            raise DestinationError(f"{option} {results}: {target} is a directory")
        if target.exists() and not _ours(target):
            raise DestinationError(
                f"{option} {results}: {target} exists and is not a results file or report of "
                "this suite; it would be overwritten: choose another name")
