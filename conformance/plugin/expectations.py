"""Known failures of an implementation, as strict expected failures.

File format, one entry a line (``#`` starts a comment line)::

    <test-id prefix> | <reason> | <upstream link>

A prefix matches every test whose node id starts with it, for the implementations the file is
bound to (``--expectations FILE`` binds to every selected implementation, ``--expectations
torchrl=FILE`` to one; ``conformance/expectations/torchrl-<version>.txt`` binds to ``torchrl``
automatically). A matched test that fails is a known failure; one that passes fails the run
(the entry is stale). An entry that matches no collected test of its file, or names a file
that does not exist, is an error: an expectation must never silently stop applying.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import pytest

from conformance.plugin import keys

EXPECTATIONS_DIR = Path(__file__).resolve().parent.parent / "expectations"


class ExpectationsError(pytest.UsageError):
    pass


@dataclass
class Entry:
    prefix: str
    reason: str
    link: str
    source: str  # "file:line", for error messages
    impls: frozenset[str]
    matched: int = field(default=0)


def parse(path: Path, impls: frozenset[str]) -> list[Entry]:
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ExpectationsError(f"cannot read expectations file {path}: {exc.strerror}") from None
    entries = []
    for number, line in enumerate(text.splitlines(), 1):
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        parts = [p.strip() for p in stripped.split("|")]
        where = f"{path}:{number}"
        if len(parts) != 3 or not all(parts):
            raise ExpectationsError(
                f"{where}: expected '<test-id prefix> | <reason> | <upstream link>', got {stripped!r}"
            )
        prefix, reason, link = parts
        if not link.startswith(("http://", "https://")):
            raise ExpectationsError(f"{where}: the third field must be an upstream link, got {link!r}")
        if "::" not in prefix and not prefix.endswith(".py"):
            raise ExpectationsError(f"{where}: {prefix!r} is not a test id prefix (path.py::test...)")
        entries.append(Entry(prefix, reason, link, where, impls))
    return entries


def auto_file(impl_id: str, version: str) -> Path | None:
    path = EXPECTATIONS_DIR / f"{impl_id}-{version}.txt"
    return path if path.is_file() else None


class ExpectationsPlugin:
    """Marks expected failures at collection and checks that every entry still applies."""

    def __init__(self, entries: list[Entry], rootpath: Path):
        self.entries = entries
        self.rootpath = rootpath

    @pytest.hookimpl(tryfirst=True)  # before -k/-m deselection: staleness is judged on all tests
    def pytest_collection_modifyitems(self, session, config, items):
        collected_files = {item.nodeid.split("::", 1)[0] for item in items}
        for item in items:
            impl = getattr(getattr(item, "callspec", None), "params", {}).get("impl")
            impl_id = getattr(impl, "id", None)
            for entry in self.entries:
                if impl_id in entry.impls and item.nodeid.startswith(entry.prefix):
                    entry.matched += 1
                    item.stash[keys.EXPECTATION] = entry
                    item.add_marker(
                        pytest.mark.xfail(
                            strict=True, reason=f"known failure: {entry.reason} ({entry.link})"
                        )
                    )
                    break
        problems = []
        for entry in self.entries:
            file_part = entry.prefix.split("::", 1)[0]
            if not (self.rootpath / file_part).is_file():
                problems.append(f"{entry.source}: no such test file {file_part!r} ({entry.prefix})")
            elif entry.matched == 0 and file_part in collected_files:
                problems.append(
                    f"{entry.source}: {entry.prefix!r} matches no collected test of "
                    f"{', '.join(sorted(entry.impls))}: remove or correct the stale entry"
                )
        if problems:
            raise ExpectationsError("\n".join(["expectations do not match the suite:", *problems]))
