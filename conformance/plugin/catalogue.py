"""Which catalogued TorchRL defect (``conformance.defects``) a known failure shows, for its row.

The pinned release's expectations file is read once: a known failure of TorchRL is its defect's
when its test's entry there is the defect's and has the reason and link of the entry it matched.
A catalogue that disagrees with the file tags nothing (``python -m conformance.upstream.bugs
--check`` names the problem); the run's verdict never depends on it.
"""

from __future__ import annotations

import functools

from conformance import defects
from conformance.plugin.expectation_file import SUITE_EXPECTATIONS, ExpectationsError, parse

PINNED_FILE = SUITE_EXPECTATIONS / f"torchrl-{defects.PINNED}.txt"


def pinned_entries() -> list:
    """The pinned release's entries (its own lines and the shared ones it includes); raises
    ExpectationsError (one line) when the file is unusable."""
    return parse(PINNED_FILE, frozenset({"torchrl"}))


@functools.cache
def _pinned() -> tuple[list, dict] | None:
    try:
        entries = pinned_entries()
        return entries, defects.owners(entries)
    except (ExpectationsError, defects.CatalogueError):
        return None


def defect_slug(nodeid: str, implementation: str, reason: str | None,
                link: str | None) -> str | None:
    """The slug of the defect a known failure of ``implementation`` shows, or None."""
    pinned = _pinned() if implementation == "torchrl" else None
    defect = defects.defect_for(nodeid, reason, link, *pinned) if pinned else None
    return defect.slug if defect else None
