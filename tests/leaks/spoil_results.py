"""A pytest plug-in that makes writing the results fail after the specs ran (issue #22, item 6):
at the end of the run it puts a directory where the CSV report goes, so that the last file of
the set cannot be replaced. ``-p tests.leaks.spoil_results``."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.hookimpl(tryfirst=True)
def pytest_sessionfinish(session):
    results = Path(session.config.getoption("results"))
    csv = results.with_suffix(".csv")
    csv.unlink(missing_ok=True)
    csv.mkdir()
