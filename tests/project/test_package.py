"""The suite as a package: the wheel holds what a run needs, its pytest11 entry point is inert
where no spec is collected, and an installed run from an empty folder gives the in-repo rows.

The slow tests build the wheel once (``python -m build --no-isolation``: ``build`` comes with
asv, the bench extra of the self-tests' environment), install it into a
fresh virtualenv that reuses the running stack's packages through a ``.pth`` file (torch is not
installed twice) and run it as a user does, outside this checkout."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import pytest

from conformance import __version__, console, pytest_entry, shipped
from conformance.paths import ROOT
from tests.conftest import run_suite

#: the slice compared spec for spec (both ways); the full suite takes ~75 s per run on 2 cores
SLICE = "ppo_value_clipping and not family"


# --- fast: the entry point's choice, the console's checks, the shipped files ---------------

@pytest.mark.parametrize(("args", "pyargs", "where", "active"), [
    (["--", "x"], False, "tmp", False),
    ([], False, "tmp", False),
    (["tests/test_a.py"], False, "tmp", False),
    (["conformance"], True, "tmp", True),
    (["conformance.test_ppo_value_clipping"], True, "tmp", True),
    (["conformancex"], True, "tmp", False),
    (["conformance"], False, "tmp", False),  # a folder of the user's named conformance
    ([str(pytest_entry.PACKAGE_DIR)], False, "tmp", True),
    ([f"{pytest_entry.PACKAGE_DIR}/test_ppo_value_clipping.py::test_x"], False, "tmp", True),
    ([], False, "package", True),
])
def test_the_entry_point_wakes_only_for_the_specs(tmp_path, args, pyargs, where, active):
    invoked = tmp_path if where == "tmp" else pytest_entry.PACKAGE_DIR
    assert pytest_entry.targets_specs(args, pyargs, invoked) is active


def test_a_checkout_beside_another_imported_copy_is_told_apart(tmp_path):
    """A command line pointing into a checkout while Python imports another copy (a wheel)."""
    other = tmp_path / "clone"
    (other / "conformance").mkdir(parents=True)
    (other / "noxfile.py").write_text("")
    (other / "conformance" / "pytest_entry.py").write_text("")
    (other / "tests").mkdir()
    assert pytest_entry.checkout_of(other / "tests") == other
    for args in (["conformance"], ["tests/x.py::test_y"], []):
        assert pytest_entry.other_copy(args, False, other) == other, args
    assert pytest_entry.other_copy(["conformance"], True, other) is None  # --pyargs: a module
    assert pytest_entry.other_copy(["x.py"], False, tmp_path) is None  # not in a checkout
    # the copy imported here, pointed at from anywhere, is no other copy
    assert pytest_entry.other_copy([str(pytest_entry.PACKAGE_DIR)], False, tmp_path) is None


def test_shipped_expectations_by_detection():
    folder = shipped.EXPECTATIONS_DIR
    assert shipped.shipped_file("torchrl", "0.14.1") == folder / "torchrl-0.14.1.txt"
    assert shipped.shipped_file("torchrl", "0.14.1+cu128") == folder / "torchrl-0.14.1.txt"
    assert shipped.shipped_file("torchrl", "2026.10.27") == folder / "torchrl_nightly.txt"
    assert shipped.shipped_file("torchrl", "0.99.0") is None
    assert shipped.shipped_file("mypkg", "1.0") is None
    assert "0.13.3" in shipped.shipped_versions("torchrl")


def _preflight(tmp_path, *argv):
    return console.preflight(console.build_parser().parse_args(list(argv)))


def test_console_without_torchrl_is_one_line(tmp_path, monkeypatch):
    real = console.importlib.util.find_spec
    monkeypatch.setattr(console.importlib.util, "find_spec",
                        lambda name, *a: None if name == "torchrl" else real(name, *a))
    problem = _preflight(tmp_path, "--report-dir", str(tmp_path / "r"))
    assert problem.startswith("torchrl is not installed") and "\n" not in problem


def test_console_with_an_unknown_torchrl_version_is_one_line(tmp_path, monkeypatch):
    import conformance.versions

    monkeypatch.setattr(conformance.versions, "module_version", lambda name: "0.99.0")
    problem = _preflight(tmp_path, "--report-dir", str(tmp_path / "r"))
    assert problem.startswith("torchrl 0.99.0: no shipped expectations") and "0.14.1" in problem
    assert _preflight(tmp_path, "--report-dir", str(tmp_path / "r"), "--expectations", "none") is None


def test_console_with_an_unwritable_report_dir_is_one_line(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    problem = _preflight(tmp_path, "--report-dir", str(blocker / "reports"))
    assert problem.startswith("--report-dir") and "not a directory" in problem


def test_console_passes_the_users_pytest_arguments_after_its_own():
    args = console.build_parser().parse_args(["--impl", "mypkg.mod:IMPL", "--", "-k", "ppo"])
    command = console.pytest_command(args)
    assert command[:2] == ["--pyargs", "conformance"]
    # the user's arguments after the console's own; the console always judges completeness
    assert command[-3:] == ["-k", "ppo", "--require-complete"]
    assert command[command.index("--impl") + 1] == "mypkg.mod:IMPL"


# --- slow: the wheel, installed ----------------------------------------------------------

def _clean_env(**extra) -> dict:
    env = {k: v for k, v in os.environ.items()
           if k != "PYTHONPATH" and not k.startswith(("TORCHRL_CONFORMANCE_", "PYTEST_"))}
    env.update(PYTHONHASHSEED="0", OMP_NUM_THREADS="1", **extra)
    return env


def _run(command, cwd, **extra):
    return subprocess.run([str(c) for c in command], cwd=cwd, env=_clean_env(**extra),
                          capture_output=True, text=True, timeout=600)


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    """(venv python, its site-packages, the wheel) with the wheel installed, nothing else."""
    base = tmp_path_factory.mktemp("wheel")
    # built from a copy of the project's files: setuptools writes its egg-info beside the
    # sources, and two pytest-xdist workers may build at once
    source = base / "source"
    listed = subprocess.run(["git", "ls-files", "--cached", "--others", "--exclude-standard"],
                            cwd=ROOT, capture_output=True, text=True, check=True).stdout.split()
    for name in listed:
        if (ROOT / name).is_file():
            (source / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / name, source / name)
    built = _run([sys.executable, "-m", "build", "--no-isolation", "--outdir", base / "dist",
                  source], base)
    assert built.returncode == 0, built.stdout[-2000:] + built.stderr[-2000:]
    wheel = next((base / "dist").glob("*.whl"))
    venv = base / "venv"
    made = _run([sys.executable, "-m", "venv", "--without-pip", venv], base)
    assert made.returncode == 0, made.stderr
    python = venv / "bin" / "python"
    site = Path(_run([python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                     base).stdout.strip())
    # the stack's packages (torch, torchrl, pytest, ...) after the venv's own: no second torch
    (site / "_stack.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    done = _run([python, "-m", "pip", "install", "--no-deps", "--no-index", "-q", wheel], base)
    assert done.returncode == 0, done.stderr
    return python, site, wheel


def _tree_hash(folder: Path) -> dict[str, str]:
    return {str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*")) if p.is_file()}


@pytest.mark.slow
def test_the_wheel_and_sdist_hold_every_file_a_run_needs(installed):
    _, _, wheel = installed
    tracked = subprocess.run(["git", "ls-files", "conformance", "impls"], cwd=ROOT,
                             capture_output=True, text=True, check=True).stdout.split()
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
        entry_points = next(archive.read(n).decode() for n in names
                            if n.endswith(".dist-info/entry_points.txt"))
    # the released ids are the CHANGELOG check's baseline, a file of the checkout, not of a run
    needed = [f for f in tracked if not f.endswith("manifest_released.json")]
    assert [f for f in needed if f not in names] == []
    assert "[pytest11]\ntorchrl-conformance = conformance.pytest_entry" in entry_points
    assert "torchrl-conformance = conformance.console:main" in entry_points
    import tarfile

    sdist = next(wheel.parent.glob("*.tar.gz"))
    with tarfile.open(sdist) as archive:
        inside = {n.split("/", 1)[1] for n in archive.getnames() if "/" in n}
    assert [f for f in needed if f not in inside] == []


PROJECT_CONFTEST = '''
def pytest_addoption(parser):
    # options the suite's plug-in has too: an active plug-in would clash with them
    parser.addoption("--device", default="cpu")
    parser.addoption("--impl", default="mine")
'''
PROJECT_TESTS = '''
import sys
import pytest

def test_passes(request):
    assert request.config.getoption("device") == "cpu"

def test_fails():
    assert 1 == 2

@pytest.mark.xfail(strict=True)
def test_xfails():
    assert 0

def test_the_suite_plugin_is_not_loaded():
    assert "conformance.pytest_plugin" not in sys.modules
    assert "torch" not in sys.modules and "hypothesis" not in sys.modules
'''


@pytest.mark.slow
def test_the_entry_point_is_inert_in_a_project_that_collects_no_spec(installed, tmp_path):
    python, _, _ = installed
    project = tmp_path / "project"
    (project / "tests").mkdir(parents=True)
    (project / "conftest.py").write_text(PROJECT_CONFTEST)
    (project / "tests" / "test_mine.py").write_text(PROJECT_TESTS)
    runs = {}
    for name, disable in (("on", []), ("off", ["-p", "no:torchrl-conformance"])):
        before = set(project.rglob("*"))
        proc = _run([python, "-m", "pytest", "-p", "no:cacheprovider", "-rA", *disable], project)
        # other plug-ins of the stack write files of their own (pytest-benchmark: .benchmarks)
        written = {p.relative_to(project) for p in set(project.rglob("*")) - before
                   if "__pycache__" not in p.parts}
        for path in sorted(set(project.rglob("*")) - before, reverse=True):
            path.rmdir() if path.is_dir() else path.unlink()
        runs[name] = (proc.returncode, proc.stdout, written)
    code, out, written = runs["on"]
    assert code == 1 and "1 failed, 2 passed, 1 xfailed" in out, out[-2000:]
    assert written == runs["off"][2]
    # pytest's own "plugins:" line lists every installed plug-in; nothing else names the suite
    assert [line for line in out.splitlines()
            if "conformance" in line.lower() and not line.startswith("plugins:")] == []
    session_lines = [line for line in out.splitlines() if not line.startswith("plugins:")]
    session_off = [line for line in runs["off"][1].splitlines() if not line.startswith("plugins:")]
    assert len(session_lines) == len(session_off)  # no extra header line
    assert runs["off"][0] == code and "1 failed, 2 passed, 1 xfailed" in runs["off"][1]


def _outcomes(results: dict) -> dict[str, tuple]:
    return {r["nodeid"]: (r["outcome"], r["expected"]) for r in results["rows"]}


@pytest.mark.slow
def test_an_installed_run_from_an_empty_folder_gives_the_in_repo_rows(installed, tmp_path):
    """Both forms (the console script, pytest --pyargs) against the checkout's run, spec for
    spec, on SLICE; reports under the folder; site-packages byte-identical."""
    python, site, _ = installed
    before = _tree_hash(site)
    in_repo = run_suite(tmp_path / "repo", "conformance", "--impl", "torchrl", "-k", SLICE)
    assert in_repo.results, in_repo.output[-2000:]
    expected = _outcomes(in_repo.results)
    assert len(expected) > 10

    empty = tmp_path / "empty"
    empty.mkdir()
    script = python.parent / "torchrl-conformance"
    console_run = _run([script, "--", "-k", SLICE], empty)
    # narrowed by -k: written beside where a complete run's reports go (reports/partial/)
    document = json.loads((empty / "reports" / "partial" / "results.json").read_text())
    assert _outcomes(document) == expected, console_run.stdout[-2000:]
    assert document["suite"] == in_repo.results["suite"]
    assert (empty / "reports" / "partial" / "conformance.md").is_file()
    # besides reports/: hypothesis's own cache (.hypothesis) and, with pytest-benchmark
    # installed, its .benchmarks: under the folder too, nothing outside it
    assert {p.name for p in empty.iterdir()} <= {"reports", ".hypothesis", ".benchmarks"}

    other = tmp_path / "other"
    other.mkdir()
    pytest_run = _run([python, "-m", "pytest", "--pyargs", "conformance", "--impl", "torchrl",
                       "-k", SLICE, "-p", "no:cacheprovider"], other)
    partial = other / "reports" / "partial" / "results.json"
    assert _outcomes(json.loads(partial.read_text())) == expected, \
        pytest_run.stdout[-2000:]
    # narrowed by -k: plain pytest exits as pytest does; the console is a verdict (a parent
    # that reads the results): a partial run is never 0
    assert pytest_run.returncode == in_repo.returncode
    assert console_run.returncode == 6, console_run.stderr[-2000:]
    assert "torchrl-conformance: PARTIAL RUN: not a conformance verdict" in console_run.stderr
    assert _tree_hash(site) == before


@pytest.mark.slow
def test_an_installed_run_never_writes_into_site_packages(installed):
    python, site, _ = installed
    proc = _run([python, "-m", "pytest", "--pyargs", "conformance", "--impl", "torchrl",
                 "-p", "no:cacheprovider", "-k", SLICE], site)
    lines = [line for line in proc.stdout.splitlines() + proc.stderr.splitlines() if "ERROR" in line]
    assert proc.returncode == 4 and len(lines) == 1, proc.stdout[-2000:]
    assert "inside the installed package's folder" in lines[0]
    assert not (site / "reports").exists()
    script = python.parent / "torchrl-conformance"
    proc = _run([script, "--report-dir", site / "reports"], site.parent)
    assert proc.returncode == 2 and "inside the installed package's folder" in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1


@pytest.mark.slow
def test_an_installed_run_of_a_torchrl_without_shipped_expectations_is_one_line(installed, tmp_path):
    """pytest --pyargs on a torchrl version the suite ships nothing for (the runner's label
    stands in for it): one line, exit code 4, nothing written; with --expectations none it runs."""
    python, _, _ = installed
    proc = _run([python, "-m", "pytest", "--pyargs", "conformance", "--impl", "torchrl",
                 "-p", "no:cacheprovider"], tmp_path, TORCHRL_CONFORMANCE_VERSION_LABEL="0.99.0")
    lines = [line for line in (proc.stdout + proc.stderr).splitlines() if line.strip()]
    assert proc.returncode == 4 and len(lines) == 1, proc.stdout[-2000:]
    assert lines[0].startswith("ERROR: torchrl 0.99.0: no shipped expectations")
    assert list(tmp_path.iterdir()) == []


THIRD_PARTY = '''
"""A third-party implementation of one area, as its author would plug it in."""
from types import SimpleNamespace

import torch

from conformance.interface import CriticLoss


class PPOValueClipping:
    critic_scale = 2.0  # TorchRL's convention: no 0.5 in front of the squared error

    def critic_loss(self, *, value_net, observation, old_value, returns, clip_value,
                    clip_epsilon, critic_coeff):
        v = value_net(observation)
        if clip_value is None or clip_value is False or clip_value == 0:
            return CriticLoss(critic_coeff * ((v - returns) ** 2).mean(), None)
        c = clip_epsilon if clip_value is True else float(clip_value)
        if c < 0:
            raise ValueError(f"clip_value must be >= 0, got {c}")
        clipped = old_value + (v - old_value).clamp(-c, c)
        loss = torch.maximum((v - returns) ** 2, (clipped - returns) ** 2)%s.mean()
        return CriticLoss(critic_coeff * loss, float(((v - old_value).abs() > c).double().mean()))


IMPL = SimpleNamespace(name="mypkg", version="1.0", ppo_value_clipping=PPOValueClipping())
'''


@pytest.mark.slow
@pytest.mark.parametrize("bug", ["", "[:1]"], ids=["right", "loss-of-the-first-item-only"])
def test_a_third_party_package_is_checked_from_an_empty_folder(installed, tmp_path, bug):
    """Installed as its own package (pip), checked with --impl from a temporary folder: the
    right one conformant, a broken one caught (no expectations: every failure counts)."""
    python, _, _ = installed
    source = tmp_path / "src"
    (source / "mypkg").mkdir(parents=True)
    (source / "mypkg" / "__init__.py").write_text("")
    (source / "mypkg" / "conformance_impl.py").write_text(THIRD_PARTY % bug)
    (source / "pyproject.toml").write_text(
        '[build-system]\nrequires = ["setuptools>=64"]\nbuild-backend = "setuptools.build_meta"\n'
        '[project]\nname = "mypkg"\nversion = "1.0"\n[tool.setuptools]\npackages = ["mypkg"]\n')
    done = _run([python, "-m", "pip", "install", "--no-deps", "--no-index", "--no-build-isolation",
                 "-q", source], tmp_path)
    assert done.returncode == 0, done.stderr[-2000:]
    try:
        empty = tmp_path / "empty"
        empty.mkdir()
        # the broken one on its area's seed specs only (cheaper; a PARTIAL run, in reports/partial)
        narrow = ["--", "-k", "ppo_value_clipping and not family"] if bug else []
        proc = _run([python.parent / "torchrl-conformance", "--impl", "mypkg.conformance_impl:IMPL",
                     *narrow], empty)
        results = empty / "reports" / ("partial" if bug else "") / "results.json"
        rows = json.loads(results.read_text())["rows"]
        ppo = {r["outcome"] for r in rows if r["area"] == "ppo_value_clipping"}
        if bug:
            assert proc.returncode == 1 and "fail" in ppo, proc.stdout[-2000:]
        else:
            assert proc.returncode == 0 and ppo == {"pass"}, proc.stdout[-2000:]
            assert {r["outcome"] for r in rows if r["area"] != "ppo_value_clipping"} <= \
                {"pass", "not applicable"}
    finally:
        _run([python, "-m", "pip", "uninstall", "-y", "-q", "mypkg"], tmp_path)


@pytest.mark.slow
@pytest.mark.skipif(sys.version_info < (3, 11), reason="python -P (what the pytest script does)")
def test_a_checkout_beside_the_installed_wheel(installed, tmp_path):
    """The checkout and the wheel in one environment: ``python -m pytest`` in the checkout runs
    the checkout; the ``pytest`` script (``python -P``: no working folder on sys.path) imports
    the wheel, and a command line into the checkout is one line saying so, exit code 4."""
    python, _, _ = installed
    spec = "conformance/test_ppo_value_clipping.py::test_baselines_counterexample"
    common = [spec, "--impl", "reference", "-p", "no:cacheprovider", "--no-report",
              "--results", tmp_path / "results.json"]
    proc = _run([python, "-m", "pytest", *common], ROOT)
    assert proc.returncode == 0 and "1 passed" in proc.stdout, proc.stdout[-2000:]
    assert f"conformance suite: torchrl-conformance {__version__} ({ROOT / 'conformance'})" \
        in proc.stdout
    for args in ([spec], ["tests/project/test_changelog.py"]):
        proc = _run([python, "-P", "-m", "pytest", *args, "-p", "no:cacheprovider"], ROOT)
        lines = [line for line in (proc.stdout + proc.stderr).splitlines() if line.strip()]
        assert proc.returncode == 4 and len(lines) == 1, proc.stdout[-2000:] + proc.stderr
        assert lines[0].startswith(f"ERROR: {ROOT} is a checkout of torchrl-conformance, but "
                                   "Python imports the installed one")


@pytest.mark.slow
def test_a_host_project_embeds_the_installed_specs(installed, tmp_path):
    """conformance.embed from the wheel (no checkout on the path): the host project's outcomes
    of tests/project/test_embed.py, and site-packages untouched."""
    from tests.project import test_embed

    python, site, _ = installed
    before = _tree_hash(site)
    project = test_embed.make_project(tmp_path / "project")
    code, output = test_embed.run_host(project, str(python), pythonpath=[str(project)])
    test_embed.check_host_run(code, output)
    where = _run([python, "-c", "import conformance.embed as e; print(e.__file__)"], project,
                 PYTHONPATH=str(project))
    assert where.stdout.strip() == str(site / "conformance" / "embed.py")  # the wheel's copy
    assert _tree_hash(site) == before
