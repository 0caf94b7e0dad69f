"""One machine-readable row per test x implementation, written atomically at the end of a run.

Outcomes are named in ``conformance.outcomes``. Each row says whether its outcome was
``expected``: a pass, a known failure, a "not applicable" area, and a "cannot be tested here"
listed in the expectations are; a failure, an error, an unexpected pass, a NOT TESTED
implementation and an unlisted "cannot be tested here" are not, and make the run fail.

The verdict of each test phase is computed where the test runs (:class:`OutcomeRecorder`, from
what the item carries: its expectations entry and the kind of skip its area fixture raised) and
travels on the report as the attribute ``conformance``, which pytest-xdist carries from its
workers. :class:`ResultsPlugin` collects the rows where the run is controlled. A test whose
report has no verdict was reported by xdist for a worker that died: the watchdog's notes say
whether it hung or crashed.

A run that is interrupted, filtered (-k, -m, node ids, deselection) or stopped early is
*partial*: the document says why, and it does not replace the full report by default.

The document's shape is ``conformance.record``'s (schema 2): it describes its source, and a row
that matched an expectation carries that entry's reason and link as fields (a known failure of
TorchRL also the catalogued defect it shows, ``conformance.defects``); a message is the test's
own words, nothing is formatted into it for a reader to parse back.
"""

from __future__ import annotations

import json
import platform
import re
import time
from pathlib import Path

import pytest

from conformance import __version__, device, record
from conformance import outcomes as O
from conformance.files import replace_all
from conformance.interface import Untestable
from conformance.paths import scrub
from conformance.plugin import catalogue, completeness, keys, not_applicable
from conformance.plugin.expectations import item_impl
from conformance.plugin.watchdog import Watchdog, crash_explanation, timed_out_message
from conformance.versions import stack_versions

SCHEMA = record.SCHEMA
DEFAULT_RESULTS = Path("reports") / "results.json"
PARTIAL_DIR = "partial"
_ADDRESS = re.compile(r" at 0x[0-9a-fA-F]+")


def _message(report) -> str:
    longrepr = report.longrepr
    if longrepr is None:
        return ""
    if isinstance(longrepr, tuple):  # skips: (path, line, "Skipped: reason")
        text = str(longrepr[2]).removeprefix("Skipped: ")
    else:
        crash = getattr(longrepr, "reprcrash", None)
        text = crash.message if crash is not None else str(longrepr)
    # object addresses (hypothesis prints its arguments' reprs) differ from run to run, and
    # hypothesis's explanation names files by absolute path: neither belongs in a report
    return scrub(_ADDRESS.sub("", text.strip()))[:4000]


def classify(report, entry, skip_outcome: str | None, timed_out: str,
             raised: bool = False) -> dict | None:
    """The verdict of one phase: outcome, expected, message; None for a phase that says nothing
    (a passing setup or teardown). ``raised``: the phase raised (under ``--runxfail`` a known
    failure then fails as such, and only a failing phase that raised nothing is a strict xfail
    that passed)."""
    kind = getattr(entry, "kind", "fail") if entry is not None else None
    known = f"known failure: {entry.reason} ({entry.link})" if entry is not None else ""
    message = _message(report)
    if timed_out:
        # whatever the test raised on the way out (hypothesis may report the interruption as
        # flakiness) is a consequence, not the verdict
        return {"outcome": O.FAIL if report.when == "call" else O.ERROR, "expected": False,
                "message": timed_out}
    if skip_outcome == O.NOT_APPLICABLE and kind == "fail" and report.skipped:
        # a known failure that turned out not applicable (the implementation declares it, see
        # conformance.plugin.not_applicable): the entry no longer describes what happens
        return {"outcome": O.NOT_APPLICABLE, "expected": False,
                "message": f"{message}  [listed as a {known}, but it is not applicable: remove "
                           "the entry]"}
    if report.when == "call" and kind == "fail":
        if report.skipped:  # strict xfail: the failure was expected (reason, link: fields)
            return {"outcome": O.KNOWN_FAILURE, "expected": True, "message": message}
        if report.failed and raised:  # --runxfail: the known failure, shown as it fails
            return {"outcome": O.KNOWN_FAILURE, "expected": True,
                    "message": f"{message}  [--runxfail]".strip()}
        if report.failed or report.passed:  # strict xfail (or --runxfail): it passed
            return {"outcome": O.UNEXPECTED_PASS, "expected": False,
                    "message": f"passed, but listed as a {known}: remove the entry"}
    if report.skipped:
        outcome = skip_outcome or O.SKIPPED
        if outcome == O.UNTESTABLE:
            return {"outcome": outcome, "expected": kind == "untestable", "message": message}
        if outcome == O.SKIPPED:
            # a skip the suite did not declare (the implementation under test, or a plug-in,
            # raised pytest's Skipped): the spec did not run, which is never a conformant result
            return {"outcome": outcome, "expected": False,
                    "message": f"{message}  [a skip the suite does not declare: the spec did "
                               "not run]".strip()}
        return {"outcome": outcome, "expected": outcome not in O.UNEXPECTED, "message": message}
    stale = (f"  [listed as cannot be tested here ({entry.reason}), but it ran: remove the entry]"
             if kind == "untestable" else "")
    if report.when == "call" and report.passed:
        if stale:
            return {"outcome": O.UNEXPECTED_PASS, "expected": False, "message": stale.strip()}
        return {"outcome": O.PASS, "expected": True, "message": ""}
    if report.failed:
        return {"outcome": O.FAIL if report.when == "call" else O.ERROR, "expected": False,
                "message": message + stale}
    return None


def not_a_pass(row: dict) -> None:
    """A spec that needed a rerun is not a pass: whatever retried it (pytest-rerunfailures,
    a flaky marker, a plug-in of the environment), the row says it failed first."""
    if row.get("reruns") and row.get("outcome") == O.PASS:
        first = next((m for m in row.get("rerun_messages", []) if m), "")
        row.update(outcome=O.FAIL, expected=False,
                   message=encodable(f"passed only after {row['reruns']} rerun(s): a spec that "
                                     f"needs a rerun is not a pass; it failed first: {first}"
                                     )[:4000])


class OutcomeRecorder:
    """Where tests run: turn an implementation's own NotImplementedError into "not applicable",
    and attach each phase's verdict to its report."""

    def __init__(self, watchdog: Watchdog):
        self.watchdog = watchdog

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_call(self, item):
        try:
            return (yield)
        except Untestable as exc:  # an area that cannot run this call here (e.g. on this device)
            item.stash[keys.SKIP_OUTCOME] = O.UNTESTABLE
            pytest.skip(f"{O.UNTESTABLE_REASON}: {str(exc) or 'no reason given'}")
        except NotImplementedError as exc:
            why = not_applicable.for_item(item, exc)
            if why is None:  # raised by the library, the spec or a network it handed in
                raise
            item.stash[keys.SKIP_OUTCOME] = O.NOT_APPLICABLE
            where = not_applicable.raising_module(exc)
            pytest.skip(f"{O.NOT_APPLICABLE_REASON}: {why} (declared by {where})")

    # outermost wrapper: sees the report after pytest's xfail handling has rewritten it
    @pytest.hookimpl(hookwrapper=True, tryfirst=True)
    def pytest_runtest_makereport(self, item, call):
        report = (yield).get_result()
        # asked of the watchdog, not of the exception: hypothesis may wrap it in another one
        timed_out = (timed_out_message(self.watchdog.seconds)
                     if self.watchdog.fired == item.nodeid and call.excinfo is not None else "")
        entry = item.stash.get(keys.EXPECTATION, None)
        report.conformance = classify(report, entry, item.stash.get(keys.SKIP_OUTCOME, None),
                                      timed_out, raised=call.excinfo is not None)
        if report.conformance is not None and entry is not None:
            report.conformance.update(expectation_fields(item.nodeid, item_impl(item), entry,
                                                         report.conformance["outcome"]))
        known = (report.conformance or {}).get("outcome") == O.KNOWN_FAILURE
        otherwise = (entry.failed_otherwise(call.excinfo.value)
                     if known and call.excinfo is not None else None)
        if otherwise:  # a known failure that fails some other way than its entry says
            message = (f"listed as a known failure ({entry.reason}; expected: {entry.failure}), "
                       f"but it failed otherwise: {otherwise}")
            report.outcome, report.longrepr = "failed", message
            if hasattr(report, "wasxfail"):
                del report.wasxfail
            report.conformance = {"outcome": O.FAIL if call.when == "call" else O.ERROR,
                                  "expected": False, "message": message}
        thread_leak = item.stash.get(keys.THREAD_LEAK, None)
        if thread_leak:  # travels to the controller (pytest-xdist) with the report
            del item.stash[keys.THREAD_LEAK]
            report.conformance_thread_leak = thread_leak
        leak = item.stash.get(keys.STATE_LEAK, None) if call.when != "setup" else None
        if leak:  # conformance.plugin.isolation: the implementation changed global state
            del item.stash[keys.STATE_LEAK]
            report.outcome, report.longrepr = "failed", leak
            if hasattr(report, "wasxfail"):
                del report.wasxfail
            report.conformance = {"outcome": O.ERROR, "expected": False, "message": leak,
                                  "overrides": True}


def expectation_fields(nodeid: str, impl: str | None, entry, outcome: str) -> dict:
    """The row fields of the expectation entry a test matched: its reason and link, and for a
    known failure of TorchRL the catalogued defect it shows (``conformance.defects``)."""
    defect = (catalogue.defect_slug(nodeid, impl or "", entry.reason, entry.link)
              if outcome == O.KNOWN_FAILURE else None)
    return {"reason": entry.reason, "link": entry.link, "defect": defect}


def encodable(value):
    """``value`` with every text UTF-8 encodable: a lone surrogate (``"\\ud800"``, from an
    implementation's message) is written as its escape, instead of failing the write of every
    row of the run."""
    if isinstance(value, str):
        return value.encode("utf-8", "backslashreplace").decode("utf-8")
    if isinstance(value, dict):
        return {encodable(k): encodable(v) for k, v in value.items()}
    if isinstance(value, list):
        return [encodable(v) for v in value]
    return value


def _complete_there(path: Path) -> bool:
    """Whether ``path`` holds the results of a complete run (which a partial one never
    replaces, even when named with --results)."""
    try:
        with open(path, encoding="utf-8") as fh:
            return json.load(fh).get("partial", "?") is None
    except (OSError, ValueError, AttributeError, RecursionError):
        return False


def report_stem(results: Path) -> str:
    """The reports beside ``results.json`` are ``conformance.*``; beside ``x.json``, ``x.*``."""
    return "conformance" if results.name == DEFAULT_RESULTS.name else results.stem


def _describe(nodeid: str, selected) -> dict:
    """Area, spec, parameters and implementation from a node id such as
    ``conformance/test_x.py::test_y[torchrl-c=0.2]`` (the implementation is always first)."""
    path, _, name = nodeid.partition("::")
    spec, _, params = name.partition("[")
    params = params.removesuffix("]")
    impl, version = "", ""
    for s in selected:
        if params == s.id or params.startswith(s.id + "-"):
            impl, version, params = s.id, s.version, params[len(s.id) + 1:]
            break
    return {"nodeid": nodeid, "area": Path(path).stem.removeprefix("test_"), "spec": spec,
            "parameters": params, "implementation": impl, "implementation_version": version,
            "device": device.label(device.current()),
            "outcome": None, "expected": None, "message": "", "reason": None, "link": None,
            "defect": None, "duration": 0.0, "reruns": 0}


class ResultsPlugin:
    """Where the run is controlled: collect the rows, decide partiality, write the files."""

    def __init__(self, config, selected, results_path: Path, explicit_path: bool,
                 build_report: bool, notes_dir: Path | None):
        self.config = config
        self.selected = selected
        self.results_path = results_path
        self.explicit_path = explicit_path
        self.build_report = build_report
        self.notes_dir = notes_dir
        self.rows: dict[str, dict] = {}
        self.order: list[str] = []
        self.deselected = 0
        self.started = time.time()
        self.written: list[Path] = []
        self.partial_reason: str | None = None
        self.write_failed = ""

    # ------------------------------------------------------------------ collection
    def pytest_deselected(self, items):
        self.deselected += len(items)

    def pytest_collection_finish(self, session):
        self.order = [item.nodeid for item in session.items]

    @pytest.hookimpl(optionalhook=True)
    def pytest_xdist_node_collection_finished(self, node, ids):
        if not self.order:
            self.order = list(ids)

    # ------------------------------------------------------------------ reports
    def pytest_runtest_logreport(self, report):
        thread_leak = getattr(report, "conformance_thread_leak", None)
        if thread_leak:  # a change of state nobody's test can be blamed for: no verdict
            self.thread_leaks = [*getattr(self, "thread_leaks", []), str(thread_leak)]
        verdict = getattr(report, "conformance", None)
        if verdict is None:
            if not report.failed:
                return
            # no verdict: xdist reported a worker that died while running this test
            verdict = {"outcome": O.FAIL, "expected": False,
                       "message": crash_explanation(self.notes_dir, report.nodeid)}
        row = self.rows.get(report.nodeid)
        if row is None:
            row = self.rows[report.nodeid] = _describe(report.nodeid, self.selected)
        row["duration"] = round(row["duration"] + report.duration, 6)
        if report.outcome == "rerun":  # pytest-rerunfailures: a failure retried
            row["reruns"] += 1
            row.setdefault("rerun_messages", []).append(verdict["message"])
            return
        # the first non-pass phase decides (a failing teardown after a pass is an error), but a
        # change of global state overrides anything (a known failure included)
        verdict = dict(verdict)
        verdict["message"] = encodable(verdict.get("message", ""))
        overrides = verdict.pop("overrides", False)
        if row["outcome"] in (None, O.PASS) or overrides:
            # an expectation's fields go with the verdict that matched it, never stay behind
            row.update({name: None for name in record.ROW_EXTRA}, **verdict)
        not_a_pass(row)

    def record_kill(self, nodeid: str, why: str) -> None:
        """The watchdog is about to end this (single) process: keep what was learnt."""
        row = self.rows.setdefault(nodeid, _describe(nodeid, self.selected))
        row.update(outcome=O.FAIL, expected=False, message=why)
        self.partial_reason = f"interrupted: {nodeid} {why}"
        self.write(exitstatus=int(pytest.ExitCode.INTERRUPTED))

    # ------------------------------------------------------------------ the end
    def _partial(self, session, exitstatus) -> str | None:
        reasons = []
        if self.partial_reason:
            reasons.append(self.partial_reason)
        leaks = getattr(self, "thread_leaks", [])
        if leaks:
            reasons.append(f"{len(leaks)} change(s) of global state by a thread an "
                           f"implementation started; the first: {leaks[0][:600]}")
        if exitstatus == pytest.ExitCode.INTERRUPTED:
            reasons.append("interrupted")
        elif session.shouldfail or session.shouldstop:
            reasons.append(f"stopped early ({session.shouldfail or session.shouldstop})")
        reasons += completeness.option_reasons(self.config)
        if self.deselected and not any(
                getattr(self.config.option, o, None) for o in ("keyword", "markexpr", "deselect")):
            reasons.append(f"{self.deselected} test(s) deselected")
        missing = [n for n in self.order if n not in self.rows or self.rows[n]["outcome"] is None]
        if missing and exitstatus != pytest.ExitCode.INTERRUPTED:
            reasons.append(f"{len(missing)} of {len(self.order)} collected test(s) did not run")
        # what ran, against the committed manifest: ini files, PYTEST_ADDOPTS, conftest files
        # and plug-ins can change what is collected, not which rows a complete run has
        if not self.config.option.help:
            short = completeness.rows_reason(list(self.rows.values()),
                                             [s.id for s in self.selected],
                                             device.label(device.current()))
            if short:
                reasons.append(short)
        return "; ".join(dict.fromkeys(reasons)) or None

    def _ordered_rows(self) -> list[dict]:
        rank = {n: i for i, n in enumerate(self.order)}
        rows = [r for r in self.rows.values() if r.get("outcome") is not None]
        return sorted(rows, key=lambda r: (rank.get(r["nodeid"], len(rank)), r["nodeid"]))

    def pytest_sessionfinish(self, session, exitstatus):
        partial = self._partial(session, exitstatus)
        self.partial_reason = partial
        self.config.stash[keys.PARTIAL] = partial
        self.write(exitstatus)
        # skips that stand for NOT TESTED or an unlisted "cannot be tested here" fail the run
        unexpected = any(not r["expected"] for r in self.rows.values() if r["outcome"])
        if unexpected and session.exitstatus == pytest.ExitCode.OK:
            session.exitstatus = pytest.ExitCode.TESTS_FAILED
        if self.write_failed and session.exitstatus != pytest.ExitCode.INTERRUPTED:
            session.exitstatus = pytest.ExitCode.USAGE_ERROR  # nothing on disk says the verdict

    def write(self, exitstatus: int) -> None:
        """The results and the reports, built from this run's own rows, replaced as a set (all
        or none); a failure is one line and the run does not pass."""
        rows = self._ordered_rows()
        if not rows:
            return
        path = self.results_path
        if self.partial_reason and (not self.explicit_path or _complete_there(path)):
            path = path.parent / PARTIAL_DIR / path.name  # never replace the full report
        torchrl = next((s.version for s in self.selected if s.id == "torchrl"), None)
        document = {
            "schema": SCHEMA,
            "suite": __version__,  # the suite release (CHANGELOG.md)
            "manifest_digest": record.manifest_digest(),  # the spec ids it was judged against
            # what was tested: the upstream runner's description, else the installed TorchRL
            "source": record.source_from_env(torchrl, stack_versions().get("torchrl")),
            "started": self.started,
            "finished": time.time(),
            "exitstatus": int(exitstatus),
            "partial": self.partial_reason,
            "python": platform.python_version(),
            "stack": stack_versions(),
            "implementations": {s.id: s.version for s in self.selected},
            "device": device.describe(device.current()),
            "rows": rows,
        }
        document = encodable(document)
        try:
            texts = {path: json.dumps(document, indent=1)}
            if self.build_report:
                from conformance.reporting.matrix import render_reports

                texts.update(render_reports([document], path.parent, stem=report_stem(path)))
            replace_all(texts)
        except Exception as exc:  # noqa: BLE001 - one line, whatever failed; the verdict stays
            self.write_failed = (f"results and reports not written ({path.parent}): "
                                 f"{type(exc).__name__}: {getattr(exc, 'strerror', None) or exc}")
            self.written = []
            return
        self.write_failed = ""
        self.written = list(texts)

    def pytest_terminal_summary(self, terminalreporter):
        if self.write_failed:
            terminalreporter.write_line(f"ERROR: {self.write_failed}", red=True)
        not_tested = {}
        for row in self.rows.values():
            if row["outcome"] == O.NOT_TESTED:
                not_tested.setdefault(row["implementation"], row["message"])
        if not_tested:
            terminalreporter.write_sep("=", "NOT TESTED", red=True, bold=True)
            for impl, why in not_tested.items():
                terminalreporter.write_line(f"{impl}: {why}", red=True)
        if self.written:
            terminalreporter.write_sep("-", "conformance results and report")
            if self.partial_reason:
                terminalreporter.write_line(f"partial run: {self.partial_reason}", yellow=True)
            for path in self.written:
                terminalreporter.write_line(str(path))

    def print_verdict(self, terminalreporter) -> None:
        """The verdict block (``conformance.reporting.verdict``), last before pytest's counts;
        under a parent that judges this run (``conformance.parent``), the parent prints it."""
        import os

        from conformance.reporting.verdict import BY_PARENT, block

        if os.environ.get(BY_PARENT):
            return
        rows = self._ordered_rows()
        if not rows:
            return
        report = next((p for p in self.written if p.suffix == ".md"), None)
        where = str(report) if report else "the rows above (no report was written)"
        lines = block([{"partial": self.partial_reason, "rows": rows}], where=where)
        good = lines[0].endswith(": conformant to expectations: no unexpected result")
        terminalreporter.write_sep("=", "conformance verdict", green=good, red=not good,
                                   bold=True)
        for i, line in enumerate(lines):
            terminalreporter.write_line(line, **({"green": good, "red": not good, "bold": True}
                                                 if i == 0 else {}))


class VerdictLast:
    """The verdict block of a ``ResultsPlugin``'s rows, as the outermost terminal-summary wrapper:
    after pytest's own summary (its -ra "short test summary" included), the last thing before
    the counts line. A plug-in of its own: pytest registers only ``pytest_*`` names, once each."""

    def __init__(self, results: ResultsPlugin):
        self.results = results

    @pytest.hookimpl(wrapper=True, tryfirst=True)
    def pytest_terminal_summary(self, terminalreporter):
        result = yield
        self.results.print_verdict(terminalreporter)
        return result
