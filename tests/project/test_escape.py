"""Output that cannot run (issue #44, item 4): one escape rule (conformance/escape.py) for every
value of the pages, links only http(s); markup fed through every field the site shows.

As tried: a cached bisect answer whose ``pull_request`` held markup, and a benchmark report's
image alt text or ``javascript:`` link, ran on load of the Pages site. Commit subjects and PR
fields come from upstream's history, which anyone can write into."""

from __future__ import annotations

import json
from html.parser import HTMLParser
from pathlib import Path

import pytest

from conformance import escape, history
from conformance.dashboard.build import build
from conformance.dashboard.markdown import to_html
from conformance.upstream import report
from tests.manifest_rows import complete_rows as _complete_rows

#: what an attacker writes into a field; each must come out as text
MARKUP = [
    "<script>alert(1)</script>",
    "x' onerror='alert(1)",
    'x" onmouseover="alert(1)',
    "<img src=x onerror=alert(1)>",
    "</title><script>alert(1)</script>",
    "<svg onload=alert(1)>",
]
#: link targets that must never stay links
BAD_URLS = ["javascript:alert(1)", "JaVaScRiPt:alert(1)", " javascript:alert(1)",
            "java\tscript:alert(1)", "\x01javascript:alert(1)", "&#106;avascript:alert(1)",
            "data:text/html,<script>alert(1)</script>", "vbscript:msgbox(1)",
            "javascript&colon;alert(1)", "\\\\evil.example/x"]
GOOD_URLS = ["https://github.com/pytorch/rl/pull/1", "http://example.org/a?b=1&c=2",
             "upstream.md", "#spec=x", "bugs/a.md"]


@pytest.mark.parametrize("value", MARKUP)
def test_text_leaves_no_markup_and_no_way_out_of_an_attribute(value):
    out = escape.text(value)
    assert not any(c in out for c in "<>\"'"), out


@pytest.mark.parametrize("value", BAD_URLS)
def test_a_link_that_could_run_becomes_a_dead_anchor(value):
    assert escape.url(value) == "#"
    assert escape.link(value, "x") == "<a href='#'>x</a>"


@pytest.mark.parametrize("value", GOOD_URLS)
def test_http_and_relative_links_stay(value):
    assert escape.url(value) == escape.text(value)


class _Page(HTMLParser):
    """Every element of a page with its attributes, and the text of its script elements."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict]] = []

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, {k: v or "" for k, v in attrs}))

    handle_startendtag = handle_starttag


def _problems(html_text: str) -> list[str]:
    page = _Page()
    page.feed(html_text)
    found = []
    for tag, attrs in page.tags:
        for name, value in attrs.items():
            if name.startswith("on"):
                found.append(f"<{tag} {name}=...>")
            if name in ("href", "src", "action", "formaction", "xlink:href") and \
                    escape.url(value) == "#" and value != "#":
                found.append(f"<{tag} {name}={value!r}>")
        if tag == "script" and not attrs.get("src", "").startswith(("assets/", "data/")):
            found.append(f"<script {attrs}>")
        if tag in ("iframe", "object", "embed", "base", "meta") and tag != "meta":
            found.append(f"<{tag}>")
    return found


def test_markdown_reports_carry_no_runnable_markup():
    md = "\n".join(["## Benchmarks", "", *(f"- ![{m}](plot.png) [{m}](https://e.org)" for m in MARKUP),
                    *(f"- [click]({u.strip()})" for u in BAD_URLS if " " not in u.strip()),
                    "", "| a | b |", "|---|---|", f"| {MARKUP[0]} | {MARKUP[1]} |"])
    out = to_html(md, link=lambda target: target)
    assert _problems(out) == [], out
    assert "&lt;script&gt;" in out


def _hostile_reports(tmp_path: Path) -> Path:
    """A reports folder in which every field the site shows holds markup."""
    reports = tmp_path / "reports"
    evil = " ".join(MARKUP)
    for label, flip in (("nightly-2026.7.8", False), ("nightly-2026.7.9", True)):
        rows = _complete_rows(version=label)
        rows[0].update(outcome="fail" if flip else "pass", expected=not flip,
                       message=f"AssertionError: {evil}" if flip else "")
        rows[1].update(outcome="known failure",
                       message=f"{evil}  [known failure: {evil} (javascript:alert(1))]")
        path = reports / "upstream" / f"{label}.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        started = 1_790_000_000.0 + (86400 if flip else 0)
        path.write_text(json.dumps({"schema": 1, "started": started, "finished": started + 1,
                                    "partial": None, "rows": rows,
                                    "implementations": {"torchrl": label},
                                    "stack": {"torch": evil}}))
        source = {"label": label, "argument": evil, "status": evil, "torch": evil,
                  "tensordict": evil, "trees": evil, "trees_problem": evil, "outcomes": evil}
        report.write_record(path, source)
        history.record(path, source, reports / "history", commit=evil)
    bisect = reports / "history" / "bisect"
    bisect.mkdir(parents=True)
    (bisect / "nightly-2026.7.9.json").write_text(json.dumps({
        "culprit": {"sha": "1234567890ab" + MARKUP[0], "subject": evil,
                    "pull_request": "1'><script>alert(1)</script>"},
        "specs": {"s": {"before": evil, "after": evil}}, "steps": [{}, {}], "seconds": 60}))
    (reports / "benchmarks.md").write_text(
        "## Benchmarks\n\n" + "\n".join(f"- ![{m}](benchmarks/a.png) [{m}](javascript:alert(1))"
                                        for m in MARKUP) + "\n", encoding="utf-8")
    return reports


def test_every_page_of_the_site_carries_no_runnable_markup(tmp_path):
    reports = _hostile_reports(tmp_path)
    build(reports, tmp_path / "site")
    pages = sorted((tmp_path / "site").rglob("*.html"))
    assert {p.name for p in pages} >= {"index.html", "benchmarks.html", "libraries.html"}
    shown = 0
    for page in pages:
        text = page.read_text(encoding="utf-8")
        assert _problems(text) == [], (page.name, _problems(text)[:5])
        shown += text.count("&lt;script&gt;")
    assert shown, "the markup was shown as text somewhere (else the fields were not fed)"
    # the data scripts hold the values as JSON strings, never a way out of the script
    for script in (tmp_path / "site" / "data").glob("*.js"):
        assert "</script" not in script.read_text(encoding="utf-8").lower()


def test_the_conformance_report_html_carries_no_runnable_markup(tmp_path):
    from conformance.reporting.matrix import render_reports

    evil = " ".join(MARKUP)
    rows = _complete_rows(version=evil)
    rows[0].update(outcome="fail", expected=False, message=evil)
    document = {"schema": 1, "suite": evil, "started": 1.0, "finished": 2.0, "exitstatus": 1,
                "partial": evil, "python": evil, "stack": {"torch": evil},
                "implementations": {"torchrl": evil}, "device": evil, "rows": rows}
    texts = render_reports([document], tmp_path, stem="conformance")
    (page,) = [text for path, text in texts.items() if str(path).endswith(".html")]
    assert _problems(page) == [], _problems(page)[:5]
    assert "&lt;script&gt;" in page
