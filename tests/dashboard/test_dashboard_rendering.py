"""What each dashboard page claims, in a real browser (the system's Chromium): labels that do not
overlap or clip, a legend whose lines can be told apart, whole spec names, the newest columns in
view, n/a never coloured as a failure, a change of suite marked as such, links that stay inside
their cells, and per-spec addresses (#spec=...). Expected values come from the results files,
never from the dashboard's code. Screenshots go to build/dashboard/ (CI keeps them)."""

from __future__ import annotations

import json
import re

from conformance.paths import REPORTS
from tests.dashboard import browser
from tests.dashboard.conftest import SHOTS


def _overlap(a: dict, b: dict) -> bool:
    return not (a["x"] + a["width"] <= b["x"] or b["x"] + b["width"] <= a["x"]
                or a["y"] + a["height"] <= b["y"] or b["y"] + b["height"] <= a["y"])


def _boxes(tab, selector: str) -> list[dict]:
    return tab.evaluate(f"Array.from(document.querySelectorAll({selector!r})).map(e => "
                        "{const r = e.getBoundingClientRect(); return {x: r.x, y: r.y, "
                        "width: r.width, height: r.height, text: e.textContent}})")


def test_index_labels_legend_and_suite_changes(site):
    with browser.page(1400, 900) as (tab, console, errors):
        tab.goto((site / "index.html").as_uri())
        tab.wait_for_selector("#spec-table tbody tr")
        tab.screenshot(path=str(SHOTS / "rendering-index.png"))
        assert not console and not errors, (console, errors)
        # tick labels are parallel, rotated 60 degrees: apart by dx * sin(60) across their
        # direction, which must exceed the text's height (font size 10 px)
        ticks = tab.evaluate("Array.from(document.querySelectorAll('svg.timeline text.tick')).map("
                             "e => [e.getCTM().e, e.getBBox().height, e.textContent])")
        assert len(ticks) > 10
        clashes = [(a[2], b[2]) for a, b in zip(ticks, ticks[1:], strict=False)
                   if (b[0] - a[0]) * 0.866 < min(a[1], b[1]) * 0.9]
        assert not clashes, f"timeline labels overlap: {clashes[:5]}"
        styles = tab.evaluate("Array.from(document.querySelectorAll('svg.timeline line')).filter("
                              "l => l.nextElementSibling && l.nextElementSibling.classList.contains("
                              "'legend')).map(l => l.getAttribute('stroke') + '|' + "
                              "l.getAttribute('stroke-dasharray'))")
        assert len(styles) >= 5 and len(set(styles)) == len(styles), f"legend styles repeat: {styles}"
        heat = tab.locator("svg.heatmap").bounding_box()
        for label in _boxes(tab, "svg.heatmap text.col"):
            assert label["y"] >= heat["y"] and label["x"] + label["width"] <= heat["x"] + heat["width"], (
                f"column label {label['text']!r} is clipped")
        columns = _boxes(tab, "svg.heatmap text.col")
        assert not [(a["text"], b["text"]) for a, b in zip(columns, columns[1:], strict=False) if _overlap(a, b)]
        # the newest nightly's suite, against the one before it: a change of suite is marked
        newest = json.loads((REPORTS / "upstream" / "nightly-2026.10.27.json").read_text())
        marks = tab.evaluate("Array.from(document.querySelectorAll('svg.timeline g.suite-change "
                             "text')).map(e => e.textContent)")
        numbers = [tuple(int(n) for n in re.findall(r"\d+", m)) for m in marks]
        assert any(after == len(newest["rows"]) and before != after for before, after in numbers), marks
        assert tab.locator("svg.heatmap g.suite-change").count() >= 1

        # the spec table: whole names, the newest column in view
        cut = tab.evaluate("Array.from(document.querySelectorAll('#spec-table th.spec')).filter("
                           "t => t.scrollWidth > t.clientWidth + 1).map(t => t.textContent)")
        assert not cut, f"spec names cut: {cut[:3]}"
        last = tab.locator("#spec-table thead th").last.bounding_box()
        assert last and last["x"] + last["width"] <= 1400, f"newest column off-screen: {last}"

        # upstream links in the flips table stay whole within their cells (no mid-word wrap)
        wrapped = tab.evaluate("Array.from(document.querySelectorAll('table.flips td a[href^=http]'))"
                               ".filter(a => a.getClientRects().length > 1).map(a => a.href)")
        assert not wrapped, f"links wrapped: {wrapped[:3]}"
        spill = tab.evaluate("Array.from(document.querySelectorAll('table.flips td a[href^=http]')).filter("
                             "a => a.getBoundingClientRect().right > a.closest('td')"
                             ".getBoundingClientRect().right + 1).map(a => a.href)")
        assert not spill, f"links spill out of their cells: {spill[:3]}"


def test_a_spec_has_an_address(site):
    doc = json.loads((REPORTS / "upstream" / "0.14.1.json").read_text())
    nodeid = next(r["nodeid"] for r in doc["rows"]
                  if "test_prioritized_replay_trees.py::" in r["nodeid"] and "[torchrl-" in r["nodeid"])
    spec = nodeid.split("/")[-1].replace("[torchrl-", "[")
    with browser.page(1400, 900) as (tab, console, errors):
        tab.goto((site / "index.html").as_uri() + "#spec=" + spec)
        row = tab.locator(f"#spec-table tr[id='spec={spec}']")
        row.wait_for()
        tab.screenshot(path=str(SHOTS / "rendering-spec-address.png"))
        assert "target" in (row.get_attribute("class") or "")
        assert tab.locator("#area").input_value() == "prioritized_replay"
        box = row.bounding_box()
        assert box and box["y"] + box["height"] > 0 and box["y"] < 900  # in view
        assert not console and not errors, (console, errors)


def test_libraries_n_a_is_grey_never_red(site):
    with browser.page(1400, 900) as (tab, console, errors):
        tab.goto((site / "libraries.html").as_uri())
        tab.wait_for_selector("svg.heatmap")
        tab.screenshot(path=str(SHOTS / "rendering-libraries.png"))
        fills = tab.evaluate("Array.from(document.querySelectorAll('svg.heatmap g.cell')).filter("
                             "g => g.querySelector('text').textContent === 'n/a').map("
                             "g => g.querySelector('rect').getAttribute('fill'))")
        assert fills and set(fills) == {"#e6e6e6"}, set(fills)
        assert not console and not errors, (console, errors)


def test_benchmarks_page_opens(site):
    with browser.page(1400, 900) as (tab, console, errors):
        tab.goto((site / "benchmarks.html").as_uri())
        tab.wait_for_load_state("load")
        tab.screenshot(path=str(SHOTS / "rendering-benchmarks.png"), full_page=True)
        assert tab.locator("#verdict").is_visible()
        assert not console and not errors, (console, errors)


def test_two_verdicts_named_apart(site):
    """The gate's (expectations met) and the user's (the pinned TorchRL's defects, counted here
    from the results file's defect fields)."""
    from conformance.defects import PINNED

    doc = json.loads((REPORTS / "upstream" / f"{PINNED}.json").read_text())
    slugs = {r["defect"] for r in doc["rows"] if r.get("defect")}
    with browser.page(1400, 900) as (tab, console, errors):
        tab.goto((site / "index.html").as_uri())
        assert tab.locator("#verdict").inner_text().startswith(("gate verdict:", "PARTIAL RUN"))
        user = tab.locator("#user-verdict")
        assert user.is_visible()
        assert user.inner_text().startswith(f"your TorchRL: torchrl {PINNED}: {len(slugs)} known defects")
