"""Where the reference deliberately differs from TorchRL, as TorchRL's own tests see it.

Each entry names the tests it covers (a regex on the junit test id), the failure message it
expects (a regex: a different failure of the same test is *not* covered), why the reference
differs and the spec behind it. The README table "Where the reference deliberately differs"
lists the same entries; ``tests/test_dropin.py`` checks that the two agree.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Difference:
    title: str
    tests: str
    message: str
    reason: str
    spec: str


DOCUMENTED: list[Difference] = []
