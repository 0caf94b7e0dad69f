"""Where a source runs: a base python per torch, and the source's own small folder on PYTHONPATH.

Each source is installed without dependencies (``pip install --no-deps --target``, a few MB)
next to the tensordict its pairing chose and the helpers it needs, and run on a shared base
environment per torch (``.nox/_upstream-base-torch<version>``: torch plus the suite's
dependencies, or a python given with ``--base``). A git commit tries its pairing candidates in
order (``pairing.py``) and keeps the first with which ``import torchrl`` works.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
from pathlib import Path

from conformance import paths
from conformance.upstream import nightly
from conformance.upstream.sources import Source, SourceError
from conformance.upstream.text import last_line, safe

#: sources, wheels and builds; each torch's base environment sits beside it
WORK = paths.WORK / "_upstream"
BASE_REQUIREMENTS = ["numpy", "scipy", "pandas", "hypothesis", "pytest", "pytest-timeout",
                     "cloudpickle", "packaging", "orjson", "importlib_metadata"]


def log(message: str) -> None:
    print(f"[upstream] {message}", flush=True)


def base_python(torch: str, given: dict[str, str]) -> str:
    """A python with torch==<torch> and the suite's dependencies (created once)."""
    if torch in given:
        return given[torch]
    env = WORK.parent / f"_upstream-base-torch{torch}"
    python = env / "bin" / "python"
    stamp = env / "ready"
    if not stamp.is_file():
        log(f"creating base environment {paths.shown(env)} with torch {torch}")
        subprocess.run([sys.executable, "-m", "venv", str(env)], check=True)
        proc = subprocess.run([str(python), "-m", "pip", "install", "-q", "--progress-bar", "off",
                               f"torch=={torch}", *BASE_REQUIREMENTS], capture_output=True, text=True)
        if proc.returncode:
            raise SourceError(f"cannot build a torch {torch} environment: {last_line(proc.stderr)}")
        stamp.write_text(torch)
    return str(python)


def install(source: Source, python: str, work: Path = WORK) -> Path:
    """The folder to put on PYTHONPATH, installed once: torchrl (unless the source is a checkout,
    which brings its own), the tensordict of its minor and the pinned helpers."""
    requirements = [*source.install, source.tensordict, *source.helpers]
    # keyed by content, never by label: a wheel by its bytes' hash (a rebuilt
    # torchrl-0.14.1+x.whl is not the cached 0.14.1), the rest by the exact requirements
    target = work / f"{safe(source.label if source.install else source.version + '-deps')}-" \
        f"{content_key(requirements)}"
    stamp = target / ".installed"
    if stamp.is_file():
        return target
    if not target.resolve().is_relative_to(Path(work).resolve()):  # safe() makes this hold
        raise SourceError(f"{target}: outside the work folder {work}")
    shutil.rmtree(target, ignore_errors=True)
    proc = subprocess.run([python, "-m", "pip", "install", "-q", "--no-deps", "--progress-bar",
                           "off", "--target", str(target), *requirements],
                          capture_output=True, text=True)
    if proc.returncode:
        raise SourceError(f"pip install {' '.join(requirements)} failed: {last_line(proc.stderr)}")
    stamp.write_text(" ".join(requirements))
    return target


def content_key(requirements: list[str]) -> str:
    """A short hash of what is installed: each wheel file by its content, the rest as written."""
    digest = hashlib.sha256()
    for requirement in requirements:
        path = Path(requirement)
        if requirement.endswith(".whl") and path.is_file():
            digest.update(b"wheel:" + hashlib.sha256(path.read_bytes()).hexdigest().encode())
        else:
            digest.update(b"req:" + requirement.encode("utf-8", "surrogatepass"))
        digest.update(b"\0")
    return digest.hexdigest()[:16]


def install_paired(source: Source, python: str, work: Path, log=print
                   ) -> tuple[Path, str, str | None]:
    """Install and import the source: (folder, PYTHONPATH, why it does not import or None).

    A git commit tries the candidates of its rule chain (``pairing.py``) in order and keeps the
    first that imports; ``source.pairing`` says which rules were tried and why each was left."""
    index = nightly.Index(sys.executable)  # asked only by a chain that needs the index
    chain = source.tensordict_candidates(lambda: index.versions(nightly.TENSORDICT))
    tried = []
    for candidate in chain:
        if candidate is not None:
            source.tensordict_pin = candidate.tensordict
            source.pairing = [*tried, f"{candidate.tensordict}: {candidate.why}"]
        target = install(source, python, work)
        path = pythonpath(source, target)
        reason = import_problem(python, path, source.imported_from(target),
                                source.checked_version)
        if not reason or candidate is None:
            return target, path, reason
        tried.append(f"{candidate.tensordict} left: {reason}")
        log(f"    {candidate.tensordict}: {reason}; next rule")
    return target, path, reason


def pythonpath(source: Source, target: Path | None) -> str:
    parts = [str(p) for p in (source.tree, target) if p]
    return os.pathsep.join([*parts, str(paths.ROOT)])


def import_problem(python: str, path: str, expected: Path, version: str | None = None
                   ) -> str | None:
    """Why the source does not import, or None. It must be the source's own torchrl that
    imports, not one the base environment happens to have, and (``version``: a release or a
    wheel) of the version its column is labelled with."""
    # the packages the adapters use, not only the top level: a tensordict that lets `import
    # torchrl` pass can still lack what torchrl.modules needs (list_to_stack, 2025-04)
    # the version: torchrl.__version__, unless the wheel lacks its version.py (0.10.1's does:
    # __version__ falls back to "0.0.0+unknown"); then the installed metadata's, found where
    # the source was installed, decides
    code = ("import torchrl, tensordict, torchrl.data, torchrl.modules, torchrl.objectives; "
            "from importlib import metadata; "
            "v = getattr(torchrl, '__version__', None); "
            "d = None if v and not v.startswith('0.0.0') else next(iter("
            "metadata.distributions(name='torchrl', path=[" + repr(str(expected)) + "])), None); "
            "print(d.version if d is not None else v); print(torchrl.__file__)")
    try:
        proc = subprocess.run([python, "-c", code], capture_output=True, text=True,
                              env={**os.environ, "PYTHONPATH": path}, timeout=300)
    except subprocess.TimeoutExpired:
        return "import torchrl timed out after 300 s"
    if proc.returncode:
        return f"import torchrl failed: {last_line(proc.stderr)}"
    loaded = Path(last_line(proc.stdout)).resolve()
    if not loaded.is_relative_to(expected.resolve()):
        return f"import torchrl loaded {loaded}, not the source under test ({expected})"
    lines = proc.stdout.strip().splitlines()
    imported = lines[-2].strip() if len(lines) >= 2 else "None"
    if version and imported != "None" and imported.split("+")[0] != version:
        return (f"import torchrl gave version {imported[:60]}, not {version}: its column would "
                "be labelled with a version that was not tested")
    return None
