"""The dashboard in a real browser: the system's Chromium, driven by Playwright (no download).

Built from the checked-in results (reports/upstream, reports/history, libraries, benchmarks),
opened from file:// at 1400x900: no console error, the verdict, the heat map and the timeline
in the first screen, the area filter and the diff view answering what the results files say
(counted here from the raw rows, not by the dashboard's code). Screenshots are kept in
build/dashboard/ (CI keeps them as an artifact).
"""

from __future__ import annotations

import json
import re

from conformance.paths import REPORTS, ROOT
from tests.dashboard import browser
from tests.dashboard.conftest import SHOTS

EMOJI = re.compile("[\u2600-\u27bf\U0001f300-\U0001faff\u2b50\u2b55\u23e9-\u23fa]")


def _raw(label: str) -> dict[str, str]:
    """spec -> outcome of one column, straight from its results file."""
    doc = json.loads((REPORTS / "upstream" / f"{label}.json").read_text(encoding="utf-8"))
    return {re.sub(r"\[torchrl-?", "[", r["nodeid"]).replace("[]", ""): r["outcome"] for r in doc["rows"]}




def test_dashboard_in_chromium(site):
    SHOTS.mkdir(parents=True, exist_ok=True)
    with browser.page(1400, 900) as (tab, console, errors):
        tab.goto((site / "index.html").as_uri())
        tab.wait_for_selector("#spec-table tbody tr")
        tab.screenshot(path=str(SHOTS / "index.png"))
        assert not console and not errors, f"console errors: {console}; page errors: {errors}"

        verdict = tab.locator("#verdict")
        assert verdict.is_visible()
        assert verdict.inner_text().startswith(("gate verdict:", "PARTIAL RUN")), verdict.inner_text()
        for selector in ("#verdict", "svg.heatmap", "svg.timeline"):
            box = tab.locator(selector).bounding_box()
            assert box and box["y"] >= 0 and box["y"] + box["height"] <= 900, (
                f"{selector} is not within the first 1400x900 screen: {box}")
        assert not EMOJI.search(tab.locator("body").inner_text()), "an emoji in the page's text"

        # the area filter: only that area's specs, as many as the results files hold
        tab.select_option("#area", "prioritized_replay")
        specs = tab.locator("#spec-table tbody th.spec").all_inner_texts()
        # the area's every spec file (its family apart), as the heat map's row counts them
        def of_area(key):
            name = key.split("/")[-1].split("::")[0]
            return name.startswith("test_prioritized_replay") and not name.endswith("_family.py")

        assert specs and all(of_area(s) for s in specs), specs[:3]
        assert {s.split("::")[0] for s in specs} > {"test_prioritized_replay.py"}, "one file only"
        in_files = set()
        for path in (REPORTS / "upstream").glob("*.json"):
            in_files |= {k.split("/")[-1] for k in _raw(path.stem) if of_area(k)}
        history = ROOT / "reports" / "history"
        for path in history.glob("*.json"):
            cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
            in_files |= {re.sub(r"\[torchrl-?", "[", k).replace("[]", "").split("/")[-1]
                         for k in cells if of_area(k)}
        assert sorted(specs) == sorted(in_files)
        tab.check("#changing")
        assert tab.locator("#spec-table tbody tr").count() < len(specs)

        # the diff view: 0.13.3 against 0.14.1, counted from the raw rows
        a, b = _raw("0.13.3"), _raw("0.14.1")
        differ = sum(a.get(k) != b.get(k) for k in set(a) | set(b))
        labels = tab.locator("#diff-a option").all_inner_texts()
        tab.select_option("#diff-a", index=next(i for i, t in enumerate(labels) if t.startswith("0.13.3 ")))
        tab.select_option("#diff-b", index=next(i for i, t in enumerate(labels) if t.startswith("0.14.1 ")))
        assert tab.locator("#diff-table tbody tr").count() == differ > 0
        assert tab.locator("#diff-count").inner_text().startswith(f"{differ} spec(s) differ")
        tab.locator("#diff-section").scroll_into_view_if_needed()
        tab.screenshot(path=str(SHOTS / "diff.png"))

        # a flip's button puts its two sources in the diff, which then lists its specs
        button = tab.locator("button.show-diff").last
        a, b = button.get_attribute("data-a"), button.get_attribute("data-b")
        button.click()
        assert tab.locator("#diff-a option:checked").inner_text().startswith(a + " ")
        assert tab.locator("#diff-b option:checked").inner_text().startswith(b + " ")
        listed = button.locator("xpath=ancestor::tr").locator("details li").count()
        assert tab.locator("#diff-table tbody tr").count() == listed > 0

        for page in ("libraries", "benchmarks"):
            tab.goto((site / f"{page}.html").as_uri())
            tab.wait_for_load_state("load")
            tab.screenshot(path=str(SHOTS / f"{page}.png"))
            assert tab.locator("#verdict").is_visible()
            broken = tab.evaluate("Array.from(document.images).filter(i => !(i.complete && i.naturalWidth > 0)).map(i => i.src)")
            assert not broken, f"{page}.html: images that did not load from file://: {broken[:3]}"
        assert not console and not errors, f"console errors: {console}; page errors: {errors}"
