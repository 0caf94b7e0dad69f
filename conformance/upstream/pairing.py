"""Which tensordict a commit of pytorch/rl is tested with: an ordered rule chain.

A commit between releases was developed against tensordict's main more often than not (its
``version.txt`` says 0.6.0 while it needs ``TensorClass``, which no 0.6 release has). So the
tensordict of a git source is chosen by rules tried in order, each saying why it chose; the
runner installs each candidate in turn and keeps the first whose ``import torchrl`` works:

1. the commit's own requirements: the tensordict requirement in its ``pyproject.toml`` or
   ``setup.py`` (``tensordict>=0.12.0,<0.13.0``; ``tensordict>=0.6.0``), tested with the newest
   patch of the lowest minor it admits, the release it was written against;
2. the date rule: the newest ``tensordict-nightly`` published on or before the commit's date
   (the package index has them back to 2022; the date is the version);
3. measured overrides: none so far (a commit that neither rule makes import gets one here,
   with the measurement that justifies it).

Only git sources get the chain (a commit has a date); a plain checkout keeps the release rule.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from conformance.upstream.nightly import TENSORDICT, newest_on_or_before

REQUIREMENT = re.compile(r"""["']tensordict(?!-nightly)\s*((?:[<>=!~]=?\s*[\d.*]+\s*,?\s*)+)["']""")
OVERRIDES: dict[str, tuple[str, str]] = {}  # commit sha -> (requirement, measurement)


@dataclass
class Candidate:
    tensordict: str  # a pip requirement
    why: str


def own_requirement(tree: Path) -> str | None:
    """The tensordict specifier the source's own packaging names (``>=0.12.0,<0.13.0``)."""
    for name in ("pyproject.toml", "setup.py"):
        path = tree / name
        if path.is_file():
            found = REQUIREMENT.search(path.read_text(encoding="utf-8", errors="replace"))
            if found:
                return re.sub(r"\s+", "", found.group(1)).rstrip(",")
    return None


def lowest_minor(specifier: str) -> str | None:
    """``>=0.12.0,<0.13.0`` -> ``0.12``: the minor a lower bound names."""
    found = re.search(r"(?:>=|==|~=)(\d+)\.(\d+)", specifier)
    return f"{found.group(1)}.{found.group(2)}" if found else None


def candidates(tree: Path, commit: str | None, day: str | None, nightly_versions) -> list:
    """The rule chain for a source tree: candidates in the order they are tried.

    ``day`` is the commit's date (``2024.11.5``); ``nightly_versions()`` lists the
    tensordict-nightly versions on the index (called only when the date rule is reached).
    Empty when no rule applies: the runner then keeps the release rule (version.txt's minor)."""
    found = []
    spec = own_requirement(tree)
    minor = lowest_minor(spec) if spec else None
    if minor:
        found.append(Candidate(f"tensordict=={minor}.*", f"its own requirement "
                               f"`tensordict{spec}`: the newest {minor}.x release"))
    if day:
        try:
            nightly = newest_on_or_before(nightly_versions(), day)
        except ValueError:  # the index cannot be read: the other rules still stand
            nightly = None
        if nightly:
            found.append(Candidate(f"{TENSORDICT}=={nightly}", f"the date rule: the newest "
                                   f"{TENSORDICT} on or before the commit's date {day}"))
    if commit and commit in OVERRIDES:
        requirement, measured = OVERRIDES[commit]
        found.append(Candidate(requirement, f"measured override: {measured}"))
    return found
