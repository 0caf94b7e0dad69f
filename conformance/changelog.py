"""Suite releases: no spec id disappears or changes without a CHANGELOG.md entry saying so.

Spec ids (``conformance/manifest.json``) are the keys of every consumer's expectations file: a
renamed or removed id silently stops an entry from applying. So the ids of the last release are
kept in ``conformance/manifest_released.json`` (``{"version": "0.1.0", "areas": {...}}``, the
shape of the manifest), and every id of it that is not in the current manifest must be named, in
backticks, by a ``- removed`` or ``- renamed`` line of a CHANGELOG.md section newer than that
release (``## Unreleased`` or ``## <version>``); a rename names the new id too, and the new id
must exist::

    - removed `conformance/test_x.py::test_y[a=1]`: why
    - renamed `conformance/test_x.py::test_old` -> `conformance/test_x.py::test_new`: why

    python -m conformance.changelog            # exit 1, one line a problem
    python -m conformance.changelog --release  # after a release: its ids become the baseline
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

from conformance import __version__
from conformance.paths import ROOT

CHANGELOG = ROOT / "CHANGELOG.md"
MANIFEST = ROOT / "conformance" / "manifest.json"
RELEASED = ROOT / "conformance" / "manifest_released.json"
_HEADING = re.compile(r"^## +\[?(?P<name>[^\]\s]+)\]?")
_ENTRY = re.compile(r"^\s*[-*] +(?P<kind>removed|renamed)\b(?P<rest>.*)$", re.IGNORECASE)
_CODE = re.compile(r"`([^`]+)`")


class ChangelogError(ValueError):
    """A file the check needs is missing or malformed (one line)."""


def ids_of(document: dict) -> set[str]:
    areas = document.get("areas") if isinstance(document, dict) else None
    if not isinstance(areas, dict):
        raise ChangelogError("not a manifest of spec ids ({'areas': {area: [ids]}})")
    return {i for ids in areas.values() for i in ids}


def sections(text: str) -> list[tuple[str, list[str]]]:
    """The ``## <name>`` sections of a changelog, newest first, with their lines."""
    found: list[tuple[str, list[str]]] = []
    for line in text.splitlines():
        heading = _HEADING.match(line)
        if heading:
            found.append((heading["name"], []))
        elif found:
            found[-1][1].append(line)
    return found


def entries_since(text: str, released: str) -> dict[str, list[list[str]]]:
    """``{"removed": [[id]], "renamed": [[old, new]]}`` of the sections above ``## released``."""
    entries: dict[str, list[list[str]]] = {"removed": [], "renamed": []}
    for name, lines in sections(text):
        if name == released:
            break
        for line in lines:
            entry = _ENTRY.match(line)
            if entry:
                entries[entry["kind"].lower()].append(_CODE.findall(entry["rest"]))
    return entries


def problems(released: dict, current: dict, changelog: str) -> list[str]:
    """Each id of the release that is gone from ``current`` without an entry, and each entry
    that does not hold (a rename to an id that does not exist), one line each."""
    version = str(released.get("version", ""))
    if not version:
        raise ChangelogError("the released manifest names no version")
    if version not in [name for name, _ in sections(changelog)]:
        raise ChangelogError(f"CHANGELOG.md has no section '## {version}' (the released ids' "
                             "version)")
    before, now = ids_of(released), ids_of(current)
    entries = entries_since(changelog, version)
    documented = {ids[0] for ids in entries["removed"] if ids}
    out = []
    for ids in entries["renamed"]:
        if len(ids) != 2:
            out.append(f"CHANGELOG.md: a 'renamed' entry names {len(ids)} id(s) in backticks, "
                       "not `old` -> `new`")
            continue
        documented.add(ids[0])
        if ids[1] not in now:
            out.append(f"CHANGELOG.md: renamed to `{ids[1]}`, which is not in "
                       "conformance/manifest.json")
    for gone in sorted(before - now - documented):
        out.append(f"spec id `{gone}` of release {version} is gone from conformance/manifest.json "
                   "and no CHANGELOG.md entry since says so ('- removed `ID`: why' or "
                   "'- renamed `OLD` -> `NEW`: why')")
    return out


def _load(path: Path) -> dict:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ChangelogError(f"{path.name}: cannot read it ({type(exc).__name__})") from None


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    prog = "python -m conformance.changelog"
    if argv not in ([], ["--release"]):
        print(f"{prog}: error: usage: {prog} [--release]", file=sys.stderr)
        return 2
    try:
        current = _load(MANIFEST)
        if argv == ["--release"]:
            snapshot = {"version": __version__, "areas": current["areas"]}
            RELEASED.write_text(json.dumps(snapshot, indent=1) + "\n", encoding="utf-8")
            print(f"{RELEASED.name}: the {len(ids_of(current))} spec ids of {__version__}")
            return 0
        found = problems(_load(RELEASED), current, CHANGELOG.read_text(encoding="utf-8"))
    except (ChangelogError, OSError, KeyError) as exc:
        print(f"{prog}: error: {exc}", file=sys.stderr)
        return 2
    for line in found:
        print(f"{prog}: {line}", file=sys.stderr)
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
