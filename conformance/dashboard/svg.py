"""Hand-written SVG charts (no charting library, no script): the heat map and the timelines.

Every mark has a text twin (a number in the cell, a <title> tooltip, a label on each flip), so
nothing needs colour or an emoji font to be read.
"""

from __future__ import annotations

import datetime
import math
from html import escape

# a line's style: ten distinct colours, and a dash pattern that changes with the index too, so
# that no two of the first twenty lines share both (a legend of 13 entries had three solid blues)
PALETTE = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#555555", "#17becf",
           "#8c564b", "#e377c2", "#bcbd22"]
DASHES = ["", "6 3", "2 2", "8 3 2 3"]
AREA_STYLE = [(PALETTE[n % len(PALETTE)], DASHES[n % len(DASHES)]) for n in range(20)]


def _pass_colour(fraction: float | None) -> str:
    """A red-to-green scale (light enough for black text), grey where nothing was tested."""
    if fraction is None:
        return "#e6e6e6"
    # hue 0 (red) -> 120 (green), lightness kept high for the count's contrast
    return f"hsl({round(120 * fraction)},62%,{round(78 - 8 * fraction)}%)"


def heatmap(rows: list[str], row_titles: dict[str, str], columns: list[dict],
            counts: dict[tuple[str, str], tuple[int, int, int]], width: int = 1360,
            group_of=None) -> str:
    """Areas down, sources across: each cell the specs passing of those run, its colour the
    share that passes, a thick border where a result was unexpected. ``counts[(area, label)]``
    is (passing, total, unexpected)."""
    left, cell_h = 250, 16
    # room above the cells for the longest vertical column label (about 6 px a character): a
    # label stays inside its column, never under the next group's line or past the edge
    top = 24 + int(6.2 * max((len(c["short"]) for c in columns), default=6))
    n = max(len(columns), 1)
    cell_w = max(14, min(46, (width - left - 10) // n))
    height = top + cell_h * len(rows) + 22
    # wide enough for the note below the cells, however few the columns
    out = [f"<svg xmlns='http://www.w3.org/2000/svg' class='heatmap' width='{max(left + cell_w * n + 10, 1000)}' "
           f"height='{height}' role='img' aria-label='passing specs per area and source'>"]
    previous_group, previous_suite = None, None
    for i, column in enumerate(columns):
        x = left + i * cell_w
        group = group_of(column) if group_of else None
        suite = column.get("suite")  # what the column was measured with (its spec count)
        if group != previous_group:
            out.append(f"<line x1='{x}' x2='{x}' y1='4' y2='{height - 18}' stroke='#333' stroke-width='1.5'/>"
                       f"<text x='{x + 3}' y='12' class='group'>{escape(group or '')}</text>")
            previous_group = group
        elif suite != previous_suite:  # a change of suite, never an upstream change: marked so
            out.append(f"<g class='suite-change'><title>measured with another suite from here: "
                       f"{escape(str(previous_suite))} -> {escape(str(suite))}</title>"
                       f"<line x1='{x}' x2='{x}' y1='16' y2='{height - 18}' stroke='#777' "
                       f"stroke-width='1.5' stroke-dasharray='3 3'/></g>")
        previous_suite = suite
        label = column["short"]
        out.append(f"<text class='col' transform='translate({x + cell_w / 2 + 4},{top - 4}) rotate(-90)'>"
                   f"<title>{escape(column['label'])}"
                   f"{escape(' · measured with ' + str(column.get('suite_note') or suite)) if suite else ''}</title>"
                   f"{escape(label)}</text>")
    for j, area in enumerate(rows):
        y = top + j * cell_h
        out.append(f"<text x='{left - 6}' y='{y + cell_h - 4}' class='row' text-anchor='end'>"
                   f"{escape(row_titles.get(area, area))}</text>")
        for i, column in enumerate(columns):
            x = left + i * cell_w
            passing, total, unexpected, *rest = counts.get((area, column["label"]), (0, 0, 0))
            na = rest[0] if rest else 0  # not applicable: neither passing nor failing
            tested = total - na
            colour = _pass_colour(passing / tested if tested else None)
            border = ("stroke='#000' stroke-width='2.2'" if unexpected
                      else "stroke='#fff' stroke-width='1'")
            tip = (f"{column['label']} · {area}: {passing} of {tested} pass"
                   + (f", {unexpected} unexpected" if unexpected else "")
                   + (f", {na} n/a" if na else "") if tested
                   else f"{column['label']} · {area}: " + (
                       f"n/a ({na} specs: the area is not provided)" if na
                       else "no spec of this area ran"))
            out.append(f"<g class='cell'><title>{escape(tip)}</title><rect x='{x}' y='{y}' "
                       f"width='{cell_w}' height='{cell_h}' fill='{colour}' {border}/>"
                       f"<text x='{x + cell_w / 2}' y='{y + cell_h - 4}' text-anchor='middle'>"
                       f"{passing if tested else ('n/a' if na else '-')}</text></g>")
    out.append(f"<text x='{left}' y='{height - 4}' class='note'>number: specs passing (hover: of N); "
               "colour: share passing of those that apply, red 0% to green 100%, grey: n/a or not "
               "run; black border: unexpected; grey dashes: another suite from there</text></svg>")
    return "".join(out)


def _day_number(day: str) -> int:
    return datetime.date.fromisoformat(day).toordinal()


def timeline(series: list[tuple[str, str | None]], lines: dict[str, list[float | None]],
             flips: list[dict], titles: dict[str, str], width: int = 1360, height: int = 240,
             suites: list[int] | None = None) -> str:
    """Passes per area (share of the area's specs, %) over the sources: releases at even steps
    by version, then nightlies to scale by date; a dashed mark with its label on each flip.

    ``series`` is [(label, day or None)], ``lines[area]`` a share per source (None: not run)."""
    left, right, top, bottom = 50, 250, 22, 46
    plot_w, plot_h = width - left - right, height - top - bottom
    releases = [i for i, (_, day) in enumerate(series) if day is None]
    nightlies = [i for i, (_, day) in enumerate(series) if day is not None]
    split = plot_w * (0.32 if releases and nightlies else (1.0 if releases else 0.0))
    xs = [0.0] * len(series)
    for k, i in enumerate(releases):
        xs[i] = left + (split - 12) * (k + 0.5) / len(releases)
    if nightlies:
        days = [_day_number(series[i][1]) for i in nightlies]
        first, span = min(days), max(max(days) - min(days), 1)
        for i, day in zip(nightlies, days, strict=True):
            xs[i] = left + split + 12 + (plot_w - split - 24) * (day - first) / span

    def y(share: float) -> float:
        return top + plot_h * (1 - share / 100)

    out = [f"<svg xmlns='http://www.w3.org/2000/svg' class='timeline' width='{width}' height='{height}' "
           "role='img' aria-label='passing specs per area over releases and nightlies'>"]
    for share in (0, 25, 50, 75, 100):
        out.append(f"<line x1='{left}' x2='{left + plot_w}' y1='{y(share)}' y2='{y(share)}' "
                   f"stroke='#ddd'/><text x='{left - 6}' y='{y(share) + 4}' text-anchor='end' "
                   f"class='axis'>{share}%</text>")
    if releases and nightlies:
        out.append(f"<line x1='{left + split}' x2='{left + split}' y1='{top - 6}' y2='{top + plot_h}' "
                   "stroke='#333' stroke-dasharray='2 2'/>")
    if releases:
        out.append(f"<text x='{left + 2}' y='{top - 8}' class='group'>releases, by version</text>")
    if nightlies:
        out.append(f"<text x='{left + split + 14}' y='{top - 8}' class='group'>nightlies, by date "
                   "(to scale; a dot per nightly run)</text>")
    # a tick label where it does not overlap the one before: labels rotated 60 degrees are
    # parallel, dx * sin(60) apart, so 10 px text needs dx >= 12 (14: some air); the newest
    # always has one, in place of a too-close previous one
    placed: list[int] = []
    for i in range(len(series)):
        if placed and xs[i] - xs[placed[-1]] < 14:
            if i == len(series) - 1:
                placed[-1] = i
            continue
        placed.append(i)
    for i in placed:
        label, day = series[i]
        short = day[5:] if day else label
        out.append(f"<text class='tick' transform='translate({xs[i] + 3},{top + plot_h + 8}) rotate(60)'>"
                   f"{escape(short)}</text>")
    # where the suite changes (another set of specs) within a series: a grey marker, "suite",
    # so that a jump of the shares there is not read as an upstream change
    for i in range(1, len(series) if suites else 0):
        same_series = (series[i][1] is None) == (series[i - 1][1] is None)
        if same_series and suites[i] != suites[i - 1]:
            out.append(f"<g class='suite-change'><title>{escape(series[i][0])}: measured with "
                       f"the {suites[i]}-spec suite, {escape(series[i - 1][0])} with the "
                       f"{suites[i - 1]}-spec one: shares across it compare different specs"
                       f"</title><line x1='{xs[i] - 3:.1f}' x2='{xs[i] - 3:.1f}' y1='{top}' "
                       f"y2='{top + plot_h}' stroke='#888' stroke-width='3' stroke-opacity='0.5'/>"
                       f"<text x='{xs[i] - 5:.1f}' y='{top + plot_h - 4}' class='flipmark' "
                       f"text-anchor='end'>suite {suites[i - 1]}→{suites[i]}</text></g>")
    for k, flip in enumerate(flips):
        index = next((i for i, (label, _) in enumerate(series) if label == flip["at"]), None)
        if index is None:
            continue
        x = xs[index]
        tip = (f"flip at {flip['at']} (after {flip['after']}): {len(flip['specs'])} spec(s), "
               f"{flip['to_pass']} now pass, {flip['to_fail']} now fail; areas "
               f"{', '.join(flip['areas'])}; commit: {flip.get('commit') or flip.get('commit_note')}")
        out.append(f"<g class='flip'><title>{escape(tip)}</title><line x1='{x}' x2='{x}' y1='{top}' "
                   f"y2='{top + plot_h}' stroke='#000' stroke-dasharray='4 3'/>"
                   f"<text x='{x + 2}' y='{top + 10 + 11 * (k % 3)}' class='flipmark'>"
                   f"{'+' if flip['to_pass'] >= flip['to_fail'] else '-'}{len(flip['specs'])}</text></g>")
    for n, (area, shares) in enumerate(lines.items()):
        colour, dash = AREA_STYLE[n % len(AREA_STYLE)]
        segments, current = [], []
        for i, share in enumerate(shares):
            if share is None:
                if current:
                    segments.append(current)
                current = []
                continue
            # releases and nightlies are separate series: no line across the split
            if current and (series[i][1] is None) != (series[current[-1][0]][1] is None):
                segments.append(current)
                current = []
            current.append((i, share))
        if current:
            segments.append(current)
        for segment in segments:
            points = " ".join(f"{xs[i]:.1f},{y(s):.1f}" for i, s in segment)
            out.append(f"<polyline points='{points}' fill='none' stroke='{colour}' stroke-width='2' "
                       f"stroke-dasharray='{dash}'/>")
            for i, s in segment:
                out.append(f"<circle cx='{xs[i]:.1f}' cy='{y(s):.1f}' r='2.4' fill='{colour}'>"
                           f"<title>{escape(series[i][0])} · {escape(titles.get(area, area))}: "
                           f"{s:.0f}% pass</title></circle>")
        ly = top + 12 * n + 4  # 12 px a line: the legend fits the plot's height
        out.append(f"<line x1='{left + plot_w + 10}' x2='{left + plot_w + 34}' y1='{ly}' y2='{ly}' "
                   f"stroke='{colour}' stroke-width='2' stroke-dasharray='{dash}'/>"
                   f"<text x='{left + plot_w + 38}' y='{ly + 4}' class='legend'>"
                   f"{escape(titles.get(area, area))}</text>")
    ly = top + 12 * len(lines) + 6
    out.append(f"<text x='{left + plot_w + 10}' y='{ly + 4}' class='legend'>+N/-N: a flip, N specs</text>"
               f"<text x='{left + plot_w + 10}' y='{ly + 16}' class='legend'>grey bar: another "
               "suite from there</text>")
    out.append("</svg>")
    return "".join(out)


def line_chart(title: str, xs: list[str], lines: dict[str, list[float | None]], unit: str,
               width: int = 440, height: int = 200) -> str:
    """A small chart per benchmark: one line per parameter set over torchrl versions (log y)."""
    left, right, top, bottom = 56, 10, 24, 40
    plot_w, plot_h = width - left - right, height - top - bottom
    values = [v for vs in lines.values() for v in vs if v]
    out = [f"<svg xmlns='http://www.w3.org/2000/svg' class='bench' width='{width}' height='{height}' "
           f"role='img' aria-label='{escape(title)}'><text x='4' y='14' class='group'>{escape(title)}</text>"]
    if not values:
        out.append(f"<text x='{left}' y='{top + 30}'>no result</text></svg>")
        return "".join(out)
    lo, hi = math.log10(min(values)), math.log10(max(values))
    if hi - lo < 1e-9:
        lo, hi = lo - 0.5, hi + 0.5

    def x(i: int) -> float:
        return left + plot_w * (i + 0.5) / max(len(xs), 1)

    def y(v: float) -> float:
        return top + plot_h * (1 - (math.log10(v) - lo) / (hi - lo))

    for exponent in range(math.floor(lo), math.ceil(hi) + 1):
        value = 10.0 ** exponent
        if lo - 1e-9 <= exponent <= hi + 1e-9:
            out.append(f"<line x1='{left}' x2='{left + plot_w}' y1='{y(value):.1f}' y2='{y(value):.1f}' "
                       f"stroke='#ddd'/><text x='{left - 4}' y='{y(value) + 4:.1f}' text-anchor='end' "
                       f"class='axis'>{value:g}{unit}</text>")
    for i, label in enumerate(xs):
        out.append(f"<text x='{x(i):.1f}' y='{top + plot_h + 14}' text-anchor='middle' class='tick'>"
                   f"{escape(label)}</text>")
    for n, (name, vs) in enumerate(lines.items()):
        colour, dash = AREA_STYLE[n % len(AREA_STYLE)]
        pts = [(i, v) for i, v in enumerate(vs) if v]
        if len(pts) > 1:
            out.append("<polyline fill='none' stroke-width='1.5' stroke='" + colour + "' stroke-dasharray='"
                       + dash + "' points='" + " ".join(f"{x(i):.1f},{y(v):.1f}" for i, v in pts) + "'/>")
        for i, v in pts:
            out.append(f"<circle cx='{x(i):.1f}' cy='{y(v):.1f}' r='2.5' fill='{colour}'><title>"
                       f"{escape(name)} at {escape(xs[i])}: {v:.3g} s</title></circle>")
    out.append("</svg>")
    return "".join(out)
