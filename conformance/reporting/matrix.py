"""The conformance matrix: specs down, implementations across, unexpected results first.

Built with pandas from one or more results files (see ``conformance.plugin.results``) into
Markdown (pasteable into a pull request), HTML and CSV, each written atomically.
"""

from __future__ import annotations

import html
import json
from collections.abc import Iterable
from pathlib import Path

import pandas as pd
from packaging.version import InvalidVersion, Version

from conformance import paths
from conformance.areas import NUMBER
from conformance.defects import BUGS_FOLDER
from conformance.files import replace_all
from conformance.outcomes import UNEXPECTED
from conformance.reporting.results_file import upgrade

SYMBOL = {
    "pass": "✅ pass",
    "known failure": "🟡 known failure",
    "fail": "❌ FAIL",
    "error": "❌ ERROR",
    "unexpected pass": "❗ UNEXPECTED PASS",
    "not applicable": "➖ n/a",
    "untestable": "⚪ cannot test here",
    "skipped": "⏭ skipped",
    "not tested": "⛔ NOT TESTED",
}
ORDER = ["not tested", "fail", "error", "unexpected pass", "untestable", "known failure", "not applicable",
         "skipped", "pass"]


CPU = "cpu"


def column_suffix(device: str) -> str:
    """How a column header names the device its results come from: nothing for the CPU (every
    report before devices existed, and every CPU run since), `` · cuda`` for any other."""
    return "" if device == CPU else f" · {device}"


def _run_time(doc: dict) -> float:
    time = doc.get("started", doc.get("finished"))
    return time if isinstance(time, (int, float)) else float("-inf")


def load_rows(paths: Iterable[Path | dict]) -> pd.DataFrame:
    """Rows of results files, or of results documents already in memory (a run builds its
    report from its own rows, never from a file another run may have rewritten meanwhile)."""
    frames = []
    for path in paths:
        doc = path if isinstance(path, dict) else json.loads(Path(path).read_text(encoding="utf-8"))
        doc = upgrade(doc)  # one shape for every schema: reason, link and defect are fields
        frame = pd.DataFrame(doc["rows"])
        if "device" not in frame:  # results written before rows named their device: the CPU's
            frame["device"] = CPU
        frame["device"] = frame["device"].fillna(CPU)
        frame["column"] = (frame["implementation"] + " " + frame["implementation_version"]
                           + frame["device"].map(column_suffix))
        frame["partial"] = doc.get("partial") or ""
        if doc.get("suite"):  # results written before they named the suite's release have none
            frame["suite"] = doc["suite"]
        if "expected" not in frame:  # results written before rows said so themselves
            frame["expected"] = ~frame["outcome"].isin(list(UNEXPECTED))
        frame["expected"] = [v is True or v == 1 for v in frame["expected"]]
        if "reruns" not in frame:
            frame["reruns"] = 0
        frames.append((_run_time(doc), frame))
    # runs in the order they ran (stable: files without a time keep the argument order)
    frames.sort(key=lambda pair: pair[0])
    rows = pd.concat([frame for _, frame in frames], ignore_index=True)
    # a later run of the same test x implementation replaces an earlier one
    return rows.drop_duplicates(subset=["nodeid", "column"], keep="last")


def build_matrix(rows: pd.DataFrame) -> pd.DataFrame:
    rows = rows.assign(
        test=rows["area"] + " :: " + rows["spec"]
        + rows["parameters"].map(lambda p: f"[{p}]" if p else "")
    )
    matrix = rows.pivot_table(index="test", columns="column", values="outcome", aggfunc="first")
    matrix = matrix[_column_order(rows)]
    flagged = rows[~rows["expected"]]["test"].unique()
    unexpected = matrix.index.isin(flagged)
    rank = matrix.apply(lambda col: col.map(lambda o: ORDER.index(o) if o in ORDER else 99)).min(axis=1)
    area = matrix.index.map(lambda test: NUMBER.get(test.split(" :: ")[0], 99))
    matrix = matrix.assign(_u=~unexpected, _r=rank, _a=area).sort_values(["_u", "_r", "_a", "test"])
    return matrix.drop(columns=["_u", "_r", "_a"])


def _column_order(rows: pd.DataFrame) -> list[str]:
    """Implementations in the order they first ran; the versions of one implementation oldest
    first (per-source CI jobs finish in any order, the version matrix reads left to right)."""
    pairs = rows[["implementation", "implementation_version", "column"]].drop_duplicates("column")
    first = {impl: i for i, impl in enumerate(dict.fromkeys(pairs["implementation"]))}

    def key(pair):
        impl, version, _ = pair
        try:
            parsed = (0, Version(version))
        except InvalidVersion:
            parsed = (1, Version("0"))
        return first[impl], parsed, version

    return [column for _, _, column in sorted(pairs.itertuples(index=False, name=None), key=key)]


def summary(rows: pd.DataFrame) -> pd.DataFrame:
    table = rows.pivot_table(index="column", columns="outcome", values="nodeid", aggfunc="count",
                             fill_value=0)
    table = table.loc[_column_order(rows)]
    return table[[o for o in ORDER if o in table.columns]]


def _untestable(rows: pd.DataFrame) -> list[str]:
    """Why specs could not be tested, once per implementation and reason."""
    out = []
    bad = rows[rows["outcome"] == "untestable"]
    for (column, message), group in bad.groupby(["column", "message"], sort=False):
        out.append(f"- {md(column)}: {len(group)} spec(s) — {md(message.splitlines()[0][:300])}")
    return out


def _not_applicable(rows: pd.DataFrame) -> list[str]:
    """Why specs do not apply (an absent area, or the implementation's own declaration), once
    per implementation and reason: never a pass, so the report says what each one stands for."""
    out = []
    na = rows[rows["outcome"] == "not applicable"]
    for (column, message), group in na.groupby(["column", "message"], sort=False):
        out.append(f"- {md(column)}: {len(group)} spec(s) — {md(message.splitlines()[0][:400])}")
    return out


def md(text) -> str:
    """Text from a row as a Markdown cell or line: no raw HTML (the job summary renders it),
    no table break (``|``), no code span, one line."""
    text = html.escape(str(text), quote=False).replace("|", "\\|").replace("`", "\\`")
    return " ".join(text.splitlines())


def code(text) -> str:
    """A node id as inline code: a backtick in it cannot end the span."""
    return "`" + " ".join(str(text).replace("`", "'").splitlines()) + "`"


def _markdown_table(frame: pd.DataFrame, index_name: str) -> str:
    headers = [index_name, *map(md, map(str, frame.columns))]
    lines = ["| " + " | ".join(headers) + " |", "|" + "---|" * len(headers)]
    for index, row in frame.iterrows():
        cells = [md(str(index))]
        cells += [SYMBOL.get(v, "" if pd.isna(v) else md(str(v))) for v in row]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def _failures(rows: pd.DataFrame) -> list[str]:
    bad = rows[~rows["expected"]]
    out = []
    for _, r in bad.sort_values(["column", "nodeid"]).iterrows():
        first = (r["message"] or "").splitlines()[0] if r["message"] else ""  # whole: links too
        out.append(f"- {code(r['nodeid'])} ({md(r['column'])}): **{md(r['outcome'])}** — "
                   f"{md(first)}")
    return out


def _reruns(rows: pd.DataFrame) -> list[str]:
    """Tests that needed reruns (pytest-rerunfailures): a pass after a failure is not clean."""
    again = rows[rows["reruns"] > 0]
    return [f"- `{r['nodeid']}` ({r['column']}): {r['outcome']} after {int(r['reruns'])} rerun(s)"
            for _, r in again.sort_values(["column", "nodeid"]).iterrows()]


def _reproducers(rows: pd.DataFrame, out_dir: Path | None) -> list[str]:
    """TorchRL's known failures, grouped by the upstream bug reproducer that shows each one (the
    catalogued defect is a field of the row: ``conformance.defects``)."""
    if "defect" not in rows:
        return []
    failing = rows[(rows["implementation"] == "torchrl") & (rows["outcome"] == "known failure")]
    by_file: dict[tuple[str, str], list[str]] = {}
    for _, r in failing.sort_values("nodeid").iterrows():
        if isinstance(r["defect"], str) and r["defect"]:
            by_file.setdefault((f"{r['defect']}.py", r["column"]), []).append(
                r["nodeid"].split("::", 1)[1])
    out = []
    for (name, column), specs in sorted(by_file.items()):
        # relative in a checkout; from an installed wheel (no reports/ there), the suite's release
        link = paths.link(f"{BUGS_FOLDER}/{name}", out_dir)
        out.append(f"- [{name}]({link}) ({column}, {len(specs)}): " + ", ".join(f"`{s}`" for s in specs))
    return out


def verdict_line(rows: pd.DataFrame) -> str:
    """The report's verdict, in Markdown: from the rows' ``expected`` field and their partial mark."""
    n_unexpected = int((~rows["expected"]).sum())
    verdict = (
        "**verdict: conformant to expectations** (no unexpected result)"
        if n_unexpected == 0
        else f"**verdict: {n_unexpected} unexpected result(s)**"
    )
    partial = sorted({p for p in rows["partial"] if p})
    if partial:
        verdict = ("**PARTIAL RUN — not a conformance verdict** (" + md("; ".join(partial)) + "); "
                   + verdict.removeprefix("**verdict: ").replace("**", "", 1))
    return verdict


def render_markdown(rows: pd.DataFrame, title: str = "TorchRL conformance",
                    preface: list[str] | None = None, out_dir: Path | None = None) -> str:
    matrix = build_matrix(rows)
    counts = summary(rows)
    verdict = verdict_line(rows)
    from conformance.reporting.verdict import user_verdict

    user = user_verdict(_records(rows))
    if user:
        verdict += f"\n\n**your TorchRL:** {md(user)}"
    parts = [f"## {title}", "", verdict, "", *(preface or []), "" if preface else None,
             _markdown_table(counts, "implementation"), ""]
    parts = [p for p in parts if p is not None]
    failures = _failures(rows)
    if failures:
        parts += ["### Unexpected results", "", *failures, ""]
    reruns = _reruns(rows)
    if reruns:
        parts += ["### Reruns", "", *reruns, ""]
    untestable = _untestable(rows)
    if untestable:
        parts += ["### Cannot be tested here", "", *untestable, ""]
    not_applicable = _not_applicable(rows)
    if not_applicable:
        parts += ["### Not applicable", "", *not_applicable, ""]
    reproducers = _reproducers(rows, out_dir)
    if reproducers:
        parts += ["### TorchRL's known failures: standalone reproducers to file upstream", "",
                  *reproducers, ""]
    parts += ["### Matrix (unexpected results first)", "", _markdown_table(matrix, "spec"), ""]
    suites = _suites(rows)
    if suites:
        parts += [f"Suite: torchrl-conformance {suites} (its changes: CHANGELOG.md)", ""]
    return "\n".join(parts)


#: the HTML report's statuses: words, never an emoji (they render as empty boxes where no emoji
#: font is installed), each with a class for its colour
WORD = {
    "pass": "pass", "known failure": "known failure", "fail": "FAIL", "error": "ERROR",
    "unexpected pass": "UNEXPECTED PASS", "not applicable": "n/a", "untestable": "cannot test here",
    "skipped": "skipped", "not tested": "NOT TESTED",
}
_HTML_STYLE = (
    "body{font-family:sans-serif}table{border-collapse:collapse}"
    "td,th{border:1px solid #ccc;padding:2px 6px;font-size:13px}"
    ".verdict{padding:6px 10px;border-left:8px solid #1a7f37;background:#e9f6ec;font-size:15px}"
    ".verdict.bad{border-color:#c0392b;background:#fbeaea}"
    ".s-pass{background:#cdeccf}.s-known{background:#fbe7a6}.s-bad{background:#f4b4b4;font-weight:700}"
    ".s-na{background:#eee;color:#555}.s-cannot{background:#d9e3f5}"
    ".user{padding:6px 10px;border-left:8px solid #b7791f;background:#fdf6e3;font-size:15px}"
    "details{display:inline}summary{cursor:pointer}pre{white-space:pre-wrap;"
    "overflow-wrap:anywhere;background:#f6f6f6;padding:4px}td a{white-space:nowrap}"
    ".listed{color:#555}"
)
_CLASS = {"pass": "s-pass", "known failure": "s-known", "fail": "s-bad", "error": "s-bad",
          "unexpected pass": "s-bad", "not tested": "s-bad", "not applicable": "s-na",
          "skipped": "s-na", "untestable": "s-cannot"}


def _html_table(frame: pd.DataFrame, index_name: str, words: bool) -> str:
    head = "".join(f"<th>{html.escape(str(c))}</th>" for c in [index_name, *frame.columns])
    body = []
    for index, row in frame.iterrows():
        cells = [f"<th style='text-align:left'>{html.escape(str(index))}</th>"]
        for value in row:
            if pd.isna(value):
                cells.append("<td></td>")
            elif words:
                cells.append(f"<td class='{_CLASS.get(value, '')}'>{html.escape(WORD.get(value, str(value)))}</td>")
            else:
                cells.append(f"<td>{html.escape(str(value))}</td>")
        body.append("<tr>" + "".join(cells) + "</tr>")
    return f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>"


def _suites(rows: pd.DataFrame) -> str:
    """The suite release(s) that wrote the rows, when their results say."""
    if "suite" not in rows:
        return ""
    return ", ".join(sorted({str(s) for s in rows["suite"] if isinstance(s, str) and s}))


def render_html(rows: pd.DataFrame, title: str = "TorchRL conformance") -> str:
    """The matrix as one HTML page: the two verdicts first, statuses as words (no emoji font
    needed), TorchRL's known defects with their upstream threads and reproducers, then every
    message whole behind a fold (``conformance.reporting.html_parts``: escaped by construction)."""
    from conformance.reporting import html_parts as H

    matrix = build_matrix(rows)
    counts = summary(rows)
    records = _records(rows)
    return (
        f"<!doctype html><html><head><meta charset='utf-8'><title>{html.escape(title)}</title>"
        f"<style>{_HTML_STYLE}</style></head><body><h1>{html.escape(title)}</h1>"
        + H.verdicts(records)
        + (f"<p>Suite: torchrl-conformance {html.escape(_suites(rows))}</p>" if _suites(rows) else "")
        + f"{_html_table(counts, 'implementation', words=False)}"
        + H.defects(records)
        + f"<h2>Matrix (unexpected results first)</h2>{_html_table(matrix, 'spec', words=True)}"
        "<h2>Messages</h2><ul>"
        + "".join(
            f"<li id='spec={H.text(r['nodeid'])}'><code>{H.text(r['nodeid'])}</code> "
            f"({H.text(H.V._label(r))}): {H.text(WORD.get(r['outcome'], r['outcome']))}"
            f"{H.message(r)}</li>"
            for r in records if r["outcome"] != "pass"
        )
        + "</ul></body></html>"
    )


def _records(rows: pd.DataFrame) -> list[dict]:
    """The rows as plain dicts (NaN as None), for the parts that read fields."""
    frame = rows.astype(object).where(rows.notna(), None)
    return frame.to_dict("records")


def render_reports(results: Iterable[Path | dict], out_dir: Path, stem: str = "conformance",
                   title: str = "TorchRL conformance",
                   preface: list[str] | None = None) -> dict[Path, str]:
    """The report files' paths and texts (Markdown, HTML, CSV), nothing written yet."""
    rows = load_rows(results)
    out_dir = Path(out_dir)
    return {out_dir / f"{stem}.md": render_markdown(rows, title, preface, out_dir),
            out_dir / f"{stem}.html": render_html(rows, title),
            out_dir / f"{stem}.csv": rows.drop(columns=["column"]).to_csv(index=False)}


def write_reports(results: Iterable[Path | dict], out_dir: Path, stem: str = "conformance",
                  title: str = "TorchRL conformance", preface: list[str] | None = None) -> list[Path]:
    """Render and write the reports: all of them replaced, or none."""
    texts = render_reports(results, out_dir, stem, title, preface)
    replace_all(texts)
    return list(texts)
