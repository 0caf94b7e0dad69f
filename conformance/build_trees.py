"""``torchrl-conformance --build-trees``: TorchRL's C++ replay trees for the installed torch.

A TorchRL wheel's ``torchrl._torchrl`` loads only next to the torch it was built for; next to
another one, TorchRL's prioritized sampler cannot be built and every prioritized-replay spec is
"cannot be tested here". The wheels ship their C++ sources (``torchrl/csrc``) from 0.10 on, so
the suite can build the trees for the torch installed here, with the same builder as
``nox -s upstream`` (``conformance.upstream.extension``: a C++ compiler is needed, the build is
cached by the sources' digest and the torch version), and load the build as
``torchrl._torchrl`` for this run (an import hook, in this process and, through PYTHONPATH, in
pytest-xdist's workers).
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import importlib.util
import os
import subprocess
import sys
from pathlib import Path


class _Built(importlib.abc.MetaPathFinder):
    """Finds ``torchrl._torchrl`` in the built file."""

    def __init__(self, so: str):
        self.so = so

    def find_spec(self, name, path=None, target=None):
        if name != "torchrl._torchrl":
            return None
        loader = importlib.machinery.ExtensionFileLoader(name, self.so)
        return importlib.util.spec_from_file_location(name, self.so, loader=loader)


OVERLAY = '''"""Written by torchrl-conformance --build-trees: torchrl._torchrl from {so}."""
import importlib.abc
import importlib.machinery
import importlib.util
import os
import sys

# first the sitecustomize this one shadows, if the environment has one; then this finder, first
_here = os.path.dirname(os.path.abspath(__file__))
_next = importlib.machinery.PathFinder.find_spec(
    "sitecustomize", [p for p in sys.path if os.path.abspath(p or ".") != _here])
if _next is not None and _next.loader is not None:
    _next.loader.exec_module(importlib.util.module_from_spec(_next))


class _Built(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name != "torchrl._torchrl":
            return None
        loader = importlib.machinery.ExtensionFileLoader(name, {so!r})
        return importlib.util.spec_from_file_location(name, {so!r}, loader=loader)


sys.meta_path.insert(0, _Built())
'''


def _write_overlay(folder: Path, so: str) -> Path:
    """A folder whose sitecustomize (first on PYTHONPATH) loads ``so`` as torchrl._torchrl in
    every process started from this one, after the environment's own sitecustomize."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "sitecustomize.py").write_text(OVERLAY.format(so=so))
    return folder


def cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "torchrl-conformance"


def build_trees(log=print) -> str | None:
    """Build and load the trees where the shipped ones do not load; the problem as one line,
    or None (loaded, built or nothing to do)."""
    from conformance import paths
    from conformance.upstream import extension

    env = extension._env(sys.executable, os.pathsep.join(
        filter(None, [str(paths.ROOT), os.environ.get("PYTHONPATH")])))
    try:
        probe = extension._run_json(sys.executable, ["probe"], env, timeout=600)
    except RuntimeError as exc:
        return f"--build-trees: cannot inspect the installed torchrl: {exc}"
    if probe.get("package") is None:
        return "--build-trees: torchrl is not installed in this environment"
    # imported as the run will import it (the probe loads the shipped file by its path)
    imported = subprocess.run([sys.executable, "-c", "import torchrl._torchrl"], env=env,
                              capture_output=True, text=True)
    if imported.returncode == 0:
        log(f"--build-trees: torchrl._torchrl loads next to torch {probe['torch']}: nothing to "
            "build")
        return None
    if not probe.get("csrc"):
        return (f"--build-trees: the installed torchrl ({probe['package']}) ships no "
                "torchrl/csrc to build its trees from (wheels ship it from 0.10 on); check it "
                "with nox -s upstream -- VERSION, which takes the sources from TorchRL's git tag")
    what = f"the installed torchrl's csrc ({probe['csrc']})"
    try:
        so, built, _ = extension.build_cached(sys.executable, Path(probe["csrc"]), probe["torch"],
                                              cache_dir(), what, log=log)
    except RuntimeError as exc:
        return f"--build-trees: {exc}"
    overlay = _write_overlay(cache_dir() / "overlay" / "installed", str(so))
    # this process (pytest runs in it): the import hook first on the meta path; its children
    # (pytest-xdist's workers): the overlay's sitecustomize, first on PYTHONPATH
    sys.meta_path.insert(0, _Built(str(so)))
    os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [str(overlay),
                                                             os.environ.get("PYTHONPATH")]))
    log(f"--build-trees: torchrl._torchrl {'built now' if built else 'from the cache'} for "
        f"torch {probe['torch']}: {so}")
    return None
