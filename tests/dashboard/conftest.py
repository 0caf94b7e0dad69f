"""The site the browser tests look at: built once per session from the committed reports."""

from __future__ import annotations

import pytest

from conformance.paths import REPORTS, ROOT
from tests.dashboard import browser

#: screenshots the browser tests keep (CI's artifacts; ignored by git under build/)
SHOTS = ROOT / "build" / "dashboard"


@pytest.fixture(scope="session")
def site(tmp_path_factory):
    reason = browser.why_not()
    if reason:
        pytest.skip(reason)
    from conformance.dashboard.build import build

    out = tmp_path_factory.mktemp("dashboard") / "site"
    build(REPORTS, out)
    SHOTS.mkdir(parents=True, exist_ok=True)
    return out
