"""pytest plugin used by ``nox -s upstream`` when a source's C++ trees are missing.

``python -m pytest -p conformance.upstream.replay_gate`` with ``TORCHRL_CONFORMANCE_TREES_PROBLEM``
set makes the prioritized-replay specs of the ``torchrl`` implementation "cannot be tested here:
<reason>", with the runner's reason (no sources, no git repository, no compiler, a failed build,
each naming the option that fixes it) instead of the adapter's generic "does not load" one.
Every other spec runs as usual.
"""

from __future__ import annotations

import os

import pytest

from conformance import outcomes
from conformance.plugin import keys

PROBLEM_ENV = "TORCHRL_CONFORMANCE_TREES_PROBLEM"
AREA_FILE = "test_prioritized_replay.py"
IMPL = "torchrl"


def _gated(item) -> bool:
    if item.nodeid.split("::", 1)[0].rsplit("/", 1)[-1] != AREA_FILE:
        return False
    impl = getattr(getattr(item, "callspec", None), "params", {}).get("impl")
    return impl is not None and getattr(impl, "id", None) == IMPL


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item):
    problem = os.environ.get(PROBLEM_ENV)
    if problem and _gated(item):
        item.stash[keys.SKIP_OUTCOME] = outcomes.UNTESTABLE
        pytest.skip(f"{outcomes.UNTESTABLE_REASON}: {problem}")
