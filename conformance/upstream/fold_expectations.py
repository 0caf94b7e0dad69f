"""Fold per-release expectations files so that an entry shared by releases is written once.

    python -m conformance.upstream.fold_expectations [DIR] [--check]

Reads every ``<impl>-<version>.txt`` of DIR (default ``conformance/expectations``) with what it
includes, and rewrites them: an entry that several releases carry moves to ``<impl>.txt``, in a
block whose version range covers exactly those releases among the files (``[>=0.7.2, <=0.13.3]``;
a set with gaps gets one block per run of consecutive releases); each release's file keeps its
header comments, ``include <impl>.txt for <version>`` and its own entries. Comments directly
above an entry travel with it. Run it after adding or editing a release's file (a drafted file
or one in the old form, without the include, both work); ``--check`` changes nothing and exits 1
when the files are not folded. Every release keeps exactly the entries it had.
"""

from __future__ import annotations

import re
import sys
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

from packaging.version import InvalidVersion, Version

from conformance.cli import OneLineErrors
from conformance.files import atomic_write
from conformance.plugin.expectation_file import ExpectationsError, applies, read

DEFAULT_DIR = Path(__file__).resolve().parents[1] / "expectations"
RELEASE_FILE = re.compile(r"^(?P<impl>[\w.]+?)-(?P<version>\d[^-]*)\.txt$")
SHARED_HEADER = [
    "# Entries shared by several {impl} releases, each written once. A block applies to the",
    "# releases in its version range (PEP 440), through the line `include {impl}.txt for <version>`",
    "# of a release's file. Written by python -m conformance.upstream.fold_expectations: edit",
    "# the entries freely, then re-run it.",
]


@dataclass
class Shared:
    """One entry line and where it occurs."""

    line: str
    versions: list[Version] = field(default_factory=list)
    comments: list[str] = field(default_factory=list)
    order: tuple = ()


def _releases(directory: Path) -> dict[str, dict[Version, Path]]:
    found: dict[str, dict[Version, Path]] = defaultdict(dict)
    for path in sorted(directory.glob("*.txt")):
        match = RELEASE_FILE.match(path.name)
        if match is None:
            continue
        try:
            found[match["impl"]][Version(match["version"])] = path
        except InvalidVersion:
            continue
    return found


def _runs(versions: list[Version], releases: list[Version]) -> list[list[Version]]:
    """Runs of consecutive releases (in the order of all release files) within ``versions``."""
    runs: list[list[Version]] = []
    current: list[Version] = []
    for version in releases:
        if version in versions:
            current.append(version)
        elif current:
            runs.append(current)
            current = []
    return [*runs, current] if current else runs


def _block(run: list[Version]) -> str:
    return f">={run[0]}, <={run[-1]}"


def fold(directory: Path, impl: str, files: dict[Version, Path]) -> dict[Path, str]:
    """The folded text of each file of one implementation (its releases and ``<impl>.txt``)."""
    releases = sorted(files)
    shared_path = directory / f"{impl}.txt"
    entries: dict[str, Shared] = {}
    headers: dict[Version, list[str]] = {}
    for rank, version in enumerate(releases):
        parsed = read(files[version])
        headers[version] = parsed.header
        records = [(r.entry.line, r.comments) for r in parsed.records]
        for include in parsed.includes:
            if include.file.resolve() != shared_path.resolve() or include.version != str(version):
                raise ExpectationsError(f"{include.source}: a release's file includes "
                                        f"{shared_path.name} for its own version {version}")
            records += [(r.entry.line, r.comments) for r in read(include.file).records
                        if applies(r, str(version))]
        for position, (line, comments) in enumerate(records):
            item = entries.setdefault(line, Shared(line, order=(rank, position)))
            if version in item.versions:
                raise ExpectationsError(f"{files[version]}: {line.split(' | ')[0]!r} is written "
                                        "twice for this release")
            item.versions.append(version)
            item.comments += [c for c in comments if c not in item.comments]
    own: dict[Version, list[Shared]] = defaultdict(list)
    blocks: dict[str, list[Shared]] = defaultdict(list)
    block_key: dict[str, tuple] = {}
    for item in sorted(entries.values(), key=lambda s: s.order):
        for run in _runs(item.versions, releases):
            if len(run) == 1:  # one release (or a gap on both sides): the release's own line
                own[run[0]].append(item)
                continue
            block = _block(run)
            blocks[block].append(item)
            block_key[block] = (releases.index(run[0]), -releases.index(run[-1]))
    out: dict[Path, str] = {}
    for version in releases:
        lines = [*headers[version], f"include {shared_path.name} for {version}", ""]
        for item in own[version]:
            lines += [*item.comments, item.line]
        out[files[version]] = "\n".join(lines).rstrip("\n") + "\n"
    lines = [h.format(impl=impl) for h in SHARED_HEADER]
    for block in sorted(blocks, key=block_key.__getitem__):
        lines += ["", f"[{block}]"]
        for item in blocks[block]:
            lines += [*item.comments, item.line]
    out[shared_path] = "\n".join(lines) + "\n"
    return out


def dropped(directory: Path, impl: str, releases: list[Version]) -> list[str]:
    """Entries of the shared file that apply to none of the release files (fold drops them)."""
    path = directory / f"{impl}.txt"
    if not path.is_file():
        return []
    return [f"{r.entry.source}: applies to no release file: {r.entry.prefix!r}"
            for r in read(path).records if not any(applies(r, str(v)) for v in releases)]


def main(argv=None) -> int:
    parser = OneLineErrors(prog="python -m conformance.upstream.fold_expectations",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("directory", nargs="?", type=Path, default=DEFAULT_DIR)
    parser.add_argument("--check", action="store_true",
                        help="change nothing; exit 1 when the files are not folded")
    args = parser.parse_args(argv)
    if not args.directory.is_dir():
        parser.error(f"no such directory: {args.directory}")
    found = _releases(args.directory)
    if not found:
        parser.error(f"no <impl>-<version>.txt file in {args.directory}")
    changed = []
    try:
        for impl, files in sorted(found.items()):
            for line in dropped(args.directory, impl, sorted(files)):
                print(f"warning: {line}", file=sys.stderr)
            for path, text in fold(args.directory, impl, files).items():
                old = path.read_text(encoding="utf-8") if path.is_file() else None
                if old != text:
                    changed.append(path)
                    if not args.check:
                        atomic_write(path, text)
    except ExpectationsError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    for path in changed:
        print(f"{'not folded' if args.check else 'rewrote'}: {path}")
    return 1 if args.check and changed else 0


if __name__ == "__main__":
    sys.exit(main())
