"""Embedding the specs in another project's test run (``conformance.embed``): a small
"TorchRL-like" project, outside this checkout, whose test module pulls the specs in with its own
expectations file; its pytest run shows each spec's outcome as the suite decided it.

The project's implementation has two bugs of PPO value clipping: a negative clip value is
accepted (listed in the project's expectations: a known failure, xfailed) and ``clip_value=None``
clips (not listed: a failure). Its expectations also list a spec that passes (an unexpected
pass: red). The runs are narrowed with ``-k`` to a handful of specs (seconds)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from conformance import embed, manifest
from conformance.paths import PACKAGE, ROOT

IMPL = '''
"""PPO value clipping with two bugs: a negative clip value is accepted, and None clips."""
from types import SimpleNamespace

import torch

from conformance.interface import CriticLoss


class PPOValueClipping:
    critic_scale = 2.0

    def critic_loss(self, *, value_net, observation, old_value, returns, clip_value,
                    clip_epsilon, critic_coeff):
        v = value_net(observation)
        if clip_value is False or clip_value == 0:  # 0: off, as in TorchRL
            return CriticLoss(critic_coeff * ((v - returns) ** 2).mean(), None)
        c = abs(clip_epsilon if clip_value in (True, None) else float(clip_value))
        clipped = old_value + (v - old_value).clamp(-c, c)
        loss = torch.maximum((v - returns) ** 2, (clipped - returns) ** 2).mean()
        return CriticLoss(critic_coeff * loss, float(((v - old_value).abs() > c).double().mean()))


IMPL = SimpleNamespace(name="mypkg", version="1.0", ppo_value_clipping=PPOValueClipping())
'''

EXPECTATIONS = '''\
# the project's own known failures, keyed by the suite's test ids
conformance/test_ppo_value_clipping.py::test_negative_clip_value_is_rejected | a negative clip value is taken as its absolute value | https://example.org/mypkg/issues/1
conformance/test_ppo_value_clipping.py::test_baselines_counterexample | (stale: this one passes) | https://example.org/mypkg/issues/2
'''

HOST_MODULE = '''
from pathlib import Path

from conformance.embed import specs

test_conformance = specs("mypkg.impl:IMPL", areas=["ppo_value_clipping"],
                         expectations=Path(__file__).with_name("conformance_expectations.txt"))
'''

OWN_TESTS = '''
import sys

def test_own_test_untouched():
    # the suite's plug-in (and its hypothesis profile, watchdog, isolation) stays in the child
    assert "conformance.pytest_plugin" not in sys.modules
'''

#: the specs the runs select: a known failure, an unexpected pass, a pass and a failure
SELECTION = "negative_clip or counterexample or option_is_off or own_test"
HOST = "test/test_conformance.py::test_conformance"


def make_project(folder: Path) -> Path:
    (folder / "mypkg").mkdir(parents=True)
    (folder / "mypkg" / "__init__.py").write_text("")
    (folder / "mypkg" / "impl.py").write_text(IMPL)
    (folder / "test").mkdir()
    (folder / "test" / "conformance_expectations.txt").write_text(EXPECTATIONS)
    (folder / "test" / "test_conformance.py").write_text(HOST_MODULE)
    (folder / "test" / "test_own.py").write_text(OWN_TESTS)
    return folder


def run_host(project: Path, python: str, *args: str, pythonpath: list[str]) -> tuple[int, str]:
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("PYTEST_", "TORCHRL_CONFORMANCE_"))}
    env.update(PYTHONPATH=os.pathsep.join(pythonpath), PYTHONHASHSEED="0", OMP_NUM_THREADS="1")
    proc = subprocess.run([python, "-m", "pytest", "test", "-p", "no:cacheprovider", "-rA",
                           "-k", SELECTION, "--basetemp", str(project / "tmp"), *args],
                          cwd=project, env=env, capture_output=True, text=True, timeout=300)
    return proc.returncode, proc.stdout + proc.stderr


def outcomes(output: str) -> dict[str, str]:
    """The host's short summary (``-rA``): test id -> PASSED/FAILED/XFAIL/..."""
    found = {}
    for line in output.splitlines():
        word, _, rest = line.partition(" ")
        if word in ("PASSED", "FAILED", "XFAIL", "XPASS", "SKIPPED", "ERROR"):
            found[rest.split(" - ")[0].strip()] = word
    return found


def check_host_run(code: int, output: str) -> None:
    got = outcomes(output)
    expected = {
        f"{HOST}[test_ppo_value_clipping.test_negative_clip_value_is_rejected]": "XFAIL",
        f"{HOST}[test_ppo_value_clipping.test_baselines_counterexample]": "FAILED",
        f"{HOST}[test_ppo_value_clipping.test_no_clipping_when_option_is_off[clip_value=False]]":
            "PASSED",
        f"{HOST}[test_ppo_value_clipping.test_no_clipping_when_option_is_off[clip_value=None]]":
            "FAILED",
        f"{HOST}[test_ppo_value_clipping.test_no_clipping_when_option_is_off[clip_value=0.0]]":
            "PASSED",
        "test/test_own.py::test_own_test_untouched": "PASSED",
    }
    assert got == expected, output[-4000:]
    assert code == 1, output[-4000:]
    # each red test says why, with the suite's own words
    assert "test_baselines_counterexample[IMPL]: UNEXPECTED PASS" in output, output[-4000:]
    assert "test_no_clipping_when_option_is_off[IMPL-clip_value=None]: FAIL" in output
    assert "a negative clip value is taken as its absolute value" in output  # the xfail reason


@pytest.mark.slow
def test_a_host_project_embeds_the_specs_with_its_own_expectations(tmp_path):
    project = make_project(tmp_path / "project")
    code, output = run_host(project, sys.executable, pythonpath=[str(ROOT), str(project)])
    check_host_run(code, output)
    # one child run, narrowed to the five selected specs, its results kept for the reader
    children = list((project / "tmp").glob("conformance-*/results.json"))
    assert len(children) == 1, output[-2000:]
    rows = json.loads(children[0].read_text())["rows"]
    assert len(rows) == 5 and {r["implementation"] for r in rows} == {"IMPL"}


@pytest.mark.slow
def test_under_xdist_the_workers_share_one_child_run(tmp_path):
    project = make_project(tmp_path / "project")
    code, output = run_host(project, sys.executable, "-n", "2",
                            pythonpath=[str(ROOT), str(project)])
    check_host_run(code, output)
    assert len(list((project / "tmp").glob("conformance-*/results.json"))) == 1, output[-2000:]


@pytest.mark.slow
def test_a_bad_expectations_file_is_the_suites_one_line_in_every_spec(tmp_path):
    project = make_project(tmp_path / "project")
    (project / "test" / "conformance_expectations.txt").write_text(
        "conformance/test_no_such_file.py::test_x | r | https://example.org\n")
    code, output = run_host(project, sys.executable, pythonpath=[str(ROOT), str(project)])
    got = outcomes(output)
    assert code == 1 and got.pop("test/test_own.py::test_own_test_untouched") == "PASSED"
    assert set(got.values()) == {"FAILED"} and len(got) == 5, output[-3000:]
    assert "exit code 4 and no results" in output and "test_no_such_file.py" in output


# --- fast: ids and the child's command line ------------------------------------------------

def test_host_ids_map_one_to_one_onto_the_manifest_ids():
    ids = embed.spec_ids()
    assert len(ids) == json.loads(manifest.PATH.read_text())["count"]
    hosts = [embed.host_id(i) for i in ids]
    assert len(set(hosts)) == len(ids) and not any("::" in h for h in hosts)
    assert [embed.spec_of(h) for h in hosts] == ids
    assert embed.host_id("conformance/test_x.py::test_y[a=1]") == "test_x.test_y[a=1]"


@pytest.mark.parametrize("spec", ["conformance/test_x.py::test_y",
                                  "conformance/test_x.py::test_y[c=0.2-[0,2]]"])
def test_the_childs_test_ids_are_the_manifests_with_the_implementation(spec):
    nodeid = embed._child_nodeid(spec, "IMPL")
    assert nodeid.startswith("conformance/test_x.py::test_y[IMPL")
    assert manifest.spec_id(nodeid, "IMPL") == spec


def test_the_child_runs_the_package_when_everything_is_selected(tmp_path):
    embedding = embed.Embedding("torchrl", None, None, ())
    whole = embed.command(embedding, embed.spec_ids(), tmp_path)
    assert whole[-2:] == ["--pyargs", "conformance"] and "--expectations" not in whole
    some = embed.command(embedding, embed.spec_ids(["ppo_value_clipping"])[:2], tmp_path)
    assert [Path(a.split("::")[0]).parent for a in some[-2:]] == [PACKAGE, PACKAGE]
    assert all("[torchrl" in a for a in some[-2:])
    # the host's ini file never reaches the child: its own, in its own folder
    assert some[some.index("-c") + 1] == str(tmp_path / "pytest.ini")


def test_an_unknown_area_or_a_missing_expectations_file_fails_at_import(tmp_path):
    with pytest.raises(ValueError, match="unknown area.*ppo"):
        embed.specs("torchrl", areas=["ppo"])
    with pytest.raises(FileNotFoundError, match="no such file"):
        embed.specs("torchrl", expectations=tmp_path / "missing.txt")


def test_a_whole_child_run_that_is_partial_gives_no_spec_a_verdict(tmp_path):
    """The embed host is a parent: when every spec was asked for and the child's results say
    partial (a thread changed global state, a spec did not run), no host test passes."""
    spec_id = embed.spec_ids()[0]
    spec = embed.Spec(spec_id, embed.Embedding("torchrl", None, None, ()))
    row = {"nodeid": spec_id, "outcome": "pass", "expected": True, "message": ""}
    embed.ChildRun(tmp_path, 0, {spec_id: row}, "", None, whole=True).check(spec)  # passes
    run = embed.ChildRun(tmp_path, 0, {spec_id: row}, "", "1 change(s) of global state by a "
                         "thread", whole=True)
    with pytest.raises(pytest.fail.Exception, match="not complete, so no spec has a verdict: 1 "
                       "change"):
        run.check(spec)
