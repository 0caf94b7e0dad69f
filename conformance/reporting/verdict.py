"""The verdict block: what every entry point prints last, read from results documents' fields.

Two verdicts, named apart:

- the gate's: *conformant to expectations: no unexpected result* (or how many unexpected
  results, or PARTIAL RUN): whether the run matched the expectations in force, which is what the
  exit code says;
- the user's: *torchrl 0.14.1: 30 known defects across the five areas; the reference passes
  every spec*: what is broken in the TorchRL under test, whatever the expectations say.

Then the counts per implementation (pass, known, unexpected), a TorchRL's known defects by slug
(grouped by area, with the command that reproduces one), the first unexpected results with where
the rest are, and the specs that cannot be tested here grouped by cause, one line each, with the
fix. A conformant run's block fits in 25 lines.

It reads fields only (``outcome``, ``expected``, ``defect``, ``implementation``...): never a
message for what a field records. A plain-text function of dicts, no pandas: the plug-in, the
console script, the embed host, the upstream runner and the gate all print it.

    python -m conformance.reporting.verdict RESULTS.json [...]   # the block of written results
"""

from __future__ import annotations

import sys
import textwrap
from collections.abc import Iterable
from pathlib import Path

from conformance import outcomes as O
from conformance import paths
from conformance.areas import ORDER

FIRST = 5  #: unexpected results shown in the block
WIDTH = 100
REPRODUCE = "python -m conformance.upstream.bugs --reproduce SLUG"
GATE_OK = "conformant to expectations: no unexpected result"
FIX_MARK = " — fix: "  #: how the suite's own "cannot be tested here" messages name their fix
FIVE = {1: "one", 2: "two", 3: "three", 4: "four", 5: "five"}


def _area(name: str) -> str:
    """The area a spec file's stem belongs to (``prioritized_replay_trees`` -> ``prioritized_replay``)."""
    for area in ORDER:
        if name == area.name or name.startswith(area.name + "_"):
            return area.name
    return name


def _label(row: dict) -> str:
    version = row.get("implementation_version") or ""
    device = row.get("device") or "cpu"
    return " ".join(p for p in (row.get("implementation") or "?", version) if p) + (
        "" if device == "cpu" else f" · {device}")


def _catalogue():
    try:  # the defect catalogue: data, when this version of the suite has it
        from conformance import defects
    except ImportError:
        return {}
    return getattr(defects, "BY_SLUG", {})


def rows_of(documents: Iterable[dict]) -> tuple[list[dict], list[str]]:
    """All rows (a later document's row of the same test and column replaces an earlier one)
    and the documents' partial reasons."""
    rows: dict[tuple[str, str], dict] = {}
    partial = []
    for doc in documents:
        if doc.get("partial"):
            partial.append(str(doc["partial"]))
        for row in doc.get("rows") or []:
            if row.get("outcome"):
                rows[(row.get("nodeid", ""), _label(row))] = row
    return list(rows.values()), partial


def gate_verdict(rows: list[dict], partial: list[str]) -> str:
    unexpected = sum(1 for r in rows if not r.get("expected"))
    verdict = GATE_OK if unexpected == 0 else f"NOT CONFORMANT: {unexpected} unexpected result(s)"
    if partial:
        why = _first_line("; ".join(dict.fromkeys(partial)), 160)  # the report has all of it
        return f"PARTIAL RUN ({why}): not a conformance verdict; {verdict}"
    if not rows:
        return "NOT CONFORMANT: nothing ran"
    return verdict


def _columns(rows: list[dict]) -> dict[str, list[dict]]:
    by: dict[str, list[dict]] = {}
    for row in rows:
        by.setdefault(_label(row), []).append(row)
    return by


def _defects(rows: list[dict]) -> dict[str, set[str]]:
    """A column's known defects: slug -> the areas of its known failures."""
    found: dict[str, set[str]] = {}
    for row in rows:
        if row.get("outcome") == O.KNOWN_FAILURE and row.get("defect"):
            found.setdefault(row["defect"], set()).add(_area(row.get("area", "")))
    return found


#: how the user's verdict names each kind of catalogue entry, in this order (a documented
#: limitation or a feature gap is not a bug of TorchRL's code, and the reader should see that)
KIND_WORDS = (("defect", "in TorchRL's code"), ("elsewhere", "in {repository}'s code"),
              ("documented-limitation", "documented limitation(s)"),
              ("feature-gap", "feature gap(s)"))


def _kinds(defects: dict[str, set[str]]) -> str:
    """'24 in TorchRL's code, 4 in pytorch/tensordict's code, 2 documented limitation(s)...'
    from the catalogue's ``kind`` and ``repository`` fields; empty without a catalogue."""
    catalogue = _catalogue()
    order = [kind for kind, _ in KIND_WORDS]
    counts: dict[tuple[int, str], int] = {}
    for slug in defects:
        entry = catalogue.get(slug)
        if entry is None:
            continue
        kind = getattr(entry, "kind", "defect")
        words = dict(KIND_WORDS).get(kind, kind)
        words = words.format(repository=getattr(entry, "repository", "?"))
        key = (order.index(kind) if kind in order else len(order), words)
        counts[key] = counts.get(key, 0) + 1
    return ", ".join(f"{counts[key]} {key[1]}" for key in sorted(counts))


def user_verdict(rows: list[dict]) -> str:
    """Per TorchRL column, its known defects; then whether the reference passes every spec."""
    parts = []
    columns = _columns(rows)
    for column, its in columns.items():
        if its[0].get("implementation") != "torchrl":
            continue
        known = [r for r in its if r.get("outcome") == O.KNOWN_FAILURE]
        defects = _defects(its)
        untestable = sum(1 for r in its if r.get("outcome") in (O.UNTESTABLE, O.NOT_TESTED))
        if defects:
            areas = {a for spread in defects.values() for a in spread}
            across = (f"the {FIVE[len(areas)]} areas" if len(areas) == len(ORDER)
                      else f"{len(areas)} of the five areas")
            text = f"{column}: {len(defects)} known defect(s) across {across}"
            kinds = _kinds(defects)
            if kinds:
                text += f" ({kinds})"
            uncatalogued = sum(1 for r in known if not r.get("defect"))
            if uncatalogued:
                text += f" (and {uncatalogued} known failure(s) of no catalogued defect)"
        elif known:
            text = f"{column}: {len(known)} known failure(s) (these results name no defect)"
        else:
            text = f"{column}: no known defect"
        if untestable:
            text += f"; {untestable} spec(s) not tested here (below)"
        parts.append(text)
    for column, its in columns.items():
        if its[0].get("implementation") != "reference":
            continue
        bad = [r for r in its if r.get("outcome") not in (O.PASS, O.NOT_APPLICABLE)]
        parts.append("the reference passes every spec" if not bad else
                     f"the reference ({column}) does not pass {len(bad)} spec(s)")
    return "; ".join(parts)


def _counts(rows: list[dict]) -> list[str]:
    columns = _columns(rows)
    width = max([len(c) for c in columns] + [14])
    lines = [f"  {'implementation':<{width}}  {'pass':>5}  {'known':>5}  {'unexpected':>10}  other"]
    for column, its in columns.items():
        passed = sum(1 for r in its if r.get("outcome") == O.PASS)
        known = sum(1 for r in its if r.get("outcome") == O.KNOWN_FAILURE and r.get("expected"))
        unexpected = sum(1 for r in its if not r.get("expected"))
        other: dict[str, int] = {}
        for r in its:
            if r.get("expected") and r.get("outcome") not in (O.PASS, O.KNOWN_FAILURE):
                word = {O.NOT_APPLICABLE: "n/a", O.UNTESTABLE: "cannot test (listed)"}.get(
                    r["outcome"], r["outcome"])
                other[word] = other.get(word, 0) + 1
        rest = ", ".join(f"{n} {w}" for w, n in other.items())
        lines.append(f"  {column:<{width}}  {passed:>5}  {known:>5}  {unexpected:>10}  {rest}")
    return lines


def _defect_lines(rows: list[dict]) -> list[str]:
    lines = []
    catalogue = _catalogue()
    for column, its in _columns(rows).items():
        defects = _defects(its)
        if not defects:
            continue
        # the reproducers are files of the suite's repository (reports/upstream-bugs/), which a
        # wheel does not hold
        where = "" if paths.CHECKOUT else ", from a checkout of the suite"
        lines.append(f"{column}: its {len(defects)} known defect(s) by area; reproduce one{where}:")
        lines.append(f"  {REPRODUCE}")
        by_area: dict[str, list[str]] = {}
        for slug, areas in defects.items():
            area = getattr(catalogue.get(slug), "area", None) or sorted(areas)[0]
            by_area.setdefault(area, []).append(slug)
        for area in [a.name for a in ORDER] + sorted(set(by_area) - {a.name for a in ORDER}):
            if area in by_area:
                text = f"{area} ({len(by_area[area])}): " + ", ".join(sorted(by_area[area]))
                lines += textwrap.wrap(text, WIDTH, initial_indent="  ",
                                       subsequent_indent="      ", break_on_hyphens=False)
    return lines


def _first_line(text: str, width: int = WIDTH) -> str:
    line = (text or "").strip().splitlines()[0] if (text or "").strip() else ""
    return line if len(line) <= width else line[:width - 1] + "…"


def _unexpected_lines(rows: list[dict], where: str) -> list[str]:
    # a spec that could not be tested is grouped by cause below, not listed one by one
    bad = [r for r in rows if not r.get("expected")
           and r.get("outcome") not in (O.UNTESTABLE, O.NOT_TESTED)]
    if not bad:
        return []
    lines = [f"unexpected results (first {min(FIRST, len(bad))} of {len(bad)}; "
             f"all of them: {where}):"]
    for r in bad[:FIRST]:
        lines.append(f"  {r['outcome'].upper()} {r.get('nodeid', '')} ({_label(r)})")
        lines.append(f"      {_first_line(r.get('message', ''), WIDTH - 6)}")
    return lines


def _untestable_lines(rows: list[dict]) -> list[str]:
    causes: dict[tuple[str, str, bool], int] = {}
    for r in rows:
        if r.get("outcome") in (O.UNTESTABLE, O.NOT_TESTED):
            message = (r.get("message") or "no reason given").strip()
            message = message.removeprefix(O.UNTESTABLE_REASON + ": ")
            key = (_label(r), message.splitlines()[0] if message else "", bool(r.get("expected")))
            causes[key] = causes.get(key, 0) + 1
    if not causes:
        return []
    total = sum(causes.values())
    lines = [f"not tested here: {total} spec(s), {len(causes)} cause(s), one line each "
             "(the fix follows the cause):"]
    for (column, cause, listed), n in sorted(causes.items(), key=lambda kv: -kv[1]):
        tag = " [listed]" if listed else ""
        # the suite's messages of this kind end with " — fix: <what to run>" (its own words)
        cause, _, fix = cause.partition(FIX_MARK)
        head = f"{column}, {n} spec(s){tag}: {cause}"
        if not fix:  # whatever it says may hold its fix: all of it
            lines += textwrap.wrap(head, WIDTH, initial_indent="  ", subsequent_indent="      ",
                                   break_on_hyphens=False)
        else:  # the cause in at most two lines, then its fix
            wrapped = textwrap.wrap(head, WIDTH, initial_indent="  ", subsequent_indent="      ",
                                    break_on_hyphens=False)
            lines += wrapped[:1]
            if len(wrapped) > 1:
                rest = " ".join(w.strip() for w in wrapped[1:])
                lines.append("      " + _first_line(rest, WIDTH - 6))
            lines += textwrap.wrap(f"fix: {fix}", WIDTH, initial_indent="      ",
                                   subsequent_indent="        ", break_on_hyphens=False)
    return lines


#: set by a parent (``conformance.parent``) for its child pytest: the parent prints the block,
#: from the results it judged, so the child does not
BY_PARENT = "TORCHRL_CONFORMANCE_BLOCK_BY_PARENT"


def block(documents: Iterable[dict], where: str = "reports/conformance.md",
          defects: bool = True, gate: str | None = None) -> list[str]:
    """The verdict block's lines (without a title line): ``where`` is the report that lists
    everything; ``defects``: list a TorchRL's known defects by area (a block of many sources
    gives each one's count only); ``gate``: the gate verdict as a parent judged it (default:
    judged here from the rows)."""
    rows, partial = rows_of(documents)
    lines = textwrap.wrap(f"gate verdict: {gate or gate_verdict(rows, partial)}", WIDTH,
                          subsequent_indent="  ", break_on_hyphens=False)
    user = user_verdict(rows)
    if user:
        who = ("your TorchRL" if any(r.get("implementation") == "torchrl" for r in rows)
               else "what is broken")
        lines += textwrap.wrap(f"{who}: {user}", WIDTH, subsequent_indent="  ")
    lines += _counts(rows)
    if defects:
        lines += _defect_lines(rows)
    lines += _unexpected_lines(rows, where)
    lines += _untestable_lines(rows)
    return lines


def main(argv: list[str] | None = None) -> int:
    import argparse

    from conformance.reporting.results_file import ResultsFileError, read

    parser = argparse.ArgumentParser(
        prog="python -m conformance.reporting.verdict",
        description="Print the verdict block of results files (exit code 1 when a result was "
                    "unexpected).")
    parser.add_argument("results", nargs="*", type=Path, default=[Path("reports") / "results.json"],
                        help="results files (default: reports/results.json)")
    paths = parser.parse_args(argv).results
    try:
        documents = [read(p) for p in paths]
    except ResultsFileError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    reports = [p.with_name("conformance.md") if p.name == "results.json" else p.with_suffix(".md")
               for p in paths]
    print("\n".join(block(documents, where=", ".join(map(str, reports)))))
    return 0 if not any(not r.get("expected") for r in rows_of(documents)[0]) else 1


if __name__ == "__main__":
    sys.exit(main())
