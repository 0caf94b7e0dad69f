"""Which expectations entry applies to a test, and which entries no longer apply to anything.

Pure functions of the entries, the collected node ids (with the implementation each belongs to)
and the selections that were collected in full, so that the check runs wherever the ids are
known: in the process that collected them, or on a pytest-xdist controller from the ids its
workers report.

"Collected in full" is judged before ``-k``/``-m``/``--deselect`` take tests away (they filter
what runs, not what exists), but after the command line chose paths and node ids: running
``pytest 'conformance/test_x.py::test_y[torchrl-a]'`` collects one test, and an entry for
``test_z`` of that file cannot be judged from it. An entry is judged stale only when its test
file was collected and a selection covers every test the entry could match.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path

from conformance.plugin.expectation_file import Entry


def impl_of(nodeid: str, impl_ids: Iterable[str]) -> str | None:
    """The implementation of a node id: its first parameter (``test_x[torchrl-eps=0.3]``)."""
    params = nodeid.partition("[")[2]
    for impl_id in impl_ids:
        if params.startswith((f"{impl_id}-", f"{impl_id}]")):
            return impl_id
    return None


def first_match(entries: Iterable[Entry], nodeid: str, impl_id: str | None) -> Entry | None:
    """The entry that applies to a test: the first, in file order, for its implementation."""
    if impl_id is None:
        return None
    return next((e for e in entries if impl_id in e.impls and nodeid.startswith(e.prefix)), None)


def duplicates(entries: list[Entry]) -> list[str]:
    """An entry written twice (in one file, or in a file and a file it includes)."""
    seen: dict[str, list[Entry]] = {}
    problems = []
    for entry in entries:
        for earlier in seen.get(entry.prefix, []):
            if earlier.impls & entry.impls:
                problems.append(f"{entry.where}: duplicate entry {entry.prefix!r}, "
                                f"already at {earlier.where}")
                break
        seen.setdefault(entry.prefix, []).append(entry)
    return problems


def missing_test_files(entries: Iterable[Entry], rootpath: Path) -> list[str]:
    problems = []
    for entry in entries:
        file_part = entry.prefix.split("::", 1)[0]
        if not (rootpath / file_part).is_file():
            problems.append(f"{entry.where}: no such test file {file_part!r} ({entry.prefix})")
    return problems


def selections_from_args(args: Iterable[str], invocation_dir: Path, rootpath: Path) -> list[str]:
    """The command line's paths and node ids, relative to the rootdir as node ids are.

    ``""`` stands for the whole rootdir; an argument outside it selects nothing judged here.
    """
    selections = []
    root = rootpath.resolve()
    for arg in args:
        path_part, sep, rest = arg.partition("::")
        absolute = (invocation_dir / path_part).resolve()
        try:
            relative = absolute.relative_to(root).as_posix()
        except ValueError:
            continue
        relative = "" if relative == "." else relative
        selections.append(f"{relative}::{rest}" if sep else relative)
    return selections


def covers(selection: str, prefix: str) -> bool:
    """Whether every test that ``prefix`` could match was collected under ``selection``."""
    if "::" in selection:  # a node id: its own parametrizations and nested tests only
        return prefix == selection or prefix.startswith((f"{selection}[", f"{selection}::"))
    file_part = prefix.split("::", 1)[0]
    return selection == "" or file_part == selection or file_part.startswith(f"{selection}/")


def stale(entries: list[Entry], collected: Mapping[str, str | None],
          selections: Iterable[str]) -> list[str]:
    """Entries that match no collected test although all their tests were collected, and
    entries every test of which an earlier entry already took (one line per problem).

    ``collected`` maps each collected node id to its implementation id (None: no implementation
    parameter); ``selections`` are the paths and node ids collected in full.
    """
    selections = list(selections)
    taken: dict[str, Entry] = {}
    for nodeid, impl_id in collected.items():
        entry = first_match(entries, nodeid, impl_id)
        if entry is not None:
            taken[nodeid] = entry
    used = {id(e) for e in taken.values()}
    collected_files = {nodeid.split("::", 1)[0] for nodeid in collected}
    problems = []
    for entry in entries:
        if id(entry) in used:
            continue
        candidates = [n for n, impl in collected.items()
                      if impl in entry.impls and n.startswith(entry.prefix)]
        if candidates:
            problems.append(f"{entry.where}: {entry.prefix!r} applies to no test: "
                            f"{taken[candidates[0]].where} comes first for every test it matches")
        elif entry.prefix.split("::", 1)[0] in collected_files and \
                any(covers(s, entry.prefix) for s in selections):
            problems.append(f"{entry.where}: {entry.prefix!r} matches no collected test of "
                            f"{', '.join(sorted(entry.impls))}: remove or correct the stale entry")
    return problems
