"""The matrix's Markdown carries no raw HTML from a row."""

from __future__ import annotations

from tests.rows import SPECS
from tests.rows import spec_row as _row


def test_markdown_carries_no_raw_html_from_a_row(tmp_path):
    from conformance.reporting.matrix import render_reports

    rows = [_row(SPECS[0], outcome="fail", message="<img src=x onerror=alert(1)> | `x`")]
    document = {"schema": 1, "started": 1.0, "finished": 2.0, "partial": None, "rows": rows}
    md = render_reports([document], tmp_path)[tmp_path / "conformance.md"]
    assert "<img" not in md and "&lt;img src=x onerror=alert(1)&gt; \\| \\`x\\`" in md
