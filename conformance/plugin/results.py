"""One machine-readable row per test x implementation, written atomically at the end of a run.

Outcomes: ``pass``, ``fail``, ``error`` (the test could not run), ``known failure`` (an expected
failure from an expectations file), ``unexpected pass`` (a known failure that passed: the entry
is stale), ``not applicable`` (the implementation declares the area unsupported), ``untestable``
("cannot be tested here": the implementation does not load on this machine) and ``skipped``.
Only ``fail``, ``error`` and ``unexpected pass`` are unexpected.
"""

from __future__ import annotations

import json
import platform
import time
from pathlib import Path

import pytest

from conformance import outcomes as O
from conformance.files import atomic_write
from conformance.plugin import keys
from conformance.versions import stack_versions


def _message(report) -> str:
    longrepr = report.longrepr
    if longrepr is None:
        return ""
    if isinstance(longrepr, tuple):  # skips: (path, line, "Skipped: reason")
        return str(longrepr[2]).removeprefix("Skipped: ")
    crash = getattr(longrepr, "reprcrash", None)
    text = crash.message if crash is not None else str(longrepr)
    return text.strip()[:4000]


def _split_id(item) -> tuple[str, str]:
    """(spec, parameters) from a node id such as test_x[torchrl-c=0.2]."""
    name = getattr(item, "originalname", None) or item.name.split("[", 1)[0]
    callspec = getattr(item, "callspec", None)
    params = ""
    if callspec is not None:
        parts = callspec.id.split("-")
        impl = callspec.params.get("impl")
        if impl is not None and parts and parts[0] == impl.id:
            parts = parts[1:]
        params = "-".join(parts)
    return name, params


def _classify(report, known: bool, skip_outcome: str | None) -> str | None:
    """The outcome of one phase's report, from what the item carries: the expectations entry that
    marked it (strict xfail: a failing call is reported skipped, a passing one failed) and the
    kind of skip its area fixture raised. Nothing is recovered from pytest's report texts."""
    if report.when == "call" and known:
        if report.skipped:
            return O.KNOWN_FAILURE
        return O.UNEXPECTED_PASS if report.failed else O.PASS
    if report.when == "call" and report.passed:
        return O.PASS
    if report.skipped:
        return skip_outcome or O.SKIPPED
    if report.failed:
        return O.FAIL if report.when == "call" else O.ERROR
    return None


class ResultsPlugin:
    def __init__(self, config, selected, results_path: Path, build_report: bool):
        self.config = config
        self.selected = selected
        self.results_path = results_path
        self.build_report = build_report
        self.rows: dict[str, dict] = {}
        self.started = time.time()

    def _row(self, item_or_report):
        nodeid = item_or_report.nodeid
        return self.rows.setdefault(nodeid, {"nodeid": nodeid})

    @pytest.hookimpl(trylast=True)
    def pytest_collection_modifyitems(self, items):
        for item in items:
            row = self._row(item)
            impl = getattr(getattr(item, "callspec", None), "params", {}).get("impl")
            spec, params = _split_id(item)
            path = item.nodeid.split("::", 1)[0]
            row.update(
                area=Path(path).stem.removeprefix("test_"),
                spec=spec,
                parameters=params,
                implementation=impl.id if impl is not None else "",
                implementation_version=impl.version if impl is not None else "",
                outcome=None,
                expected=None,
                message="",
                duration=0.0,
            )

    # outermost wrapper: sees the report after pytest's xfail handling has rewritten it
    @pytest.hookimpl(hookwrapper=True, tryfirst=True)
    def pytest_runtest_makereport(self, item, call):
        report = (yield).get_result()
        row = self.rows.get(item.nodeid)
        if row is None:
            return
        row["duration"] = round(row["duration"] + report.duration, 6)
        entry = item.stash.get(keys.EXPECTATION, None)
        outcome = _classify(report, entry is not None, item.stash.get(keys.SKIP_OUTCOME, None))
        if outcome is None:
            return
        # the first non-pass phase decides (a failing teardown after a pass is an error)
        if row["outcome"] in (None, O.PASS):
            row["outcome"] = outcome
            row["expected"] = outcome not in O.UNEXPECTED
            row["message"] = _message(report) if outcome != O.PASS else ""
            if outcome == O.KNOWN_FAILURE:
                known = f"known failure: {entry.reason} ({entry.link})"
                row["message"] = f"{_message(report)}  [{known}]".strip()

    def pytest_sessionfinish(self, session, exitstatus):
        rows = [r for r in self.rows.values() if r.get("outcome") is not None]
        if not rows:
            return
        document = {
            "schema": 1,
            "started": self.started,
            "finished": time.time(),
            "exitstatus": int(exitstatus),
            "python": platform.python_version(),
            "stack": stack_versions(),
            "implementations": {s.id: s.version for s in self.selected},
            "rows": rows,
        }
        atomic_write(self.results_path, json.dumps(document, indent=1))
        self._written = [self.results_path]
        if self.build_report:
            try:
                from conformance.reporting.matrix import write_reports

                written = write_reports([self.results_path], self.results_path.parent)
            except Exception as exc:  # noqa: BLE001 - a report problem must not hide the verdict
                self.config.get_terminal_writer().line(
                    f"conformance: report not built ({type(exc).__name__}: {exc})", yellow=True
                )
            else:
                self._written += written

    def pytest_terminal_summary(self, terminalreporter):
        written = getattr(self, "_written", [])
        if written:
            terminalreporter.write_sep("-", "conformance results and report")
            for path in written:
                terminalreporter.write_line(str(path))
