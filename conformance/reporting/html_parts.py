"""Parts of the HTML report that hold text from rows and from upstream: escaped by construction.

Every value goes through :func:`text` and every link through :func:`link`: the project's one
escape rule (``conformance.escape``), with one more restriction here: an anchor only for an
absolute ``http(s)`` URL (a row's or an upstream thread's text never links into the report).
Nothing a row or an upstream thread says is ever markup. Messages are whole (a fold, ``<details>``, holds them),
never cut: a link inside a message stays whole and clickable.
"""

from __future__ import annotations

import re

from conformance import escape
from conformance.reporting import verdict as V

URL = re.compile(r"https?://[^\s<>\"')\]]+")


text = escape.text


def link(url, label=None) -> str:
    """An anchor for an absolute http(s) URL (``conformance.escape.link``); anything else is
    shown as text."""
    url = "" if url is None else str(url)
    if not URL.fullmatch(url):
        return text(label if label is not None else url)
    return escape.link(url, label if label is not None else url)


def url_label(url: str) -> str:
    """Short text for a link (the link itself stays whole): ``pytorch/rl#2402`` for an issue or
    a pull request, ``pytorch/rl:ppo.py#L1073`` for a file."""
    text = url.replace("https://github.com/", "")
    parts = text.split("/")
    if len(parts) >= 4 and parts[2] in ("issues", "pull"):
        return f"{parts[0]}/{parts[1]}#{parts[3]}"
    if len(parts) >= 5 and parts[2] == "blob":
        return f"{parts[0]}/{parts[1]}:{parts[-1]}"
    return text


def linked(message) -> str:
    """``message`` escaped, its http(s) URLs as whole anchors."""
    message = "" if message is None else str(message)
    out, last = [], 0
    for found in URL.finditer(message):
        out.append(text(message[last:found.start()]))
        out.append(link(found.group(0)))
        last = found.end()
    out.append(text(message[last:]))
    return "".join(out)


def message(row: dict) -> str:
    """A row's message: its first line as the fold's summary, the whole of it inside."""
    body = (row.get("message") or "").strip()
    fields = []
    if row.get("defect"):
        fields.append(f"defect <code>{text(row['defect'])}</code>")
    if row.get("reason"):
        fields.append(f"listed: {text(row['reason'])}")
    if row.get("link"):
        fields.append(link(row["link"]))
    listed = f" <span class='listed'>[{'; '.join(fields)}]</span>" if fields else ""
    if not body:
        return listed
    first = body.splitlines()[0]
    if first == body:
        return f" {linked(body)}{listed}"
    return (f"{listed}<details><summary>{linked(first)}</summary>"
            f"<pre>{linked(body)}</pre></details>")


def verdicts(rows: list[dict]) -> str:
    """The two verdicts, named apart: the gate's and the user's."""
    partial = sorted({r.get("partial") for r in rows if r.get("partial")})
    gate = V.gate_verdict(rows, partial)
    good = gate == V.GATE_OK
    user = V.user_verdict(rows)
    return (f"<p id='verdict' class='verdict{'' if good else ' bad'}'><strong>gate verdict:"
            f"</strong> {text(gate)}</p>"
            + (f"<p id='user-verdict' class='user'><strong>your TorchRL:</strong> {text(user)}"
               "</p>" if user else ""))


def defects(rows: list[dict]) -> str:
    """TorchRL's known defects: slug, area, what it is, its upstream thread, the reproducer to
    run, how many specs show it."""
    try:
        from conformance import defects as catalogue
        by_slug = catalogue.BY_SLUG
    except ImportError:
        by_slug = {}
    found: dict[tuple[str, str], int] = {}
    for r in rows:
        if r.get("outcome") == "known failure" and r.get("defect"):
            key = (V._label(r), r["defect"])
            found[key] = found.get(key, 0) + 1
    if not found:
        return ""
    kinds = getattr(catalogue, "KINDS", {}) if by_slug else {}
    body = []
    for (column, slug), n in sorted(found.items()):
        d = by_slug.get(slug)
        thread = getattr(d, "upstream", None)
        # its own link, the link its entries carry, then the prior threads the search found;
        # each once (an entry's upstream and related link are often the same thread)
        threads = list(dict.fromkeys(
            u for u in (thread, getattr(d, "related", None),
                        *(t.url for t in getattr(d, "threads", ()))) if u))
        kind = getattr(d, "kind", "")
        body.append(
            f"<tr id='defect={text(slug)}'><td><code>{text(slug)}</code></td><td>{text(column)}"
            f"</td><td>{text(getattr(d, 'area', ''))}</td>"
            f"<td>{text(kinds.get(kind, kind))}<br>{text(getattr(d, 'repository', ''))}</td>"
            f"<td>{text(getattr(d, 'summary', ''))}"
            f"</td><td>{'<br>'.join(link(u, url_label(u)) for u in threads)}</td>"
            f"<td><code>python -m conformance.upstream.bugs --reproduce {text(slug)}</code></td>"
            f"<td>{n}</td></tr>")
    return ("<h2 id='defects'>TorchRL's known defects and their reproducers</h2><table><thead>"
            "<tr><th>defect</th><th>column</th><th>area</th><th>kind, filed at</th><th>what</th>"
            "<th>upstream threads</th>"
            "<th>reproduce</th><th>specs</th></tr></thead><tbody>" + "".join(body)
            + "</tbody></table>")
