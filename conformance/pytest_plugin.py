"""The suite's pytest plug-in: --impl, --device, --expectations, --spec-timeout, results and
reports, the header.

Registered only for a run that collects specs: by ``conformance.pytest_entry`` (the ``pytest11``
entry point of an installed wheel), by ``conformance/conftest.py`` in a checkout, or by ``-p
conformance.pytest_plugin`` where a test module embeds the specs. Importing it sets the
hypothesis profile, so nothing else imports it.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import warnings
from pathlib import Path

import pytest
import torch
from hypothesis import HealthCheck, settings

from conformance import __version__, device, implementations, outcomes, paths, shipped
from conformance.interface import AREAS
from conformance.plugin import completeness, cuda_context, isolation, keys, survey, watchdog
from conformance.plugin import expectations as exp
from conformance.plugin.interrupts import InterruptGuard
from conformance.plugin.results import (
    DEFAULT_RESULTS,
    PARTIAL_DIR,
    OutcomeRecorder,
    ResultsPlugin,
    VerdictLast,
    report_stem,
)
from conformance.reporting import destination
from conformance.versions import stack_versions

# Reproducible property tests: the same examples every run (array-api-tests' --derandomize).
settings.register_profile(
    "conformance",
    derandomize=True,
    deadline=None,
    database=None,
    max_examples=60,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
settings.load_profile(os.environ.get("TORCHRL_CONFORMANCE_HYPOTHESIS_PROFILE", "conformance"))


def pytest_addoption(parser):
    group = parser.getgroup("conformance")
    group.addoption(
        "--impl",
        default=None,
        help=(
            "implementations to check, comma-separated: reference, torchrl, pkg.module:object "
            f"(default: ${implementations.ENV_VAR} or {implementations.DEFAULT!r})"
        ),
    )
    group.addoption(
        device.OPTION,
        default=None,
        metavar="DEVICE",
        help=(
            "where implementations run: cpu, cuda or cuda:N; oracles stay on the CPU "
            f"(default: ${device.ENV_VAR} or {device.DEFAULT})"
        ),
    )
    group.addoption(
        "--expectations",
        action="append",
        default=[],
        metavar="[IMPL=]FILE",
        help=(
            "known-failures file, for all implementations or for IMPL only; repeatable. "
            "Default: conformance/expectations/<impl>-<version>.txt when it exists. "
            "'none' disables expectations."
        ),
    )
    group.addoption(
        "--results",
        default=None,
        metavar="PATH",
        help="where to write the machine-readable results (default: reports/results.json)",
    )
    group.addoption("--no-report", action="store_true", help="do not build reports/conformance.*")
    group.addoption(
        "--spec-timeout",
        type=float,
        default=None,
        metavar="SECONDS",
        help=(
            f"wall-clock limit of each test, hypothesis examples and native code included "
            f"(default: ${watchdog.ENV_VAR} or {watchdog.DEFAULT_SECONDS:g}; 0 disables)"
        ),
    )
    completeness.addoption(group)


def _expectation_entries(config, selected) -> list[exp.Entry]:
    ids = [s.id for s in selected]
    values = config.getoption("expectations")
    if values == ["none"]:
        return []
    entries: list[exp.Entry] = []
    if not values:
        for s in selected:
            auto = shipped.shipped_file(s.id, s.version)
            if auto is not None:
                entries += exp.parse(auto, frozenset({s.id}))
            elif s.id == "torchrl" and not paths.CHECKOUT:
                # an installed run of a TorchRL the suite knows nothing about: every known bug
                # would read as a regression
                known = ", ".join(shipped.shipped_versions("torchrl"))
                raise exp.ExpectationsError(
                    f"torchrl {s.version}: no shipped expectations for this version (shipped: "
                    f"{known}, nightly); give --expectations FILE, or --expectations none to "
                    "count every failure")
        return entries
    for value in values:
        impl, sep, file = value.partition("=")
        if not sep or "/" in impl or impl.endswith(".txt"):
            impl, file = "", value
        if impl and impl not in ids:
            raise exp.ExpectationsError(
                f"--expectations {value!r}: {impl!r} is not among the selected implementations "
                f"({', '.join(ids)})"
            )
        if file == "none":
            continue
        bound = frozenset({impl}) if impl else frozenset(ids)
        entries += exp.parse(Path(file), bound)
    return entries


def _spec_timeout(config) -> float:
    value = config.getoption("spec_timeout")
    if value is None:
        raw = os.environ.get(watchdog.ENV_VAR, "")
        try:
            value = float(raw) if raw else watchdog.DEFAULT_SECONDS
        except ValueError:
            raise pytest.UsageError(f"${watchdog.ENV_VAR}={raw!r} is not a number of seconds") from None
    if value < 0:
        raise pytest.UsageError(f"--spec-timeout {value:g}: must be >= 0 (0 disables the limit)")
    return value


def _results_path(config) -> tuple[Path, bool]:
    """Where the results go, checked now (writable, nothing foreign overwritten): a problem
    found after minutes of specs would lose them all."""
    given = config.getoption("results")
    stem = None if config.getoption("no_report") else "conformance"
    if not given:
        folder = paths.reports_folder(config.rootpath, config.invocation_params.dir)
        path = folder / DEFAULT_RESULTS.name
        candidates = [path, path.parent / PARTIAL_DIR / path.name]
    else:
        path = Path(given)
        if path.is_dir() or given.endswith(("/", os.sep)):
            raise pytest.UsageError(f"--results {given}: is a directory; give a file such as "
                                    f"{path / 'results.json'}")
        if path.suffix != ".json":
            raise pytest.UsageError(f"--results {given}: must name a .json file")
        if stem is not None:
            stem = report_stem(path)
        candidates = [path]
    try:
        for candidate in candidates:
            destination.check(candidate, stem)
    except destination.DestinationError as exc:
        raise pytest.UsageError(str(exc)) from None
    return path, bool(given)


#: the plug-ins this file registers; none of them may be disabled with -p no:NAME
OWN_PLUGINS = ("conformance-expectations", "conformance-results", "conformance-stale-notes",
               "conformance-watchdog", "conformance-interrupts", "conformance-outcomes",
               "conformance-isolation", "conformance-cuda-context")


def _resolve(config, expected_state: tuple) -> tuple[list, dict, dict[str, str]]:
    """The selected implementations and their surveys, each imported and surveyed on its own so
    that a change of global state it makes is put back and blamed on it (``import_leaks``)."""
    import_leaks: dict[str, str] = {}

    def blame(impl_id: str, filters: list) -> None:
        changes = isolation.restore(expected_state)
        moved = isolation.filter_changes(filters, list(warnings.filters))
        if moved:
            isolation.put_filters(filters)
        if changes + moved:
            import_leaks.setdefault(impl_id, isolation.leak_message(impl_id, changes + moved,
                                                                    "when imported"))

    try:
        given = config.getoption("impl")
        if given is not None and not given.replace(",", "").strip():
            # --impl '' named nothing: never the default two implementations in its place
            raise pytest.UsageError(f"--impl {given!r}: names no implementation (reference, "
                                    "torchrl, pkg.module:object)")
        raw = implementations.raw_value(given)
        for name in implementations.names(raw):
            filters = list(warnings.filters)
            threads = isolation.thread_idents()
            impl_id = implementations.resolve(name)[0].id
            isolation.OWNERS.claim(threads, impl_id)  # threads its import started are its own
            blame(impl_id, filters)
        selected = implementations.resolve(raw)  # (imports cached) duplicates, one-line errors
        surveys = {}
        for s in selected:
            filters = list(warnings.filters)
            survey.check_area_names(s.id, s.obj)
            surveys[s.id] = survey.survey(s.id, s.obj)
            survey.check_identity(s.id, s.obj)
            blame(s.id, filters)
    except (implementations.UnknownImplementation, survey.InvalidImplementation) as exc:
        raise pytest.UsageError(str(exc)) from None
    return selected, surveys, import_leaks


def _device(config):
    """The run's device, checked before anything is imported or collected: a device torch
    does not see here is a usage error (exit code 4), never a run of skips."""
    try:
        return device.choose(config.getoption("device"), os.environ)
    except device.DeviceError as exc:
        raise pytest.UsageError(str(exc)) from None


def pytest_configure(config):
    completeness.check_own_plugins(config, OWN_PLUGINS)
    device.use(_device(config))
    expected_state = isolation.snapshot()  # before any implementation is imported
    selected, surveys, import_leaks = _resolve(config, expected_state)
    config.stash[keys.SELECTED] = selected
    config.stash[keys.SURVEYS] = surveys
    entries = _expectation_entries(config, selected)
    config.stash[keys.EXPECTATION_FILES] = sorted({e.source.rsplit(":", 1)[0] for e in entries})
    results_path, explicit = _results_path(config)
    seconds = _spec_timeout(config)
    worker = getattr(config, "workerinput", None)
    if entries:
        report = exp.raise_problems
        if worker is not None and "conformance_notes" in worker:
            report = StaleNotes.writer(Path(worker["conformance_notes"]), worker["workerid"])
        # entries name test files relative to the package's parent (conformance/test_x.py)
        config.pluginmanager.register(exp.ExpectationsPlugin(entries, paths.ROOT, report),
                                      "conformance-expectations")
    if worker is not None:  # a pytest-xdist worker: the controller collects the rows
        notes = Path(worker["conformance_notes"]) if "conformance_notes" in worker else None
        dog = watchdog.Watchdog(seconds, notes, worker["workerid"])
    else:
        notes = Path(tempfile.mkdtemp(prefix="conformance-notes-"))
        results = ResultsPlugin(config, selected, results_path, explicit,
                                not config.getoption("no_report"), notes)
        config.pluginmanager.register(results, "conformance-results")
        config.pluginmanager.register(VerdictLast(results), "conformance-verdict")
        config.stash[keys.NOTES_DIR] = notes
        config.pluginmanager.register(StaleNotes(config, notes), "conformance-stale-notes")
        dog = watchdog.Watchdog(seconds, None, "main", on_kill=results.record_kill)
    config.pluginmanager.register(watchdog.WatchdogPlugin(dog), "conformance-watchdog")
    config.pluginmanager.register(InterruptGuard(), "conformance-interrupts")
    config.pluginmanager.register(OutcomeRecorder(dog), "conformance-outcomes")
    config.pluginmanager.register(
        isolation.IsolationPlugin(expected_state, exp.item_impl, import_leaks),
        "conformance-isolation")
    cuda_context.register(config, exp.item_impl)


class StaleNotes:
    """Under pytest-xdist, stale expectations found by a worker's collection end the run on the
    controller with the usage error a single process would give (exit code 4)."""

    def __init__(self, config, notes: Path):
        self.config, self.notes, self.problems = config, notes, ""

    @staticmethod
    def writer(notes: Path, worker: str):
        def write(problems: list[str]) -> None:
            if problems:
                text = "\n".join(["expectations do not match the suite:", *exp.capped(problems)])
                (notes / f"{worker}.expectations").write_text(text)
        return write

    @pytest.hookimpl(optionalhook=True)
    def pytest_xdist_node_collection_finished(self, node, ids):
        path = self.notes / f"{node.workerinput['workerid']}.expectations"
        if path.is_file() and not self.problems:
            self.problems = path.read_text()
            dsession = self.config.pluginmanager.getplugin("dsession")
            if dsession is not None:
                dsession.shouldstop = "expectations do not match the suite"

    @pytest.hookimpl(trylast=True)
    def pytest_sessionfinish(self, session, exitstatus):
        if self.problems:
            session.exitstatus = pytest.ExitCode.USAGE_ERROR

    def pytest_terminal_summary(self, terminalreporter):
        if self.problems:
            terminalreporter.write_line("ERROR: " + self.problems, red=True)


@pytest.hookimpl(wrapper=True)
def pytest_cmdline_main(config):
    """The last line of a partial run says so; under --require-complete it never exits 0."""
    status = yield
    if getattr(config, "workerinput", None) is not None:
        return status
    reason = completeness.partial_reason(config)
    if reason and (completeness.required(config) or not config.option.help):
        print(f"PARTIAL RUN ({reason}): not a conformance verdict", flush=True)
    if reason and completeness.required(config):
        completeness.flag(reason)
    return completeness.gate_exit(config, status)


def pytest_unconfigure(config):
    notes = config.stash.get(keys.NOTES_DIR, None)
    if notes is not None:
        shutil.rmtree(notes, ignore_errors=True)


@pytest.hookimpl(optionalhook=True)
def pytest_configure_node(node):
    """pytest-xdist, on the controller: tell each worker where to leave its notes."""
    node.workerinput["conformance_notes"] = str(node.config.stash[keys.NOTES_DIR])


def pytest_report_header(config):
    versions = ", ".join(f"{k} {v}" for k, v in stack_versions().items())
    selected = config.stash.get(keys.SELECTED, [])
    lines = [
        f"conformance suite: torchrl-conformance {__version__} ({paths.PACKAGE})",
        f"conformance stack: {versions}",
        "implementations: " + ", ".join(f"{s.id} {s.version}" for s in selected),
        f"device: {device.describe(device.current())}",
    ]
    files = config.stash.get(keys.EXPECTATION_FILES, [])
    lines.append("expectations: " + (", ".join(files) if files else "none"))
    for impl_id, found in config.stash.get(keys.SURVEYS, {}).items():
        if found.not_tested:
            lines.append(f"NOT TESTED: {impl_id}: {found.not_tested}")
    return lines


def pytest_pycollect_makemodule(module_path, parent):
    """A spec module's node id is ``conformance/test_x.py`` wherever the package lies and
    whatever the rootdir (``pytest --pyargs conformance`` from any folder): expectations, rows
    and reports are keyed by it."""
    path = Path(module_path).resolve()
    if path.parent != paths.PACKAGE or not path.name.startswith("test_"):
        return None
    nodeid = f"{paths.PACKAGE.name}/{path.name}"
    return pytest.Module.from_parent(parent, path=module_path, nodeid=nodeid)


@pytest.fixture(scope="session", name="device")
def device_fixture() -> torch.device:
    """The run's device (``--device``): where the specs put the implementation's inputs."""
    return device.current()


@pytest.hookimpl(tryfirst=True)  # the implementation comes first in every test id
def pytest_generate_tests(metafunc):
    if "impl" in metafunc.fixturenames:
        selected = metafunc.config.stash[keys.SELECTED]
        metafunc.parametrize("impl", selected, ids=[s.id for s in selected])


def area_status(request, impl, area: str) -> survey.AreaStatus:
    """The surveyed status of ``area`` of ``impl``; skips (with the outcome it stands for)
    when the implementation as a whole, or this area, cannot be exercised."""
    found = request.config.stash[keys.SURVEYS][impl.id]

    def skip(outcome: str, reason: str):
        request.node.stash[keys.SKIP_OUTCOME] = outcome
        pytest.skip(reason)

    if found.not_tested:
        skip(outcomes.NOT_TESTED, f"NOT TESTED: {impl.id}: {found.not_tested}")
    status = found.areas[area]
    if status.state == survey.UNTESTABLE:
        skip(outcomes.UNTESTABLE, f"{outcomes.UNTESTABLE_REASON}: {status.reason}")
    if status.state == survey.BROKEN:
        skip(outcomes.NOT_TESTED, f"NOT TESTED: {impl.id}'s {area} area: {status.reason}")
    if status.state == survey.ABSENT:
        skip(outcomes.NOT_APPLICABLE,
             f"{outcomes.NOT_APPLICABLE_REASON}: {impl.id} does not provide {AREAS[area]}")
    elsewhere = device.not_supported(status.obj, impl.id, area)
    if elsewhere:
        skip(outcomes.NOT_APPLICABLE, f"{outcomes.NOT_APPLICABLE_REASON}: {elsewhere}")
    return status


def _area_fixture(area: str):
    def fixture(impl, request):
        status = area_status(request, impl, area)
        if status.problems:
            request.node.stash[keys.SKIP_OUTCOME] = outcomes.NOT_TESTED
            pytest.skip(f"NOT TESTED: {impl.id}'s {area} area does not satisfy the interface "
                        f"({'; '.join(status.problems)}); see conformance/test_interface.py")
        return status.obj

    fixture.__name__ = area
    fixture.__doc__ = f"The {AREAS[area]} area of the implementation under test."
    return pytest.fixture(fixture)


for _area in AREAS:
    globals()[_area] = _area_fixture(_area)
