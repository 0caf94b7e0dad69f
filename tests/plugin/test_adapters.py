"""Adapters: lazy areas, version switches, and 'cannot be tested here'."""

import pytest

from conformance import implementations
from conformance.implementations.adapter import LazyAdapter
from conformance.interface import Untestable


def test_builtin_names_resolve_in_order():
    chosen = implementations.resolve("torchrl,reference")
    assert [s.id for s in chosen] == ["torchrl", "reference"]


def test_duplicate_and_empty_selection_are_usage_errors():
    with pytest.raises(implementations.UnknownImplementation, match="twice"):
        implementations.resolve("reference,reference")
    with pytest.raises(implementations.UnknownImplementation, match="unknown implementation 'x'"):
        implementations.resolve("x")


def test_area_without_module_is_not_applicable():
    adapter = LazyAdapter("empty", "0", "conformance.implementations.no_such_package")
    with pytest.raises(Untestable):
        _ = adapter.ppo_value_clipping  # the package itself is missing: a broken adapter
    adapter = LazyAdapter("empty", "0", "conformance.implementations")
    assert adapter.ppo_value_clipping is None


def test_failing_precondition_makes_every_area_untestable():
    def broken():
        raise Untestable("import torchrl failed: ImportError: undefined symbol")

    adapter = LazyAdapter("torchrl", "9.9", "conformance.implementations.torchrl_areas",
                          precondition=broken)
    with pytest.raises(Untestable, match="undefined symbol"):
        _ = adapter.ppo_value_clipping


def test_implementation_that_does_not_load_is_not_tested(suite, tmp_path):
    """Every area untestable: nothing was tested, and a gate must not go green on that."""
    module = tmp_path / "broken_impl.py"
    module.write_text(
        "from conformance.implementations.adapter import LazyAdapter\n"
        "from conformance.interface import Untestable\n"
        "def _fail():\n    raise Untestable('C++ extension does not load (ABI)')\n"
        "IMPL = LazyAdapter('broken', '0', 'conformance.implementations.torchrl_areas', precondition=_fail)\n")
    run = suite("conformance/test_ppo_value_clipping.py", "--impl", "broken_impl:IMPL",
                       "-k", "counterexample", env={"PYTHONPATH": str(tmp_path)})
    assert run.returncode == 1, run.output
    (row,) = run.rows()
    assert row["outcome"] == "not tested" and row["expected"] is False
    assert row["message"] == "NOT TESTED: IMPL: C++ extension does not load (ABI)"


def test_torchrl_adapter_picks_the_coefficient_name_of_the_release():
    from conformance.implementations.torchrl_areas.ppo_value_clipping import ClipPPOCritic

    class Old:  # a 0.8-style constructor
        def __init__(self, actor, critic, *, critic_coef=1.0, **kwargs):
            pass

    class New:
        def __init__(self, actor, critic, *, critic_coeff=None, **kwargs):
            pass

    class Forwarding(New):
        def __init__(self, *args, clip_value=None, **kwargs):
            super().__init__(*args, **kwargs)

    assert ClipPPOCritic(Old).coeff_name == "critic_coef"
    assert ClipPPOCritic(New).coeff_name == "critic_coeff"
    assert ClipPPOCritic(Forwarding).coeff_name == "critic_coeff"
