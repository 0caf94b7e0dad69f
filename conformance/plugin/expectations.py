"""Known failures and expected "cannot be tested here" cells of an implementation.

File format (``conformance.plugin.expectation_file`` has the details), one entry a line::

    <test-id prefix> | <reason> | <upstream link>
    untestable: <test-id prefix> | <reason> | <upstream link>
    include torchrl.txt for 0.9.2

A prefix matches every test whose node id starts with it, for the implementations the file is
bound to (``--expectations FILE`` binds to every selected implementation, ``--expectations
torchrl=FILE`` to one; ``conformance/expectations/torchrl-<version>.txt`` binds to ``torchrl``
automatically). A plain entry is a known failure, a strict expected failure: a matched test that
fails is a known failure, one that passes fails the run (the entry is stale). An ``untestable:``
entry marks its tests as expected to be "cannot be tested here" (no xfail mark; the results
plugin reads the entry from the item). Entries shared by several releases live once in
``torchrl.txt``, in version blocks, taken in by each release's ``include torchrl.txt for <v>``.

Strictness: an entry that matches no test although its tests were collected, an entry that an
earlier one shadows, a duplicate, or an entry naming a test file that does not exist is an
error: an expectation must never silently stop applying.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from conformance.plugin import keys, staleness
from conformance.plugin.expectation_file import (  # noqa: F401 - the names conftest uses
    FAIL,
    SUITE_EXPECTATIONS,
    UNTESTABLE,
    Entry,
    ExpectationsError,
    capped,
    parse,
)
from conformance.shipped import auto_file  # noqa: F401 - the name the plug-in and tests use

EXPECTATIONS_DIR = SUITE_EXPECTATIONS


def item_impl(item) -> str | None:
    impl = getattr(getattr(item, "callspec", None), "params", {}).get("impl")
    return getattr(impl, "id", None)


def apply(item, entry: Entry) -> None:
    """Carry the entry on the item; a known failure also becomes a strict expected failure."""
    item.stash[keys.EXPECTATION] = entry
    if entry.kind == FAIL:
        item.add_marker(pytest.mark.xfail(
            strict=True, reason=f"known failure: {entry.reason} ({entry.link})"))


def raise_problems(problems: list[str]) -> None:
    if problems:
        raise ExpectationsError("\n".join(["expectations do not match the suite:",
                                           *capped(problems)]))


class ExpectationsPlugin:
    """Marks expected results at collection and checks that every entry still applies."""

    def __init__(self, entries: list[Entry], rootpath: Path,
                 report_stale: Callable[[list[str]], None] = raise_problems):
        # static problems first, before anything is collected
        raise_problems(staleness.duplicates(entries)
                       + staleness.missing_test_files(entries, rootpath))
        self.entries = entries
        self.rootpath = rootpath
        # a pytest-xdist worker cannot raise a usage error from collection (xdist turns it into
        # an INTERNALERROR): it hands the problems to the controller instead
        self.report_stale = report_stale

    @pytest.hookimpl(tryfirst=True)  # before -k/-m/--deselect: they filter what runs, not what exists
    def pytest_collection_modifyitems(self, session, config, items):
        collected = {}
        for item in items:
            impl_id = item_impl(item)
            collected[item.nodeid] = impl_id
            entry = staleness.first_match(self.entries, item.nodeid, impl_id)
            if entry is not None:
                apply(item, entry)
        selections = staleness.selections_from_args(
            config.args, Path(config.invocation_params.dir), self.rootpath)
        self.report_stale(staleness.stale(self.entries, collected, selections))
