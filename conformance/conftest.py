"""pytest wiring of the suite: --impl, --expectations, results and reports, the header."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

from conformance import implementations, outcomes
from conformance.interface import AREAS, Untestable
from conformance.plugin import expectations as exp
from conformance.plugin import keys
from conformance.plugin.results import ResultsPlugin
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


def _expectation_entries(config, selected) -> list[exp.Entry]:
    ids = [s.id for s in selected]
    values = config.getoption("expectations")
    if values == ["none"]:
        return []
    entries: list[exp.Entry] = []
    if not values:
        for s in selected:
            auto = exp.auto_file(s.id, s.version)
            if auto is not None:
                entries += exp.parse(auto, frozenset({s.id}))
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


def pytest_configure(config):
    try:
        selected = implementations.resolve(config.getoption("impl"))
    except implementations.UnknownImplementation as exc:
        raise pytest.UsageError(str(exc)) from None
    config.stash[keys.SELECTED] = selected
    entries = _expectation_entries(config, selected)
    config.stash[keys.EXPECTATION_FILES] = sorted({e.source.rsplit(":", 1)[0] for e in entries})
    if entries:
        config.pluginmanager.register(exp.ExpectationsPlugin(entries, config.rootpath),
                                      "conformance-expectations")
    results = config.getoption("results")
    results_path = Path(results) if results else config.rootpath / "reports" / "results.json"
    if not hasattr(config, "workerinput"):
        config.pluginmanager.register(
            ResultsPlugin(config, selected, results_path, not config.getoption("no_report")),
            "conformance-results",
        )


def pytest_report_header(config):
    versions = ", ".join(f"{k} {v}" for k, v in stack_versions().items())
    selected = config.stash.get(keys.SELECTED, [])
    lines = [
        f"conformance stack: {versions}",
        "implementations: " + ", ".join(f"{s.id} {s.version}" for s in selected),
    ]
    files = config.stash.get(keys.EXPECTATION_FILES, [])
    lines.append("expectations: " + (", ".join(files) if files else "none"))
    return lines


@pytest.hookimpl(tryfirst=True)  # the implementation comes first in every test id
def pytest_generate_tests(metafunc):
    if "impl" in metafunc.fixturenames:
        selected = metafunc.config.stash[keys.SELECTED]
        metafunc.parametrize("impl", selected, ids=[s.id for s in selected])


def _area_fixture(area: str):
    def fixture(impl, request):
        try:
            obj = getattr(impl.obj, area, None)
        except Untestable as exc:
            request.node.stash[keys.SKIP_OUTCOME] = outcomes.UNTESTABLE
            pytest.skip(f"{outcomes.UNTESTABLE_REASON}: {exc}")
        if obj is None:
            request.node.stash[keys.SKIP_OUTCOME] = outcomes.NOT_APPLICABLE
            pytest.skip(f"{outcomes.NOT_APPLICABLE_REASON}: {impl.id} does not provide {AREAS[area]}")
        return obj

    fixture.__name__ = area
    fixture.__doc__ = f"The {AREAS[area]} area of the implementation under test."
    return pytest.fixture(fixture)


for _area in AREAS:
    globals()[_area] = _area_fixture(_area)
