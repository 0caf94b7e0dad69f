"""Chromium for the dashboard's browser test: the system's, driven by Playwright (no download).

Flags keep the browser off the network and off any state of a previous run: a fresh profile
folder each time, no first-run, sync, component or background fetches, no QUIC, no GPU.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile

CANDIDATES = ("/usr/bin/chromium", "/usr/bin/chromium-browser", "/usr/bin/google-chrome")
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync"]


def chromium_path() -> str | None:
    given = os.environ.get("TORCHRL_CONFORMANCE_CHROMIUM")
    if given:
        return given
    return next((p for p in CANDIDATES if os.access(p, os.X_OK)), None) or shutil.which("chromium")


def why_not() -> str | None:
    """Why no browser test can run here, in one line, or None."""
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "playwright is not installed (pip install -e '.[browser]')"
    if chromium_path() is None:
        return "no Chromium here (apt-get install -y chromium, as root)"
    return None


@contextlib.contextmanager
def page(width: int = 1400, height: int = 900):
    """A fresh Chromium page; yields (page, console errors, page errors)."""
    from playwright.sync_api import sync_playwright

    profile = tempfile.mkdtemp(prefix="dashboard-chromium-")
    try:
        with sync_playwright() as p:
            context = p.chromium.launch_persistent_context(
                profile, executable_path=chromium_path(), headless=True, args=FLAGS,
                viewport={"width": width, "height": height}, timeout=60_000)
            try:
                tab = context.pages[0] if context.pages else context.new_page()
                console, errors = [], []
                tab.on("console", lambda m: console.append(m.text) if m.type == "error" else None)
                tab.on("pageerror", lambda e: errors.append(str(e)))
                yield tab, console, errors
            finally:
                context.close()
    finally:
        shutil.rmtree(profile, ignore_errors=True)
