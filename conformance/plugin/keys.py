"""Where the suite keeps its state on pytest's objects: typed stash keys, no private attributes."""

from __future__ import annotations

import pytest

#: config: the implementations selected for this run (``conformance.implementations.Selected``)
SELECTED = pytest.StashKey[list]()
#: config: the expectations files in use, for the header
EXPECTATION_FILES = pytest.StashKey[list]()
#: item: the expectations entry that makes this test a known failure
EXPECTATION = pytest.StashKey[object]()
#: item: the outcome a skip stands for (``outcomes.NOT_APPLICABLE`` or ``outcomes.UNTESTABLE``)
SKIP_OUTCOME = pytest.StashKey[str]()
#: config: what each selected implementation provides (``survey.Survey`` by implementation id)
SURVEYS = pytest.StashKey[dict]()
#: config (controller): where pytest-xdist workers leave notes on hangs and crashes
NOTES_DIR = pytest.StashKey[object]()
#: config (controller): why the run was partial, once it ended (None: complete)
PARTIAL = pytest.StashKey[object]()
#: item: what the test left changed in the process's global state (``isolation``)
STATE_LEAK = pytest.StashKey[str]()
#: item: a change of global state made while a thread another implementation started was
#: running (``isolation.ThreadOwners``): never blamed on this item's implementation
THREAD_LEAK = pytest.StashKey[str]()
