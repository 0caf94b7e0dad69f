"""The library adapters' wiring, without the libraries: names, honest coverage when a library
is missing or its layer could not be built, and what a layer pins."""

from __future__ import annotations

import importlib

import pytest

from conformance import implementations
from conformance.implementations.library import library_adapter
from conformance.interface import AREAS, Untestable
from conformance.libraries import layers
from conformance.libraries.registry import LIBRARIES


def test_every_library_is_selectable_by_name():
    for lib in LIBRARIES:
        assert lib.name in implementations.BUILTIN
        (selected,) = implementations.resolve(lib.name)
        assert selected.id == lib.name


# What each adapter covers (an area module exists); the rest is "not applicable". Changing an
# adapter's coverage must be deliberate: update this table and the summary in docs/libraries.md with it.
COVERAGE = {
    "cpprb": {"prioritized_replay"},
    "sb3": {"tanh_normal_mode", "composite_log_prob", "sac_done_states", "ppo_value_clipping"},
    "skrl": {"composite_log_prob", "sac_done_states", "ppo_value_clipping"},
    "tianshou": {"tanh_normal_mode", "sac_done_states", "ppo_value_clipping",
                 "prioritized_replay"},
}


def test_each_library_covers_the_areas_it_implements():
    for lib in LIBRARIES:
        package = f"conformance.implementations.{lib.name}_areas"
        present = set()
        for area in AREAS:
            try:
                importlib.import_module(f"{package}.{area}")
            except ModuleNotFoundError:
                continue
            present.add(area)
        assert present == COVERAGE[lib.name], lib.name


def test_a_missing_library_is_untestable_with_the_way_to_install_it():
    adapter = library_adapter("nosuchlib", "nosuchlib-dist", "nosuchlib")
    for area in AREAS:
        with pytest.raises(Untestable, match="nox -s libraries"):
            getattr(adapter, area)


def test_a_layer_that_could_not_be_built_makes_every_spec_untestable(monkeypatch):
    monkeypatch.setenv("TORCHRL_CONFORMANCE_UNTESTABLE_CPPRB", "pip install failed (reason)")
    adapter = library_adapter("cpprb", "cpprb", "cpprb")
    for area in AREAS:
        with pytest.raises(Untestable, match=r"pip install failed \(reason\)"):
            getattr(adapter, area)


def test_missing_library_specs_are_reported_not_tested(suite):
    """Where a library cannot be loaded (its layer was not built) its specs are never passed:
    the whole implementation is NOT TESTED with the reason, and the run fails."""
    run = suite("conformance/test_ppo_value_clipping.py", "--impl", "skrl", "-k", "counterexample",
                env={"TORCHRL_CONFORMANCE_UNTESTABLE_SKRL": "layer not built in this test"})
    rows = run.rows(implementation="skrl")
    assert run.returncode == 1, run.output[-2000:]
    assert rows and all(r["outcome"] == "not tested" for r in rows), rows
    assert all("layer not built in this test" in r["message"] for r in rows)


def test_a_layer_pins_the_stacks_torch():
    pins = layers.constraints()
    assert any(p.startswith("torch==") for p in pins)
    assert any(p.startswith("numpy==") for p in pins)


def test_every_library_has_an_expectations_file_for_its_pinned_release():
    from conformance.plugin.expectations import EXPECTATIONS_DIR

    for lib in LIBRARIES:
        assert (EXPECTATIONS_DIR / f"{lib.name}-{lib.version}.txt").is_file(), lib


@pytest.mark.slow
def test_library_expectations_match_the_suite_without_the_libraries():
    """Every entry of every library's expectations file names collected tests of that library
    (the strict check: stale, shadowed or duplicate entries are a usage error), checked by
    collection alone, so CI needs none of the libraries installed."""
    import subprocess
    import sys

    from conformance.plugin.expectations import EXPECTATIONS_DIR
    from tests.conftest import ROOT

    args = []
    for lib in LIBRARIES:
        args += ["--expectations", f"{lib.name}={EXPECTATIONS_DIR / f'{lib.name}-{lib.version}.txt'}"]
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "conformance", "--collect-only", "-q", "-p",
         "no:cacheprovider", "--impl", ",".join(lib.name for lib in LIBRARIES), *args],
        cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, (proc.stdout + proc.stderr)[-3000:]
    assert "ERROR" not in proc.stdout + proc.stderr


def test_the_libraries_report_has_one_column_per_implementation(tmp_path, monkeypatch):
    """reports/libraries.* from a results file per run: reference, torchrl and every library,
    six columns, each with its version."""
    import json

    from conformance.libraries import run

    out = tmp_path / "reports" / "libraries"
    out.mkdir(parents=True)

    def results(name, impls):
        rows = [{"nodeid": f"conformance/test_ppo_value_clipping.py::test_x[{impl}]",
                 "area": "ppo_value_clipping", "spec": "test_x", "parameters": "",
                 "implementation": impl, "implementation_version": version, "outcome": outcome,
                 "expected": True, "message": message, "duration": 0.0, "reruns": 0}
                for impl, version, outcome, message in impls]
        (out / f"{name}.json").write_text(json.dumps({"schema": 1, "rows": rows}))

    results("reference-torchrl", [("reference", "0.1.0", "pass", ""),
                                  ("torchrl", "0.14.1", "known failure", "x")])
    for lib in LIBRARIES:
        results(lib.name, [(lib.name, lib.version, "not applicable",
                            f"not applicable: {lib.name} has no such option")])
    monkeypatch.setattr(run, "ROOT", tmp_path)
    run.write_report(out, [lib.name for lib in LIBRARIES])
    text = (tmp_path / "reports" / "libraries.md").read_text()
    header = next(line for line in text.splitlines() if line.startswith("| spec |"))
    columns = [c.strip() for c in header.strip("|").split("|")][1:]
    assert columns == ["reference 0.1.0", "torchrl 0.14.1",
                       *(f"{lib.name} {lib.version}" for lib in LIBRARIES)], columns
    # a "not applicable" cell is never a pass, and the report says why
    assert "### Not applicable" in text
    assert f"not applicable: {LIBRARIES[0].name} has no such option" in text
