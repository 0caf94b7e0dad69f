"""One install layer per library, over the shared stack environment, without reinstalling torch.

A layer is a virtual environment without pip of its own whose ``site-packages`` holds a
``_stack.pth`` that adds the stack environment's ``site-packages`` (processed as a site
directory, so its own ``.pth`` files apply). The layer's python therefore sees torch, torchrl,
tensordict and the suite's dependencies, and the library with whatever it needs on top, first
on ``sys.path``. pip (the stack's) installs with a constraints file that pins every package the
stack already has that torch needs, so nothing can replace the stack's torch or numpy; a library
that needs another version of them fails to install, with pip's reason.

Why layers: the libraries' pins conflict with each other (Tianshou needs pandas < 3, which
shadows the stack's pandas in its layer only) and torch is 5.5 GB, so one environment per
library would be both large and slow.
"""

from __future__ import annotations

import json
import site
import subprocess
import sys
import venv
from dataclasses import dataclass
from pathlib import Path

from conformance.libraries.registry import Library
from conformance.versions import NOT_INSTALLED, installed_version

#: packages of the stack environment a layer may never replace
PINNED = ("torch", "torchrl", "tensordict", "numpy")


@dataclass
class Layer:
    library: Library
    path: Path
    problem: str | None = None  # why it could not be built or imported

    @property
    def python(self) -> Path:
        return self.path / "bin" / "python"


def root() -> Path:
    """Where the layers of the current stack live (one folder per stack)."""
    from conformance.paths import WORK
    from conformance.versions import stack_versions

    return WORK / ("_libraries-" + "-".join(f"{k}{v}" for k, v in stack_versions().items()))


def stack_site_packages() -> str:
    return site.getsitepackages()[0]


def constraints() -> list[str]:
    pins = []
    for dist in PINNED:
        version = installed_version(dist)
        if version != NOT_INSTALLED:
            pins.append(f"{dist}=={version}")
    return pins


def _layer_site(path: Path) -> Path:
    return path / "lib" / f"python{sys.version_info.major}.{sys.version_info.minor}" / "site-packages"


def build(library: Library, root: Path, log=print) -> Layer:
    """Create (or reuse) the layer of ``library`` under ``root``; never raises for a library
    that cannot be installed: the returned layer carries the reason instead."""
    path = root / f"{library.name}-{library.version}"
    layer = Layer(library, path)
    stamp = path / "layer-stamp.json"
    wanted = {"requirement": library.requirement, "constraints": constraints(),
              "stack": stack_site_packages()}
    if stamp.is_file() and json.loads(stamp.read_text()) == wanted and layer.python.is_file():
        log(f"reusing the {library.name} layer {path}")
    else:
        log(f"building the {library.name} layer {path} ({library.requirement})")
        venv.EnvBuilder(with_pip=False, clear=True, symlinks=True).create(path)
        (_layer_site(path) / "_stack.pth").write_text(
            f"import site; site.addsitedir({stack_site_packages()!r})\n")
        cons = path / "constraints.txt"
        cons.write_text("\n".join(wanted["constraints"]) + "\n")
        proc = subprocess.run(
            [str(layer.python), "-m", "pip", "install", "--progress-bar", "off",
             "--disable-pip-version-check", "-c", str(cons), library.requirement],
            capture_output=True, text=True)
        (path / "pip.log").write_text(proc.stdout + proc.stderr)
        if proc.returncode != 0:
            lines = [ln for ln in (proc.stderr or proc.stdout).splitlines() if ln.strip()]
            layer.problem = (f"pip install {library.requirement} failed over the stack "
                             f"({lines[-1].strip() if lines else 'no output'}; see {path / 'pip.log'})")
            return layer
        stamp.write_text(json.dumps(wanted))
    module = library.dist.replace("-", "_")
    proc = subprocess.run([str(layer.python), "-c", f"import {module}"], capture_output=True,
                          text=True)
    if proc.returncode != 0:
        last = (proc.stderr.strip().splitlines() or ["no output"])[-1]
        layer.problem = f"import {module} failed in its layer: {last}"
    return layer
