"""One-line texts the upstream modules share: a command's last line, a label-safe name."""

from __future__ import annotations

import re


def last_line(text: str) -> str:
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    return lines[-1][:300] if lines else "no output"


def safe(text: str) -> str:
    return re.sub(r"[^\w.+-]+", "_", text).strip("_") or "source"
