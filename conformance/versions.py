"""Installed versions: the one lookup the header, results and adapters share.

The stack is named by import name (``torchrl``), not by distribution: the module may come from
``torchrl``, ``torchrl-nightly``, ``tensordict-nightly``, or a checkout on ``PYTHONPATH`` that no
distribution provides. Adapters never switch on these strings; they are labels.
"""

from __future__ import annotations

import functools
import importlib.util
import subprocess
from importlib import metadata
from pathlib import Path

NOT_INSTALLED = "not installed"
STACK = ("torch", "torchrl", "tensordict")


def installed_version(dist: str) -> str:
    """The installed version of the distribution ``dist``, or ``"not installed"``."""
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return NOT_INSTALLED


def _origin_dir(module: str) -> Path | None:
    try:
        spec = importlib.util.find_spec(module)
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations))).resolve()


def _checkout_commit(package_dir: Path) -> str | None:
    """``git <sha>`` when ``package_dir`` lies in a git work tree (a checkout on the path)."""
    try:
        out = subprocess.run(
            ["git", "-C", str(package_dir), "rev-parse", "--short=7", "HEAD"],
            capture_output=True, text=True, timeout=10, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    sha = out.stdout.strip()
    return f"git {sha}" if out.returncode == 0 and sha else None


@functools.cache
def module_version(module: str) -> str:
    """The version of whatever provides the importable ``module``.

    The distribution whose files hold the package that ``import module`` would load (so
    ``torchrl-nightly`` counts, and a checkout that shadows an installed wheel does not take
    the wheel's version); else the commit of a git checkout; else ``"not installed"``.
    """
    where = _origin_dir(module)
    if where is None:
        return NOT_INSTALLED
    for dist in metadata.packages_distributions().get(module, []):
        try:
            located = Path(metadata.distribution(dist).locate_file(module)).resolve()
        except metadata.PackageNotFoundError:
            continue
        if located == where:
            return metadata.version(dist)
    return _checkout_commit(where) or NOT_INSTALLED


def stack_versions() -> dict[str, str]:
    return {name: module_version(name) for name in STACK}
