"""Deliberately broken implementations (historical bugs), plugged into the suite with
``--impl tests.mutants.<module>:<NAME>`` exactly as a user plugs in their own code."""

from types import SimpleNamespace


def implementation(name: str, **areas) -> SimpleNamespace:
    """A one-area implementation as a user would write it: a name, a version, the area."""
    return SimpleNamespace(name=name, version="mutant", **areas)


def assert_fails_with(suite_run, mutant: str, words: str, specs) -> None:
    """Each of ``specs`` (test ids after ``::``) failed for ``mutant`` with ``words`` in its
    message, in the suite run ``suite_run`` (``tests.conftest.run_suite``)."""
    assert suite_run.results is not None, suite_run.output[-3000:]
    failing = {r["nodeid"].split("::", 1)[-1]: r["message"]
               for r in suite_run.rows(implementation=mutant, outcome="fail")}
    missing = [s for s in specs if words not in failing.get(s, "")]
    assert not missing, f"{mutant}: not failing with {words!r}: {missing}; failures: {failing}"


def assert_unmutated_passes(suite_run, count) -> None:
    """The construction without an edit ran ``count`` specs and passed every one of them."""
    rows = suite_run.rows(implementation="UNMUTATED")
    assert len(rows) == count and all(r["outcome"] == "pass" for r in rows), [
        (r["nodeid"], r["outcome"], r["message"][:300]) for r in rows]
