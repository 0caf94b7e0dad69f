"""The torchrl adapters detect behaviour and signatures; version strings are only labels.

Whatever provides the ``torchrl`` module (``torchrl``, ``torchrl-nightly``, a checkout on the
path), the adapters must judge the code, not its version: shown another version string, the
installed 0.14.1 gets the same verdicts.
"""

import ast
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from conformance import versions
from conformance.implementations.torchrl_areas import prioritized_replay, sac_done_states
from tests.conftest import ROOT

AREAS = ROOT / "conformance" / "implementations" / "torchrl_areas"
VERSION_READERS = {"installed_version", "module_version", "version_tuple", "stack_versions",
                   "__version__", "metadata"}


@pytest.mark.parametrize("module", sorted(p.name for p in AREAS.glob("*.py")))
def test_no_torchrl_area_adapter_reads_a_version(module):
    tree = ast.parse((AREAS / module).read_text())
    names = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}
    names |= {n.attr for n in ast.walk(tree) if isinstance(n, ast.Attribute)}
    names |= {a.name for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) for a in n.names}
    assert not names & VERSION_READERS, f"{module} reads a version: {names & VERSION_READERS}"


# A shim run before pytest: every lookup of the torchrl distributions' version answers SHOWN
# (what a wrong switch on "0.4.0" would read the pre-#3925 way), and the column is labelled so.
SHIM = """
import importlib.metadata as m, os, sys
shown, real = os.environ["SHOWN_VERSION"], m.version
m.version = lambda d: shown if d.lower() in ("torchrl", "torchrl-nightly") else real(d)
import pytest
sys.exit(pytest.main(sys.argv[1:]))
"""
SPECS = ["conformance/test_prioritized_replay.py", "conformance/test_sac_done_states.py"]


def _start(tmp_path, shown):
    """One run of the specs on the installed torchrl, showing ``shown`` as its version (None:
    its own); the three runs of the test go side by side, each on one worker."""
    name = (shown or "plain").replace(" ", "-")
    out = tmp_path / f"{name}.json"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    argv = [*SPECS, "--impl", "torchrl", "--expectations", "none", "--results", str(out), "-q",
            "-n", "0", "-p", "no:cacheprovider"]
    if shown:
        env |= {"SHOWN_VERSION": shown, "TORCHRL_CONFORMANCE_VERSION_LABEL": shown}
        cmd = [sys.executable, "-c", SHIM, *argv]
    else:
        cmd = [sys.executable, "-m", "pytest", *argv]
    log = (tmp_path / f"{name}.log").open("w")
    return out, log, subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT)


def _verdicts(run):
    out, log, proc = run
    proc.wait(timeout=600)
    log.close()
    assert out.is_file(), f"no results from {proc.args[-1]}: {Path(log.name).read_text()[-1500:]}"
    rows = json.loads(out.read_text())["rows"]
    return {r["nodeid"]: (r["outcome"], r["message"]) for r in rows}, rows


@pytest.mark.slow
def test_verdicts_on_the_installed_torchrl_do_not_depend_on_the_version_it_shows(tmp_path):
    if versions.installed_version("torchrl") == versions.NOT_INSTALLED:
        pytest.skip("needs the stack's torchrl")
    # (torchrl parses its own version at import: the strings shown must be valid versions)
    shown_versions = ("0.4.0", "0.0.0.dev20261027")
    runs = {shown: _start(tmp_path, shown) for shown in (None, *shown_versions)}
    try:
        plain, _ = _verdicts(runs[None])
        assert len(plain) > 50
        for shown in shown_versions:
            seen, rows = _verdicts(runs[shown])
            assert {r["implementation_version"] for r in rows} == {shown}  # the shim took effect
            differ = sorted(k for k in plain if plain[k] != seen.get(k))
            assert not differ, f"shown torchrl {shown}: verdicts changed for {differ[:3]}"
    finally:
        for _, log, proc in runs.values():
            proc.kill()
            proc.wait()
            log.close()


class _Sampler:
    """A sampler whose empty default is ``1.0`` (raw, #3925) or ``(1 + eps) ** alpha``."""

    transformed = False

    def __init__(self, capacity, *, alpha, beta, eps):
        self.alpha, self.eps = alpha, eps

    @property
    def default_priority(self):
        return (1.0 + self.eps) ** self.alpha if self.transformed else 1.0


class _OldSampler(_Sampler):
    transformed = True


def test_default_priority_convention_is_detected_from_the_sampler():
    assert prioritized_replay.default_is_transformed(_OldSampler)
    assert not prioritized_replay.default_is_transformed(_Sampler)


def test_sac_without_the_flag_runs_flag_off_and_fails_only_flag_on():
    class Loss:  # no skip_done_states in the signature: a source before 0.7.0
        def __init__(self, actor, qvalue, *, num_qvalue_nets=2, alpha_init=1.0):
            pass

    area = sac_done_states.TorchRLSACDoneStates(Loss, Loss, library="torchrl old")
    nets = type("N", (), {"kind": "continuous"})()
    with pytest.raises(AssertionError, match="has no skip_done_states argument"):
        area._build(nets, (), 1, True, 0.1, 0.9, -1.0)
    with pytest.raises(Exception) as flag_off:  # gets past the flag check, then the fake fails
        area._build(nets, (), 1, False, 0.1, 0.9, -1.0)
    assert "skip_done_states" not in str(flag_off.value)


def _dist_info(site: Path, dist: str, module: str, version: str):
    (site / module).mkdir(parents=True)
    (site / module / "__init__.py").write_text("")
    info = site / f"{dist.replace('-', '_')}-{version}.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dist}\nVersion: {version}\n")
    (info / "RECORD").write_text(f"{module}/__init__.py,,\n")
    (info / "top_level.txt").write_text(f"{module}\n")


def _module_version(path: Path, module: str) -> str:
    code = f"from conformance.versions import module_version; print(module_version({module!r}))"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(path), str(ROOT)])}
    return subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                          text=True, check=True).stdout.strip()


def test_the_label_is_the_version_of_whatever_provides_the_module(tmp_path):
    _dist_info(tmp_path / "site", "fakerl-nightly", "fakerl", "2026.10.27")
    assert _module_version(tmp_path / "site", "fakerl") == "2026.10.27"
    checkout = tmp_path / "checkout"
    (checkout / "fakerl").mkdir(parents=True)
    (checkout / "fakerl" / "__init__.py").write_text("")
    git = ["git", "-C", str(checkout), "-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run([*git, "init", "-q"], check=True)
    subprocess.run([*git, "add", "."], check=True)
    subprocess.run([*git, "commit", "-qm", "c"], check=True)
    sha = subprocess.run([*git, "rev-parse", "--short=7", "HEAD"], capture_output=True,
                         text=True, check=True).stdout.strip()
    assert _module_version(checkout, "fakerl") == f"git {sha}"
    assert _module_version(tmp_path, "no_such_module_here") == versions.NOT_INSTALLED
