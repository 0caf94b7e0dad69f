"""Output that cannot run: the one escape rule of every page and report this suite writes.

Every value a writer puts into HTML goes through :func:`text` (element content and quoted
attribute values alike: ``& < > " '`` are all escaped, so a value cannot close its attribute or
open an element), and every link target through :func:`url`, which keeps only ``http(s)`` links
and links without a scheme (relative ones, ``#anchors``); anything else (``javascript:``,
``data:``, ``vbscript:``, in any case or with the control characters a browser drops) becomes
``#``. Values come from places anyone can write into: commit subjects and pull-request fields
of upstream's history, an implementation's failure messages, a benchmark report's Markdown.

Writers use :func:`link` and :func:`image` for the two elements that carry a URL. The
self-test (tests/project/test_escape.py) feeds markup through every field and checks
the built pages.
"""

from __future__ import annotations

import html
import re

SAFE_SCHEMES = ("http", "https")
#: what a browser ignores inside a URL before reading its scheme (C0 controls, space)
_IGNORED = re.compile(r"[\x00-\x20\x7f]+")
_SCHEME = re.compile(r"^([A-Za-z][A-Za-z0-9+.\-]*):")


def text(value) -> str:
    """``value`` as HTML text, safe in element content and in a quoted attribute value."""
    return html.escape("" if value is None else str(value), quote=True)


def url(value) -> str:
    """A link target that cannot run: http(s) or scheme-less, else ``#``; escaped for an
    attribute."""
    raw = "" if value is None else str(value)
    squeezed = _IGNORED.sub("", html.unescape(raw))  # as a browser would read it
    match = _SCHEME.match(squeezed)
    if match and match.group(1).lower() not in SAFE_SCHEMES:
        return "#"
    if squeezed.startswith(("\\", "/\\")):  # read as //host by browsers: another origin's scheme
        return "#"
    return text(raw)


def link(href, label, **attrs) -> str:
    """``<a href=...>label</a>`` with the target through :func:`url` and the label as text."""
    extra = "".join(f" {name.rstrip('_')}='{text(v)}'" for name, v in attrs.items())
    return f"<a href='{url(href)}'{extra}>{text(label)}</a>"


def image(src, alt) -> str:
    """``<img src=... alt=...>`` with the source through :func:`url` and the alt text escaped."""
    return f"<img src='{url(src)}' alt='{text(alt)}'>"
