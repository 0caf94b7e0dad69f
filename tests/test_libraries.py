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
# adapter's coverage must be deliberate: update this table and the README's summary with it.
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
