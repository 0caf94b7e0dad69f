"""The little Markdown our own reports use (headings, tables, lists, paragraphs, bold, code,
links) as HTML, so a report page needs no Markdown library in the browser or at build time."""

from __future__ import annotations

import re
from html import escape, unescape

from conformance.escape import url as safe_url

_INLINE = [
    (re.compile(r"`([^`]+)`"), r"<code>\1</code>"),
    (re.compile(r"!\[([^\]]*)\]\(([^)\s]+)\)"), r"<img src='\2' alt='\1'>"),
    (re.compile(r"\*\*([^*]+)\*\*"), r"<strong>\1</strong>"),
    (re.compile(r"\[([^\]]+)\]\(([^)\s]+)\)"), r"<a href='\2'>\1</a>"),
]


def inline(text: str, link=None) -> str:
    # conformance.escape: every value escaped (quotes too: alt text cannot leave its
    # attribute), every link target http(s) or relative (a javascript: link becomes "#")
    out = escape(text, quote=True)
    target = (lambda raw: link(unescape(raw))) if link else unescape
    for pattern, replacement in _INLINE:
        if replacement.startswith("<img"):
            out = pattern.sub(lambda m: f"<img src='{safe_url(target(m.group(2)))}' "
                                        f"alt='{m.group(1)}'>", out)
        elif replacement.startswith("<a"):
            out = pattern.sub(lambda m: f"<a href='{safe_url(target(m.group(2)))}'>"
                                        f"{m.group(1)}</a>", out)
        else:
            out = pattern.sub(replacement, out)
    return out


def _cells(line: str) -> list[str]:
    body = line.strip().strip("|")
    return [c.strip().replace("\\|", "|") for c in re.split(r"(?<!\\)\|", body)]


def to_html(text: str, link=None) -> str:
    """``link(target)`` rewrites link targets (a report's relative links, for the site)."""
    out, lines, i = [], text.splitlines(), 0
    while i < len(lines):
        line = lines[i]
        if not line.strip():
            i += 1
            continue
        heading = re.match(r"^(#{1,6}) (.*)$", line)
        if heading:
            level = len(heading.group(1))
            out.append(f"<h{level}>{inline(heading.group(2), link)}</h{level}>")
            i += 1
        elif line.lstrip().startswith("|"):
            block = []
            while i < len(lines) and lines[i].lstrip().startswith("|"):
                block.append(lines[i])
                i += 1
            rows = [_cells(b) for b in block if not re.match(r"^\s*\|[\s|:-]+\|\s*$", b)]
            head, body = rows[0], rows[1:]
            out.append("<table class='md'><thead><tr>" + "".join(f"<th>{inline(c, link)}</th>" for c in head)
                       + "</tr></thead><tbody>" + "".join(
                           "<tr>" + "".join(f"<td>{inline(c, link)}</td>" for c in row) + "</tr>" for row in body)
                       + "</tbody></table>")
        elif re.match(r"^\s*[-*] ", line):
            items = []
            while i < len(lines) and re.match(r"^\s*[-*] ", lines[i]):
                items.append(re.sub(r"^\s*[-*] ", "", lines[i]))
                i += 1
                while i < len(lines) and lines[i].startswith("  ") and lines[i].strip():
                    items[-1] += " " + lines[i].strip()
                    i += 1
            out.append("<ul>" + "".join(f"<li>{inline(t, link)}</li>" for t in items) + "</ul>")
        elif line.startswith("```"):
            i += 1
            block = []
            while i < len(lines) and not lines[i].startswith("```"):
                block.append(lines[i])
                i += 1
            i += 1
            out.append("<pre>" + escape("\n".join(block)) + "</pre>")
        else:
            para = []
            while i < len(lines) and lines[i].strip() and not re.match(r"^(#|\||\s*[-*] |```)", lines[i]):
                para.append(lines[i].strip())
                i += 1
            out.append(f"<p>{inline(' '.join(para), link)}</p>")
    return "\n".join(out)
