"""TorchRL nightly builds as a source: ``nightly``, ``nightly:YYYY.MM.DD`` or a nightly wheel file.

A nightly is what users of main get: ``torchrl-nightly`` on the package index, one version per
day (``2026.10.27``). It is paired by an ordered rule chain, each rule saying why it chose:

1. tensordict: the ``tensordict-nightly`` of the same date, or the newest published before it
   (the two are published separately; a day can be missing from either);
2. torch: the first base torch (the stack's first) that the wheel's own ``Requires-Dist: torch``
   admits;
3. helpers (pyvers, hoptorch, ...): the wheel's own requirements, minus what the base has.

The column is labelled by the date (``nightly-2026.10.27``). The index is read with
``pip index versions`` and wheels fetched with ``pip download --no-deps``; both go through
``Index`` so the rules are tested without network (tests/upstream/test_upstream_nightly.py).
"""

from __future__ import annotations

import re
import subprocess
import zipfile
from dataclasses import dataclass
from pathlib import Path

from packaging.requirements import InvalidRequirement, Requirement
from packaging.version import InvalidVersion, Version

TORCHRL, TENSORDICT = "torchrl-nightly", "tensordict-nightly"
# Provided by the base environment (the suite's own dependencies), never installed per source.
IN_BASE = {"torch", "numpy", "packaging", "cloudpickle", "typing-extensions", "tensordict",
           TENSORDICT, "importlib-metadata", "orjson"}


class NightlyError(ValueError):
    pass


def date_of(version: str) -> tuple[int, int, int] | None:
    parts = version.split(".")
    if len(parts) != 3 or not all(p.isdigit() for p in parts) or len(parts[0]) != 4:
        return None
    return int(parts[0]), int(parts[1]), int(parts[2])


def newest_on_or_before(versions, day: str | None) -> str | None:
    """The newest dated version not after ``day`` (any when ``day`` is None)."""
    limit = date_of(day) if day else None
    dated = [(date_of(v), v) for v in versions if date_of(v)]
    dated = [(d, v) for d, v in dated if limit is None or d <= limit]
    return max(dated)[1] if dated else None


class Index:
    """The package index as pip sees it (pip's own configuration, mirrors and all)."""

    def __init__(self, python: str):
        self.python = python

    def versions(self, dist: str) -> list[str]:
        proc = subprocess.run([self.python, "-m", "pip", "index", "versions", dist],
                              capture_output=True, text=True, timeout=300)
        found = re.search(r"Available versions: (.*)", proc.stdout)
        if proc.returncode or not found:
            last = (proc.stderr.strip().splitlines() or ["no answer"])[-1][:200]
            raise NightlyError(f"cannot list {dist} on the package index: {last}")
        return [v.strip() for v in found.group(1).split(",")]

    def download(self, dist: str, version: str, folder: Path) -> Path:
        folder.mkdir(parents=True, exist_ok=True)
        wanted = f"{dist.replace('-', '_')}-{version}-"
        have = [p for p in folder.glob("*.whl") if p.name.startswith(wanted)]
        if have:
            return have[0]
        proc = subprocess.run([self.python, "-m", "pip", "download", "-q", "--no-deps",
                               "--progress-bar", "off", "-d", str(folder), f"{dist}=={version}"],
                              capture_output=True, text=True, timeout=1200)
        have = [p for p in folder.glob("*.whl") if p.name.startswith(wanted)]
        if proc.returncode or not have:
            last = (proc.stderr.strip().splitlines() or ["no wheel"])[-1][:200]
            raise NightlyError(f"cannot download {dist}=={version}: {last}")
        return have[0]


def requirements(wheel: Path) -> list[Requirement]:
    """The wheel's unconditional ``Requires-Dist`` lines (extras and markers that do not hold
    here are left out)."""
    with zipfile.ZipFile(wheel) as archive:
        name = next((n for n in archive.namelist() if n.endswith(".dist-info/METADATA")), None)
        if name is None:
            raise NightlyError(f"{wheel.name} is not a wheel: no .dist-info/METADATA inside")
        text = archive.read(name).decode("utf-8", errors="replace")
    found = []
    for line in text.splitlines():
        if not line.startswith("Requires-Dist:"):
            continue
        try:
            req = Requirement(line.partition(":")[2].strip())
        except InvalidRequirement:
            continue
        if req.marker is None or req.marker.evaluate({"extra": ""}):
            found.append(req)
    return found


def resolve(source, index, base_torches: list[str], wheels: Path):
    """Pin a parsed nightly source (``sources.parse``): its date, wheel and pairing."""
    published = None
    if not source.install:  # nightly or nightly:DATE, from the index
        published = index.versions(TORCHRL)
        day = source.version or newest_on_or_before(published, None)
        if day is None or day not in published:
            before = newest_on_or_before(published, day) if day else None
            raise NightlyError(f"no {TORCHRL} {day or ''} on the package index".replace("  ", " ")
                               + (f" (the newest before it: {before})" if before else ""))
        source.version = day
        source.install = [str(index.download(TORCHRL, day, wheels))]
    chosen = pair(source.version, Path(source.install[0]), index.versions, base_torches)
    source.tensordict_pin, source.torch_pin = chosen.tensordict, chosen.torch
    source.extras, source.pairing = chosen.extras, chosen.why
    return source


@dataclass
class Pairing:
    tensordict: str  # a pip requirement
    torch: str  # a torch version with a base environment
    extras: list[str]
    why: list[str]  # one line per rule, in the order applied


def pair(day: str, wheel: Path, index_versions, base_torches: list[str]) -> Pairing:
    """Apply the rule chain to the torchrl-nightly wheel of ``day``."""
    why = []
    tensordict = newest_on_or_before(index_versions(TENSORDICT), day)
    if tensordict is None:
        raise NightlyError(f"no {TENSORDICT} published on or before {day}")
    why.append(f"{TENSORDICT} {tensordict}: " + (
        "published the same day" if tensordict == day else f"the newest before {day}"))
    reqs = requirements(wheel)
    torch_req = next((r for r in reqs if r.name == "torch"), None)
    torch = None
    for candidate in base_torches:
        try:
            ok = torch_req is None or torch_req.specifier.contains(Version(candidate),
                                                                    prereleases=True)
        except InvalidVersion:
            ok = False
        if ok:
            torch = candidate
            break
    if torch is None:
        raise NightlyError(f"the wheel requires {torch_req}; no base torch admits it "
                           f"({', '.join(base_torches) or 'none given'}): give one with --base")
    why.append(f"torch {torch}: the first base torch that the wheel's "
               f"`{torch_req or 'torch (unpinned)'}` admits")
    extras = sorted(str(r) for r in reqs if r.name.lower().replace("_", "-") not in IN_BASE)
    if extras:
        why.append(f"helpers from the wheel's requirements: {', '.join(extras)}")
    return Pairing(f"{TENSORDICT}=={tensordict}", torch, extras, why)
