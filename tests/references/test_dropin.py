"""The drop-in check (``conformance.dropin``): the swap plugin, the comparison of two runs, the
command line, and the table of deliberate differences in docs/dropin.md."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from conformance.dropin.compare import FAILED, PASSED, SKIPPED, compare, read_junit, signature
from conformance.dropin.differences import DOCUMENTED
from conformance.paths import ROOT


def _junit(path: Path, cases: dict[str, tuple[str, str]]) -> Path:
    body = []
    for name, (outcome, message) in cases.items():
        inner = {PASSED: "", FAILED: f'<failure message="{message}">trace</failure>',
                 SKIPPED: '<skipped message="no gpu"/>'}[outcome]
        body.append(f'<testcase classname="test.t.TestX" name="{name}">{inner}</testcase>')
    path.write_text(f'<testsuites><testsuite>{"".join(body)}</testsuite></testsuites>')
    return path


def test_compare_groups_what_the_swap_breaks_by_message(tmp_path):
    shipped = read_junit(_junit(tmp_path / "a.xml", {
        "test_a[1]": (PASSED, ""), "test_a[2]": (PASSED, ""), "test_b": (PASSED, ""),
        "test_c": (FAILED, "boom"), "test_d": (SKIPPED, ""), "test_e": (PASSED, "")}))
    swapped = read_junit(_junit(tmp_path / "b.xml", {
        "test_a[1]": (FAILED, "KeyError: slot 3"), "test_a[2]": (FAILED, "KeyError: slot 7"),
        "test_b": (PASSED, ""), "test_c": (PASSED, ""), "test_d": (SKIPPED, "")}))
    result = compare(shipped, swapped)
    assert result.broken == {"KeyError: slot N": ["test.t.TestX::test_a[1]",
                                                  "test.t.TestX::test_a[2]"]}
    assert result.fixed == ["test.t.TestX::test_c"]
    assert result.missing == ["test.t.TestX::test_e"]  # ran as shipped, absent when swapped


def test_documented_differences_need_the_documented_message(tmp_path):
    test = "test.objectives.test_sac.TestDiscreteSAC::test_discrete_sac_terminating[x]"
    ok, other = Path(tmp_path / "a.xml"), Path(tmp_path / "b.xml")
    for path, message in ((ok, "AssertionError: assert False"), (other, "RuntimeError: shape")):
        classname, name = test.split("::")
        path.write_text(f'<testsuites><testsuite><testcase classname="{classname}" '
                        f'name="{name}"><failure message="{message}"/></testcase>'
                        '</testsuite></testsuites>')
    shipped = {test: read_junit(ok)[test].__class__(PASSED)}
    assert sum(map(len, compare(shipped, read_junit(ok)).deliberate.values())) == 1
    assert compare(shipped, read_junit(other)).broken  # another failure is not covered


def test_signature_blanks_numbers_and_addresses():
    assert signature("x at 0x7f3a != 12.5e-3\nmore") == "x at ADDR != N"


def test_docs_table_lists_every_documented_difference():
    page = (ROOT / "docs" / "dropin.md").read_text()
    section = page.split("## Where the reference deliberately differs", 1)[1]
    for difference in DOCUMENTED:
        assert difference.title in section, difference.title


def _run(args, cwd, timeout=600):
    env = dict(os.environ, PYTHONPATH=str(ROOT), OMP_NUM_THREADS="1")
    return subprocess.run([sys.executable, *args], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=timeout)


@pytest.mark.slow
def test_swap_binds_impls_in_test_modules_only(tmp_path):
    """Test modules see the impls classes (also in decorator arguments, evaluated at import);
    TorchRL's own modules keep TorchRL's classes while the tests run."""
    (tmp_path / "pytest.ini").write_text("[pytest]\n")
    (tmp_path / "test").mkdir()
    (tmp_path / "test" / "test_names.py").write_text(textwrap.dedent('''
        import pytest
        import torchrl.objectives
        from torchrl.objectives import SACLoss
        from torchrl.data.replay_buffers.samplers import PrioritizedSampler

        @pytest.mark.parametrize("cls", [PrioritizedSampler])
        def test_names(cls):
            assert SACLoss.__module__ == "impls.sac_done_states"
            assert cls.__module__ == "impls.prioritized_replay"
            assert torchrl.objectives.SACLoss.__module__ == "torchrl.objectives.sac"
    '''))
    swapped = _run(["-m", "pytest", "-q", "-p", "no:cacheprovider", "-p",
                    "conformance.dropin.swap", "test"], tmp_path)
    assert swapped.returncode == 0, swapped.stdout[-3000:]
    assert "names rebound in test_names (2)" in swapped.stdout
    shipped = _run(["-m", "pytest", "-q", "-p", "no:cacheprovider", "test"], tmp_path)
    assert shipped.returncode == 1  # the same test fails without the swap: it can fail


def test_command_line_refuses_a_path_without_torchrl_tests(tmp_path):
    done = _run(["-m", "conformance.dropin", str(tmp_path)], ROOT, timeout=120)
    assert done.returncode == 2
    assert done.stderr.strip().count("\n") == 0 and done.stderr.startswith("ERROR:")
    assert "test/test_distributions.py" in done.stderr


def test_junit_ids_become_node_ids(tmp_path):
    from conformance.dropin.rerun import node_id

    (tmp_path / "test" / "rb").mkdir(parents=True)
    (tmp_path / "test" / "rb" / "test_rb_core.py").write_text("")
    assert node_id("test.rb.test_rb_core.TestPrefetch::test_it[2]", tmp_path) == \
        "test/rb/test_rb_core.py::TestPrefetch::test_it[2]"
    assert node_id("test.rb.test_rb_core::test_plain", tmp_path) == "test/rb/test_rb_core.py::test_plain"
    assert node_id("test.nowhere.Test::test_x", tmp_path) is None


def test_a_test_that_passes_on_rerun_is_flaky_not_broken(tmp_path):
    """Reruns of two tests the first swapped run failed: one passes on a swapped rerun
    (flaky), one fails on every swapped rerun and passes as shipped (broken)."""
    from conformance.dropin import rerun

    (tmp_path / "test_mod.py").write_text("")
    swapped_outcomes = {"test_mod::test_flaky": iter(["failure", "pass", "pass"]),
                        "test_mod::test_broken": iter(["failure"] * 3)}

    def command(targets, junit, swapped):
        cases = []
        for test_id, outcomes in swapped_outcomes.items():
            failed = swapped and next(outcomes) == "failure"
            body = '<failure message="boom"/>' if failed else ""
            cases.append(f'<testcase classname="test_mod" name="{test_id.split("::")[1]}">'
                         f"{body}</testcase>")
        junit.write_text(f"<testsuite>{''.join(cases)}</testsuite>")
        return ["true"]

    found = rerun.flaky(list(swapped_outcomes), tmp_path, command, {}, tmp_path)
    assert list(found) == ["test_mod::test_flaky"]
    assert "swapped: failed, passed, passed" in found["test_mod::test_flaky"]
