"""An implementation's own NotImplementedError("<why>") is reported "not applicable: <why>",
never a pass; any other NotImplementedError stays a failure (conformance/plugin/not_applicable.py)."""

from __future__ import annotations

import types

import pytest

from conformance.plugin import not_applicable as na

PPO = "conformance/test_ppo_value_clipping.py"
TRUE_SPEC = f"{PPO}::test_true_means_clip_epsilon"


def _raised_in(module_name: str, message: str = "no such option") -> NotImplementedError:
    """A NotImplementedError whose raising frame belongs to ``module_name``."""
    namespace = {"__name__": module_name}
    exec("def f(m):\n    raise NotImplementedError(m)\n", namespace)  # noqa: S102 - test helper
    try:
        namespace["f"](message)
    except NotImplementedError as exc:
        return exc
    raise AssertionError("unreachable")


class _Area:
    pass


_Area.__module__ = "mylib.adapter"


def test_the_rule_counts_only_the_implementations_own_code():
    homes = na.home_modules(types.SimpleNamespace(), [_Area()])
    assert homes == {"mylib.adapter"}
    assert na.reason(_raised_in("mylib.adapter"), homes) == "no such option"
    assert na.reason(_raised_in("mylib.adapter.sub"), homes) == "no such option"
    # the library it wraps, a sibling module of the plug-in, the suite's specs and oracles
    for elsewhere in ("torch.distributions", "mylib.helpers", "conformance.test_x",
                      "conformance.oracles.sac_done_states", "conformance._assertions"):
        assert na.reason(_raised_in(elsewhere), homes) is None, elsewhere
    assert na.reason(_raised_in("mylib.adapter", ""), homes) is None  # no reason given
    assert na.reason(ValueError("no such option"), homes) is None


def test_a_built_in_adapters_home_is_its_areas_package():
    adapter = types.SimpleNamespace(package="conformance.implementations.sb3_areas")
    homes = na.home_modules(adapter, [])
    exc = _raised_in("conformance.implementations.sb3_areas.ppo_value_clipping")
    assert na.reason(exc, homes) == "no such option"
    assert na.reason(_raised_in("conformance.implementations.torchrl_areas.x"), homes) is None


def test_an_implementation_cannot_claim_the_suite_as_its_code():
    """A home that covers the specs or oracles (an area class defined in the suite itself) is
    refused: a spec's or an oracle's NotImplementedError is never "not applicable"."""
    for module in ("conformance", "conformance.oracles.ppo_value_clipping", "conformance.test_x"):
        area = type("Area", (), {"__module__": module})()
        assert na.home_modules(types.SimpleNamespace(package=module), [area]) == set()
    exc = _raised_in("conformance.oracles.ppo_value_clipping")
    assert na.reason(exc, {"conformance"}) is None


def _row(run, impl):
    (row,) = run.rows(implementation=impl)
    return row


def test_a_declared_option_is_not_applicable_with_its_reason(suite):
    run = suite(PPO, "--impl", "tests.mutants.not_applicable:DECLARES", "-k",
                "true_means or counterexample")
    assert run.returncode == 0, run.output[-3000:]
    rows = run.rows()
    assert {r["outcome"] for r in rows if "true_means" in r["nodeid"]} == {"not applicable"}
    assert all(r["expected"] for r in rows)
    row = next(r for r in rows if "true_means" in r["nodeid"])
    assert row["message"].startswith(
        "not applicable: this library has no 'same as clip_epsilon' threshold"), row["message"]
    assert "declared by tests.mutants.not_applicable" in row["message"]
    # the spec it can express still runs, and passes
    assert [r["outcome"] for r in rows if "counterexample" in r["nodeid"]] == ["pass"]


@pytest.mark.parametrize("name", ["NO_REASON", "LIBRARY_RAISES", "RE_RAISES"])
def test_any_other_not_implemented_error_stays_a_failure(suite, name):
    run = suite(PPO, "--impl", f"tests.mutants.not_applicable:{name}", "-k", "true_means")
    assert run.returncode == 1, run.output[-3000:]
    rows = run.rows()
    assert rows and all(r["outcome"] == "fail" and "NotImplementedError" in r["message"]
                        for r in rows), rows


def test_a_known_failure_entry_on_a_not_applicable_spec_is_stale(suite, tmp_path):
    """Listed as a known failure but not applicable: the run fails and says to remove it."""
    listed = tmp_path / "declares.txt"
    listed.write_text(f"{TRUE_SPEC} | no 'same as clip_epsilon' | https://example.org/x\n")
    run = suite(PPO, "--impl", "tests.mutants.not_applicable:DECLARES", "-k", "true_means",
                "--expectations", str(listed))
    assert run.returncode == 1, run.output[-3000:]
    rows = run.rows()
    assert rows and all(r["outcome"] == "not applicable" and r["expected"] is False
                        for r in rows), rows
    assert "but it is not applicable: remove the entry" in rows[0]["message"]
