"""The outcome of one test for one implementation, as results, reports and the gate name it.

A leaf module (no project imports): the pytest plugin, the report builder and the upstream runner
all read these names, so none of them has to import another to agree on a word.
"""

from __future__ import annotations

PASS = "pass"
FAIL = "fail"
ERROR = "error"  #: the test could not run (setup or teardown failed)
KNOWN_FAILURE = "known failure"  #: an expected failure from an expectations file
UNEXPECTED_PASS = "unexpected pass"  #: a known failure that passed: the entry is stale
NOT_APPLICABLE = "not applicable"  #: the implementation declares the area unsupported
UNTESTABLE = "untestable"  #: shown as "cannot be tested here: <reason>"
SKIPPED = "skipped"
NOT_TESTED = "not tested"  #: the implementation (or this area of it) could not be exercised at all

#: Outcomes that make a run fail.
UNEXPECTED = frozenset({FAIL, ERROR, UNEXPECTED_PASS, NOT_TESTED})

#: How a skip's reason starts, for the two skips that are outcomes of their own.
NOT_APPLICABLE_REASON = "not applicable"
UNTESTABLE_REASON = "cannot be tested here"
