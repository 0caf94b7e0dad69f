"""The verdict of one source's run: a small typed value, with the sentence shown beside it.

A leaf module. The upstream runner judges each source (``runner.verdict``) and every step after
it (the history, the exit code, the partial flag for the gate) asks the verdict's ``status``,
never the words of its sentence.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass


class Status(enum.Enum):
    CONFORMANT = "conformant"  #: every row as its expectations say, pytest content
    UNEXPECTED = "unexpected"  #: some row not as expected
    PYTEST_FAILED = "pytest failed"  #: every row expected, but pytest exited non-zero
    NOT_TESTED = "not tested"  #: the source was not exercised (not resolved, installed, imported)
    PARTIAL = "partial"  #: narrowed or stopped early: no conformance verdict at all


@dataclass(frozen=True)
class Verdict:
    status: Status
    text: str  # the sentence shown to a person ("3 unexpected result(s)")

    @property
    def passed(self) -> bool:
        return self.status is Status.CONFORMANT

    @property
    def complete(self) -> bool:
        """Whether the run is a verdict on the source (the history records only these)."""
        return self.status not in (Status.PARTIAL, Status.NOT_TESTED)

    def __iter__(self):
        """Unpacks as ``passed, text`` (the pair callers read before the status existed)."""
        return iter((self.passed, self.text))
