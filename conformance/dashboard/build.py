"""Build the static site: ``index.html`` (upstream matrix + history), ``libraries.html``,
``benchmarks.html``, their data as ``data/*.js`` (a script, so pages work from ``file://``, where a
browser refuses to fetch JSON) and ``data/*.json`` (the same, for other tools), one stylesheet and
one script of our own, the upstream bug reproducers and the benchmark plots. No CDN, no build chain.
"""

from __future__ import annotations

import csv
import datetime
import json
import shutil
import tempfile
import time
from collections import Counter
from html import escape
from pathlib import Path

from conformance import outcomes, record
from conformance.areas import AREAS
from conformance.dashboard import asv_history, flips, markdown, svg
from conformance.dashboard.data import (
    ABSENT,
    CODE,
    Source,
    area_of,
    area_order,
    load_sources,
    run_time,
    spec_key,
)
from conformance.escape import link as anchor
from conformance.escape import url as safe_url
from conformance.reporting.html_parts import url_label

ASSETS = Path(__file__).parent / "assets"
TEXT = {  # the status words the tables show: text, never an emoji
    "p": "pass", "k": "known", "F": "FAIL", "E": "ERROR", "U": "UPASS", "n": "n/a",
    "c": "cannot", "s": "skip", "T": "NOT TESTED", ABSENT: "-",
}


def area_title(area: str) -> str:
    base = area.removesuffix("_family")
    title = AREAS.get(base, area.replace("_", " "))
    return title + (" (family)" if area.endswith("_family") else "")


def _short(source: Source) -> str:
    if record.is_nightly(source) and source.day:  # a nightly is shown by its build day
        return source.day[5:]
    return source.label.replace("+git.", "+").replace("+checkout", "+co")


def _group(column: dict) -> str:
    if column["kind"] == "library":
        return "implementations"
    return "nightlies" if record.is_nightly(column) else "releases and commits (by version)"


def heat_columns(sources: list[Source], found: list[dict]) -> list[Source]:
    """Every release and commit, and of the nightlies: the last of each ISO week, the newest,
    and both sides of every flip, so that a year of nightlies fits one screen; the tables and
    the diff hold every column."""
    nightlies = [s for s in sources if record.is_nightly(s)]
    keep = {f[side] for f in found for side in ("at", "after")}
    week: dict[tuple, Source] = {}
    for source in nightlies:
        day = source.day
        week[datetime.date.fromisoformat(day).isocalendar()[:2]] = source
    keep |= {s.label for s in week.values()}
    if nightlies:
        keep.add(nightlies[-1].label)
    return [s for s in sources if not record.is_nightly(s) or s.label in keep]


def _payload(sources: list[Source], title: str) -> dict:
    """The page's data: specs once, each source's outcomes as one character per spec."""
    specs = sorted({k for s in sources for k in s.cells}, key=lambda k: (area_order(area_of(k)), k))
    index = {k: i for i, k in enumerate(specs)}
    messages: dict[str, int] = {}
    columns = []
    for source in sources:
        codes = [ABSENT] * len(specs)
        for key, outcome in source.cells.items():
            codes[index[key]] = CODE.get(outcome, "?")
        notes = {}
        for key, text in source.messages.items():
            notes[index[key]] = messages.setdefault(text, len(messages))
        columns.append({
            "label": source.label, "kind": source.kind, "origin": source.origin,
            "day": source.day, "run": run_time(source.started),
            "verdict": source.verdict, "status": source.status, "cells": "".join(codes),
            "unexpected": sorted(index[k] for k in source.unexpected if k in index),
            "messages": notes,
        })
    areas = sorted({area_of(k) for k in specs}, key=area_order)
    # each spec file's row (area_of), so that the page's filter groups exactly as the heat map
    files = {k.split("::", 1)[0]: area_of(k) for k in specs}
    return {"title": title, "specs": specs, "areas": [[a, area_title(a)] for a in areas],
            "files": files, "columns": columns, "messages": list(messages), "text": TEXT}


def _counts(sources: list[Source]) -> dict[tuple[str, str], tuple[int, int, int, int]]:
    """(area, source) -> (passing, run, unexpected, not applicable)."""
    counts = {}
    for source in sources:
        tally: dict[str, list[int]] = {}
        for key, outcome in source.cells.items():
            entry = tally.setdefault(area_of(key), [0, 0, 0, 0])
            entry[0] += outcome == outcomes.PASS
            entry[1] += 1
            entry[2] += key in source.unexpected
            entry[3] += outcome == outcomes.NOT_APPLICABLE
        for area, tally_of in tally.items():
            counts[(area, source.label)] = tuple(tally_of)
    return counts


def suite_of(source: Source) -> str:
    """What a source was measured with: the suite's spec count (a run of another suite has
    another set of specs), and its suite commit where the history recorded one."""
    commit = source.meta.get("suite_commit")
    return f"the {len(source.cells)}-spec suite" + (f" ({str(commit)[:10]})" if commit else "")


def _heatmap(sources: list[Source], found: list[dict] | None = None) -> str:
    if found is not None:
        sources = heat_columns(sources, found)
    areas = sorted({area_of(k) for s in sources for k in s.cells}, key=area_order)
    columns = [{"label": s.label, "short": _short(s), "kind": s.kind,
                "suite": f"the {len(s.cells)}-spec suite", "suite_note": suite_of(s)}
               for s in sources]
    return svg.heatmap(areas, {a: area_title(a) for a in areas}, columns, _counts(sources),
                       group_of=_group)


def _timeline(sources: list[Source], found: list[dict]) -> str:
    shown = flips.series(sources, "release") + flips.series(sources, "nightly")
    series = [(s.label, s.day if record.is_nightly(s) else None) for s in shown]
    groups = sorted({area_of(k).removesuffix("_family") for s in shown for k in s.cells},
                    key=area_order)
    lines = {}
    for group in groups:
        shares = []
        for source in shown:
            keys = [k for k in source.cells if area_of(k).removesuffix("_family") == group]
            passing = sum(source.cells[k] == outcomes.PASS for k in keys)
            shares.append(100 * passing / len(keys) if keys else None)
        lines[group] = shares
    titles = {g: AREAS.get(g, g.replace("_", " ")) for g in groups}  # each with its family's specs
    suites = [len(s.cells) for s in shown]  # a change of suite is marked, never read as a flip
    return svg.timeline(series, lines, found, titles, suites=suites)


def _verdict(sources: list[Source], found: list[dict]) -> tuple[str, str]:
    """(css class, HTML) of the verdict line: the current matrix's columns, read from their cells."""
    matrix = [s for s in sources if s.origin == "matrix"]
    partial = [s for s in matrix if s.meta.get("partial")]
    bad = [s for s in matrix if s.verdict != "conformant"]
    if not matrix:
        return "bad", "<strong>gate verdict: NOTHING TESTED</strong> — no per-source results in reports/upstream"
    if partial:
        head = (f"<strong>PARTIAL RUN — not a conformance verdict</strong> "
                f"({', '.join(escape(s.label) for s in partial)})")
        css = "bad"
    elif bad:
        head = (f"<strong>gate verdict: {len(bad)} of {len(matrix)} sources NOT conformant</strong> to their "
                "expectations: " + ", ".join(f"{escape(s.label)} ({escape(s.verdict)})" for s in bad))
        css = "bad"
    else:
        head = (f"<strong>gate verdict: conformant to expectations</strong> — all {len(matrix)} sources "
                "of the upstream matrix (no unexpected result)")
        css = "good"
    nightlies = [s for s in sources if record.is_nightly(s)]
    extra = []
    if nightlies:
        newest = nightlies[-1]
        tally = Counter(newest.cells.values())
        extra.append(f"newest nightly {escape(newest.label)}: {escape(newest.verdict)} "
                     f"({tally[outcomes.PASS]} pass, {tally[outcomes.KNOWN_FAILURE]} known failure, "
                     f"{len(newest.cells)} specs)")
        history = [s for s in nightlies if s.origin == "history"]
        extra.append(f"history: {len(nightlies)} nightlies from {escape(nightlies[0].label)} to "
                     f"{escape(newest.label)} ({len(history)} from reports/history), "
                     f"{sum(1 for f in found if f['series'] == 'nightly')} flip(s) between nightlies")
    return css, head + ("<br><span class='sub'>" + " · ".join(extra) + "</span>" if extra else "")


def _reference_clause(reports: Path) -> str:
    """What the libraries matrix says of the reference: it passes every spec, or how many it
    does not (nothing where there is no libraries matrix)."""
    path = reports / "libraries.csv"
    try:
        sources = _library_sources(path) if path.is_file() else []
    except (KeyError, csv.Error, UnicodeDecodeError, OSError):
        return ""
    reference = next((s for s in sources if s.label.startswith("reference ")), None)
    if reference is None:
        return ""
    bad = [k for k, o in reference.cells.items() if o not in (outcomes.PASS, outcomes.NOT_APPLICABLE)]
    return ("the reference passes every spec" if not bad
            else f"the reference does not pass {len(bad)} spec(s)")


def _user_verdict(sources: list[Source], reports: Path) -> str:
    """The second verdict, named apart from the gate's: what is broken in the pinned TorchRL
    release (its known failures' defect fields), not whether the matrix met its expectations."""
    from conformance.areas import ORDER
    from conformance.defects import BY_SLUG, PINNED

    pinned = next((s for s in sources if s.label == PINNED and s.origin == "matrix"), None)
    if pinned is None:
        return ""
    slugs = {d for (*_, d) in pinned.meta.get("known", {}).values() if d}
    areas = {getattr(BY_SLUG.get(slug), "area", None) for slug in slugs} - {None}
    across = ("the five areas" if len(areas) == len(ORDER) else f"{len(areas)} of the five areas")
    text = (f"torchrl {PINNED}: {len(slugs)} known defects across {across}" if slugs
            else f"torchrl {PINNED}: no catalogued defect in its results")
    reference = _reference_clause(reports)
    return (f"<div id='user-verdict' class='verdict info'><strong>your TorchRL:</strong> "
            f"{escape(text)}"
            + (f"; {escape(reference)} (<a href='libraries.html'>libraries</a>)" if reference else "")
            + "; each defect with its reproducer and upstream thread: "
            "<a href='#known-section'>below</a></div>")


def _links(sources: list[Source]) -> dict[str, str]:
    """spec -> the upstream link its expectations entry gives (the newest matrix column that has one)."""
    links = {}
    for source in sources:
        for key, (_reason, link, _nodeid, _message) in source.meta.get("known", {}).items():
            links[key] = link
    return links


PULL = "https://github.com/pytorch/rl/pull/"


def _flip_table(found: list[dict]) -> str:
    if not found:
        return "<p>No spec changed between two consecutive sources of a series.</p>"
    rows = []
    for flip in found:
        where = (f"between {escape(flip['after'])} and {escape(flip['at'])}"
                 + (f" ({flip['days']} day{'s' if flip['days'] != 1 else ''} apart: "
                    f"{'exact' if flip['exact'] else 'nightlies in between not run'})"
                    if flip["days"] is not None else ""))
        commit = (f"<code>{escape(flip['commit'][:10])}</code> {escape(flip.get('commit_subject', ''))}"
                  + (" (" + anchor(PULL + str(flip["pull_request"]), f"pytorch/rl#{flip['pull_request']}")
                     + ")" if flip.get("pull_request") else "")
                  + f"<br><span class='sub'>{escape(flip['commit_note'])}</span>"
                  if flip["commit"] else escape(flip["commit_note"]))
        specs = "".join(f"<li><a href='#spec={escape(c['spec'])}'><code>{escape(c['spec'])}</code>"
                        f"</a>: {escape(c['before'])} &rarr; {escape(c['after'])}</li>"
                        for c in flip["specs"])
        # short whole labels over whole links (escape.link: http(s) or relative targets only)
        linked = "".join(anchor(target, url_label(target), title=target) + " "
                         for target in flip.get("links", []))
        button = (f"<button type='button' class='show-diff' data-a='{escape(flip['after'])}' "
                  f"data-b='{escape(flip['at'])}'>show in the diff</button>")
        address = f"flip={flip['after']}..{flip['at']}"  # linkable: #flip=<after>..<at>
        rows.append(f"<tr id='{escape(address)}'><td><a href='#{escape(address)}'><strong>"
                    f"{escape(flip['at'])}</strong></a><br>{button}</td><td>{where}</td>"
                    f"<td>{len(flip['specs'])} ({flip['to_pass']} now pass, {flip['to_fail']} no longer pass)"
                    f"<details><summary>specs</summary><ul>{specs}</ul></details></td>"
                    f"<td>{escape(', '.join(flip['areas']))}</td><td>{linked or '-'}</td><td>{commit}</td></tr>")
    return ("<table class='flips'><thead><tr><th>first shown by</th><th>where it lies</th><th>specs</th>"
            "<th>areas</th><th>the expectations' upstream link for these specs</th><th>culprit commit</th></tr>"
            "</thead><tbody>" + "".join(rows) + "</tbody></table>")


def _known_failures(sources: list[Source], bugs_dir: Path) -> str:
    """Each upstream link of the expectations, with its reproducer (when one shows it): the
    defect a known failure of the pinned release shows, a field of its row."""
    from conformance.defects import PINNED

    groups: dict[str, dict] = {}
    for source in sources:
        for key, (reason, link, _nodeid, defect) in source.meta.get("known", {}).items():
            group = groups.setdefault(link, {"reasons": Counter(), "specs": set(), "columns": [],
                                             "areas": set(), "reproducers": set()})
            group["reasons"][reason] += 1
            group["specs"].add(key)
            group["areas"].add(area_of(key))
            if source.label not in group["columns"]:
                group["columns"].append(source.label)
            if source.label == PINNED and defect:
                group["reproducers"].add(f"{defect}.py")
    items = []
    for link, group in sorted(groups.items(), key=lambda kv: (min(area_order(a) for a in kv[1]["areas"]), kv[0])):
        reason = group["reasons"].most_common(1)[0][0]
        repro = " ".join(
            f"<a href='bugs/{escape(n)}'>reproducer {escape(n)}</a>"
            + (f" (<a href='bugs/{escape(n[:-3])}.md'>report</a>)" if (bugs_dir / f"{n[:-3]}.md").is_file() else "")
            for n in sorted(group["reproducers"]) if (bugs_dir / n).is_file())
        columns = group["columns"]
        span = columns[0] if len(columns) == 1 else f"{columns[0]} … {columns[-1]} ({len(columns)} sources)"
        items.append(f"<li><a href='{safe_url(link)}'>{escape(link.replace('https://github.com/', ''))}</a> — "
                     f"{escape(reason[:220])} <span class='sub'>[{escape(', '.join(sorted(group['areas'], key=area_order)))}; "
                     f"{len(group['specs'])} spec(s); in {escape(span)}]</span> {repro or '<span class=sub>no reproducer</span>'}</li>")
    return "<ul class='known'>" + "".join(items) + "</ul>" if items else "<p>No known failure.</p>"


def _page(title: str, body: str, data_script: str | None = None, current: str = "") -> str:
    nav = "".join(f"<a href='{href}'{' class=here' if href == current else ''}>{name}</a>" for href, name in (
        ("index.html", "Upstream matrix &amp; history"), ("libraries.html", "Libraries"),
        ("benchmarks.html", "Benchmarks")))
    scripts = (f"<script src='data/{data_script}.js'></script><script src='assets/app.js'></script>"
               if data_script else "")
    return (f"<!doctype html><html lang='en'><head><meta charset='utf-8'><title>{escape(title)}</title>"
            "<meta name='viewport' content='width=device-width, initial-scale=1'>"
            "<link rel='stylesheet' href='assets/style.css'></head><body>"
            f"<header><span class='brand'>TorchRL conformance</span><nav>{nav}</nav></header>"
            f"<main>{body}</main>{scripts}</body></html>\n")


def _interactive(kind_filter: bool) -> str:
    kinds = ("<label>sources <select id='kinds'><option value='all'>all</option>"
             "<option value='release'>releases</option><option value='nightly'>nightlies</option>"
             "<option value='matrix'>current matrix only</option></select></label>") if kind_filter else ""
    return ("<section id='areas-section'><h2>Specs by area</h2><div class='controls'>"
            "<label>area <select id='area'></select></label>"
            f"{kinds}<label><input type='checkbox' id='changing'> only specs whose outcome differs across the shown sources</label>"
            "<span id='area-count' class='sub'></span></div>"
            "<p class='legend'>pass = passes · known = a known failure (listed in the expectations, with its link) · "
            "FAIL / ERROR = an unexpected failure · UPASS = an unexpected pass · n/a = not applicable · "
            "cannot = cannot be tested here · NOT TESTED = the source could not be exercised · - = no such spec in that source. "
            "A bold outlined cell is unexpected against that run's expectations; hover a cell for its message.</p>"
            "<div class='scroll grid-scroll'><table id='spec-table' class='grid'></table></div></section>"
            "<section id='diff-section'><h2>Diff of two columns</h2><div class='controls'>"
            "<label>A <select id='diff-a'></select></label><label>B <select id='diff-b'></select></label>"
            "<span id='diff-count' class='sub'></span></div>"
            "<div class='scroll'><table id='diff-table' class='grid'></table></div></section>")


def _write_data(out: Path, name: str, payload: dict) -> None:
    text = json.dumps(payload, separators=(",", ":"), sort_keys=True)
    (out / "data" / f"{name}.json").write_text(text + "\n", encoding="utf-8")
    # a script, not a fetch: file:// pages cannot fetch JSON; "</" cannot close the script early
    (out / "data" / f"{name}.js").write_text(
        "window.DASHBOARD=" + text.replace("</", "<\\/") + ";\n", encoding="utf-8")


def upstream_page(reports: Path, history_dir: Path, bisect_dir: Path, out: Path) -> dict:
    skipped: list[str] = []
    sources = load_sources(reports / "upstream", history_dir, skipped)
    found = (flips.find(flips.series(sources, "release"), None)
             + flips.find(flips.series(sources, "nightly"), bisect_dir))
    links = _links(sources)
    for flip in found:  # what the expectations say fixes or causes these specs (not a bisect)
        flip["links"] = sorted({links[c["spec"]] for c in flip["specs"] if c["spec"] in links})
    payload = _payload(sources, "TorchRL conformance by release and nightly")
    payload["flips"] = found
    _write_data(out, "upstream", payload)
    css, verdict = _verdict(sources, found)
    nightly_flips = [f for f in found if f["series"] == "nightly"]
    left_out = ("<p class='sub'><strong>History files left out:</strong> "
                + escape("; ".join(skipped)) + "</p>") if skipped else ""
    body = (f"<div id='verdict' class='verdict {css}'>{verdict}</div>"
            f"{_user_verdict(sources, reports)}{left_out}"
            "<section id='heatmap-section'><h2>Passing specs: areas &times; sources"
            f"<span class='sub'> ({len(heat_columns(sources, found))} of {len(sources)} sources: every "
            "release and commit; nightlies: the last of each week and both sides of each flip)</span></h2>"
            f"<div class='scroll'>{_heatmap(sources, found)}</div></section>"
            "<section id='timeline-section'><h2>Timeline: share of each area's specs that pass"
            "<span class='sub'> (an area with its family's specs)</span></h2>"
            f"<div class='scroll'>{_timeline(sources, found)}</div></section>"
            + _interactive(True)
            + f"<section id='flips-section'><h2>Flips ({len(nightly_flips)} between nightlies, "
              f"{len(found) - len(nightly_flips)} between releases)</h2>"
              "<p class='sub'>A flip is a spec whose outcome (pass, known failure, fail, ...) differs from the previous "
              "source of its series; it is shown on the first source that has the new outcome. The backfilled "
              "nightlies are judged against today's nightly expectations, so an older nightly's "
              "'unexpected' count says how far it is from today's, not that its run was wrong.</p>"
            + _flip_table(found) + "</section>"
            + "<section id='known-section'><h2>Known failures: upstream issue or pull request, and reproducer</h2>"
            + _known_failures(sources, reports / "upstream-bugs") + "</section>"
            + "<section><h2>Sources</h2>" + _sources_table(sources) + "</section>")
    (out / "index.html").write_text(_page("TorchRL conformance dashboard", body, "upstream", "index.html"),
                                     encoding="utf-8")
    return {"sources": len(sources), "flips": found, "skipped": skipped}


def _sources_table(sources: list[Source]) -> str:
    rows = []
    for s in sources:
        tally = Counter(s.cells.values())
        rows.append(f"<tr><td>{escape(s.label)}</td><td>{escape(s.kind)}</td><td>{escape(s.verdict)}</td>"
                    f"<td>{escape(s.status)}</td><td>{tally[outcomes.PASS]}</td>"
                    f"<td>{tally[outcomes.KNOWN_FAILURE]}</td><td>{len(s.cells)}</td>"
                    f"<td>{escape(run_time(s.started))}</td><td>{escape(s.origin)}</td>"
                    f"<td>{escape(str(s.meta.get('torch') or ''))}</td>"
                    f"<td>{escape(str(s.meta.get('tensordict') or ''))}</td></tr>")
    return ("<div class='scroll'><table class='md'><thead><tr><th>source</th><th>kind</th><th>verdict (from its cells)</th>"
            "<th>the runner's status</th><th>pass</th><th>known</th><th>specs</th><th>run</th><th>from</th>"
            "<th>torch</th><th>tensordict</th></tr></thead><tbody>" + "".join(rows) + "</tbody></table></div>")


def _library_sources(path: Path) -> list[Source]:
    """The libraries matrix (reports/libraries.csv): one source per implementation and version."""
    columns: dict[str, Source] = {}
    with open(path, newline="", encoding="utf-8") as fh:
        for row in csv.DictReader(fh):
            label = f"{row['implementation']} {row['implementation_version']}"
            source = columns.setdefault(label, Source(label, "library", {}, set(), {}, None, "matrix"))
            key = spec_key(row["nodeid"], row["implementation"])
            source.cells[key] = row["outcome"]
            if row["expected"] not in ("True", "true", "1"):
                source.unexpected.add(key)
            if row["outcome"] != outcomes.PASS and row.get("message"):
                source.messages[key] = row["message"].strip().splitlines()[0][:400]
            if row.get("partial"):
                source.meta["partial"] = row["partial"]
    return list(columns.values())


def libraries_page(reports: Path, out: Path) -> None:
    path = reports / "libraries.csv"
    if not path.is_file():
        body = "<div id='verdict' class='verdict bad'><strong>no libraries matrix</strong> (reports/libraries.csv): run nox -s libraries</div>"
        (out / "libraries.html").write_text(_page("Libraries", body, None, "libraries.html"), encoding="utf-8")
        return
    try:
        sources = _library_sources(path)
    except (KeyError, csv.Error, UnicodeDecodeError) as exc:
        raise ValueError(f"{path}: not a libraries matrix CSV ({type(exc).__name__}: {exc})") from None
    if not sources:
        raise ValueError(f"{path}: no rows: not a libraries matrix (nox -s libraries writes it)")
    _write_data(out, "libraries", _payload(sources, "RL libraries"))
    bad = [s for s in sources if s.verdict != "conformant" or s.meta.get("partial")]
    verdict = ("<strong>gate verdict: conformant to expectations</strong> — every implementation, no unexpected result"
               if not bad else f"<strong>gate verdict: {len(bad)} implementation(s) not conformant</strong>: "
               + ", ".join(escape(f"{s.label} ({s.verdict})") for s in bad))
    body = (f"<div id='verdict' class='verdict {'bad' if bad else 'good'}'>{verdict}</div>"
            "<section><h2>Passing specs: areas &times; implementations</h2>"
            f"<div class='scroll'>{_heatmap(sources)}</div><p class='sub'>An implementation that does not "
            "provide an area shows its specs as n/a (not passing): the count is of what passes, never of what was "
            "skipped.</p></section>" + _interactive(False))
    (out / "libraries.html").write_text(_page("RL libraries", body, "libraries", "libraries.html"), encoding="utf-8")


def benchmarks_page(reports: Path, out: Path) -> None:
    parts = []
    md = reports / "benchmarks.md"
    plots = out / "benchmarks"
    plots.mkdir(exist_ok=True)
    for png in sorted((reports / "benchmarks").glob("*.png")):
        shutil.copy2(png, plots / png.name)
    if md.is_file():
        parts.append(markdown.to_html(md.read_text(encoding="utf-8"),
                                      link=lambda target: target.removeprefix("../reports/")))
    else:
        parts.append("<p>No side-by-side benchmark report (reports/benchmarks.md): run nox -s bench.</p>")
    pngs = sorted(p.name for p in plots.glob("*.png"))
    if pngs and "benchmarks/" not in "".join(parts):  # plots the report does not show itself
        parts.append("<h2>Plots</h2><div class='plots'>" + "".join(
            f"<figure><img src='benchmarks/{escape(n)}' alt='{escape(n)}'><figcaption>{escape(n)}"
            "</figcaption></figure>" for n in pngs) + "</div>")
    charts = asv_history.load(reports / "asv" / "results")
    if charts:
        parts.append("<h2>asv history (one line per parameter set; x: TorchRL release environment or the "
                     "stack at a commit of this suite; log scale)</h2><div class='plots'>" + "".join(
                         svg.line_chart(c["name"] + (f" (+{c['hidden']} more sets)" if c["hidden"] else ""),
                                        c["envs"], c["lines"], c["unit"]) for c in charts) + "</div>")
    body = "<div id='verdict' class='verdict info'>Benchmarks: ratios, not verdicts (a ratio below 1 is faster than the baseline)</div>" + "".join(parts)
    (out / "benchmarks.html").write_text(_page("Benchmarks", body, None, "benchmarks.html"), encoding="utf-8")


class OverBudget(ValueError):
    """The site is larger than its budget: nothing was written (one line)."""


def build(reports: Path, out: Path, history_dir: Path | None = None, bisect_dir: Path | None = None,
          budget: int | None = None) -> dict:
    """Write the whole site into ``out`` (replaced); a summary of what it holds. It is built in
    a staging folder of its own (a new one each time: a sibling this command did not create is
    never touched), and replaces ``out`` only when it is within ``budget`` bytes."""
    reports, out = Path(reports), Path(out)
    history_dir = Path(history_dir or reports / "history")
    bisect_dir = Path(bisect_dir or history_dir / "bisect")
    if not (reports / "upstream").is_dir():
        raise FileNotFoundError(f"{reports / 'upstream'}: no per-source results (run nox -s upstream)")
    out.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{out.name}.staging-", dir=out.parent))
    try:
        summary = _build_into(reports, history_dir, bisect_dir, staging)
        summary["bytes"] = sum(p.stat().st_size for p in staging.rglob("*") if p.is_file())
        if budget is not None and summary["bytes"] > budget:
            raise OverBudget(f"the site is {summary['bytes'] / 1e6:.2f} MB, over its "
                             f"{budget / 1e6:.1f} MB budget: not written to {out}")
        shutil.rmtree(out, ignore_errors=True)
        staging.rename(out)
    finally:
        shutil.rmtree(staging, ignore_errors=True)  # gone already when it became the site
    return summary


def _build_into(reports: Path, history_dir: Path, bisect_dir: Path, staging: Path) -> dict:
    (staging / "data").mkdir(parents=True)
    shutil.copytree(ASSETS, staging / "assets")
    bugs = reports / "upstream-bugs"
    if bugs.is_dir():
        shutil.copytree(bugs, staging / "bugs", ignore=shutil.ignore_patterns("__pycache__"))
    summary = upstream_page(reports, history_dir, bisect_dir, staging)
    libraries_page(reports, staging)
    benchmarks_page(reports, staging)
    (staging / ".nojekyll").write_text("")  # GitHub Pages: serve folders as they are
    (staging / "data" / "built.json").write_text(json.dumps({"built": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}) + "\n")
    return summary

