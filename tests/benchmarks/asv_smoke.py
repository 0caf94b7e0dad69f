"""The asv commands docs/benchmarks.md documents, run for real so they cannot rot (``nox -s bench_smoke``;
not part of ``nox -s tests``: asv builds virtualenvs, minutes on a loaded machine).

- On the project's own configuration: ``asv check`` imports every benchmark module and
  validates the classes in the stack environment.
- On a tiny throw-away project (a git repository with two commits, the second making the
  project's function 20x slower): ``asv run --python=same`` records a result, ``asv publish``
  builds the HTML, and ``asv continuous`` builds both commits and exits 1 on the slowdown (and 0
  between two identical commits), which is what a PR gate relies on.
"""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from conformance.paths import ROOT

ASV = [sys.executable, "-m", "asv"]

CONF = {"version": 1, "project": "tiny", "repo": ".", "branches": ["main"], "dvcs": "git",
        "environment_type": "virtualenv", "pythons": [f"{sys.version_info[0]}.{sys.version_info[1]}"],
        "benchmark_dir": "bench", "env_dir": ".asv/env", "results_dir": "results",
        "html_dir": "html", "matrix": {"req": {"setuptools": [""]}},
        "build_command": ["python -m pip wheel --no-deps --no-build-isolation "
                          "-w {build_cache_dir} {build_dir}"]}
PYPROJECT = """[build-system]
requires = ["setuptools"]
build-backend = "setuptools.build_meta"
[project]
name = "tiny"
version = "0"
[tool.setuptools]
packages = ["tiny"]
"""
WORK = "import time\n\ndef work():\n    time.sleep({})\n"
BENCH = "from tiny import work\n\n\nclass Tiny:\n    def time_work(self):\n        work()\n"


def _git(repo, *args):
    subprocess.run(["git", "-c", "user.email=smoke@example.org", "-c", "user.name=smoke",
                    *args], cwd=repo, check=True, capture_output=True)


def _asv(repo, *args, check=True):
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    proc = subprocess.run([*ASV, *args], cwd=repo, capture_output=True, text=True, env=env)
    if check and proc.returncode:
        pytest.fail(f"asv {' '.join(args)} exited {proc.returncode}:\n{proc.stdout[-3000:]}"
                    f"{proc.stderr[-3000:]}")
    return proc


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    repo = tmp_path_factory.mktemp("tiny")
    (repo / "tiny").mkdir()
    (repo / "bench").mkdir()
    (repo / "bench" / "__init__.py").write_text("")
    (repo / "bench" / "bench_tiny.py").write_text(BENCH)
    (repo / "pyproject.toml").write_text(PYPROJECT)
    (repo / "asv.conf.json").write_text(json.dumps(CONF))
    (repo / "tiny" / "__init__.py").write_text(WORK.format(0.001))
    _git(repo, "init", "-q", "-b", "main")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-qm", "fast")
    _git(repo, "commit", "-q", "--allow-empty", "-m", "same")
    (repo / "tiny" / "__init__.py").write_text(WORK.format(0.02))
    _git(repo, "commit", "-qam", "slow")
    _asv(repo, "machine", "--yes")
    return repo


def test_asv_check_imports_the_projects_benchmarks():
    _asv(ROOT, "check", "--python=same")


def test_asv_run_records_and_publish_builds_html(tiny):
    env = {**os.environ, "ASV_PYTHONPATH": str(tiny)}  # asv drops PYTHONPATH
    proc = subprocess.run([*ASV, "run", "--python=same", "--quick",
                           "--set-commit-hash", _head(tiny)], cwd=tiny, capture_output=True,
                          text=True, env=env)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    assert list((tiny / "results").glob("*/*.json")), "asv run wrote no result"
    _asv(tiny, "publish")
    assert (tiny / "html" / "index.html").is_file()


def test_asv_continuous_gates_on_a_slowdown(tiny):
    same = _asv(tiny, "continuous", "main~2", "main~1", "-f", "1.5", check=False)
    assert same.returncode == 0, same.stdout[-2000:] + same.stderr[-2000:]
    slower = _asv(tiny, "continuous", "main~1", "main", "-f", "1.5", check=False)
    assert slower.returncode == 1, slower.stdout[-2000:] + slower.stderr[-2000:]
    assert "PERFORMANCE DECREASED" in slower.stdout


def _head(repo) -> str:
    return subprocess.run(["git", "rev-parse", "HEAD"], cwd=repo, capture_output=True, text=True,
                          check=True).stdout.strip()
