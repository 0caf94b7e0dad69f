"""TorchRL's C++ prioritized-replay trees (``torchrl._torchrl``) for ``nox -s upstream``.

A shipped extension loads only next to the torch it was built for: 0.6.0 ... 0.13.3 and 0.4.0
do not load next to their base torch, and a checkout or a git ref has none at all. For such a
source the runner calls :func:`prepare`, which

1. looks for the source's own C++ sources: ``torchrl/csrc`` of the installed tree (the wheels
   ship it from 0.10 on, checkouts and git refs have it), else the tag ``v<version>`` of a
   TorchRL git repository (``--torchrl-git`` / ``$TORCHRL_CONFORMANCE_GIT``: a clone or a URL);
2. builds them with ``torch.utils.cpp_extension`` (``CppExtension`` + ``BuildExtension``, the
   way TorchRL's setup.py does, CPU code only) in the source's base python, against its torch;
3. caches the build under ``.nox/_upstream/ext/<sources digest>-torch<version>-<python>``, so a
   source whose sources did not change is never built twice for one torch;
4. writes a ``sitecustomize.py`` overlay (put first on PYTHONPATH) whose import hook loads the
   built module as ``torchrl._torchrl`` in place of the shipped one.

Whatever stops it (no sources, no git repository, no compiler, a failed build) is returned as
the reason why the prioritized-replay specs "cannot be tested here", with the option that fixes
it. Run as a script in the base python: ``python -m conformance.upstream.extension build CSRC
OUT`` (the build) or ``... probe`` (where the installed torchrl is and whether its shipped
extension loads), printing one JSON object.

The same builder makes TorchRL's CUDA trees (``cuda_segment_tree.cu``, pytorch/rl#3677) for a
``--device cuda`` run where the installed wheel lacks them (the PyPI wheels do):
``python -m conformance.upstream.extension cuda-overlay WORK`` builds ``csrc`` of the installed
torchrl with nvcc (``CUDAExtension``, ``-DWITH_CUDA``, as TorchRL's setup.py does; no GPU is
needed to compile), caches it like the CPU build, and prints the overlay folder to put first
on PYTHONPATH.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import signal
import subprocess
import sys
import tarfile
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from conformance import paths

ROOT = paths.ROOT
GIT_ENV = "TORCHRL_CONFORMANCE_GIT"
GIT_OPTION = "--torchrl-git"
GIT_FIX = (f"give a TorchRL git repository (a clone of pytorch/rl or its URL) with {GIT_OPTION} "
           f"PATH_OR_URL or ${GIT_ENV}")
COMPILER_FIX = "install a C++ compiler (e.g. apt-get install g++) or name one with $CXX"
SOURCE_SUFFIXES = {".cpp", ".cc", ".h", ".hpp"}  # what the CPU build reads (.cu is CUDA-only)
CUDA_SUFFIXES = SOURCE_SUFFIXES | {".cu", ".cuh"}  # what the CUDA build reads
CUDA_TREES = "CudaSumSegmentTreeFp32"  # what a CUDA build of torchrl._torchrl holds
NVCC_FIX = ("install the CUDA toolkit of torch's CUDA version (nvcc) and point $CUDA_HOME at it")
MODULE = "torchrl._torchrl"
TIMEOUT_ENV = "TORCHRL_CONFORMANCE_BUILD_TIMEOUT"


def base_extras(torch: str) -> list[str]:
    """What a base environment needs besides torch and the suite's dependencies: the build tools
    (setuptools for ``BuildExtension``; ninja compiles the sources in parallel) and, for torch
    before 2.5, numpy < 2 (those torch builds predate numpy 2)."""
    extras = ["setuptools", "ninja"]
    if tuple(int(p) for p in torch.split(".")[:2]) < (2, 5):
        extras.append("numpy<2")
    return extras


@dataclass
class Trees:
    """Where a source's C++ trees come from, for the runner and the report."""

    origin: str  # one line for the report: "shipped ...", "built from ...", or "none: <why>"
    problem: str | None = None  # "cannot be tested here" reason of the replay specs, fix included
    overlay: Path | None = None  # folder to put first on PYTHONPATH
    seconds: float = 0.0  # time spent looking, fetching and building
    built: bool = False  # compiled in this run (not taken from the cache)

    def pythonpath(self, path: str) -> str:
        return os.pathsep.join([str(self.overlay), path]) if self.overlay else path


# --------------------------------------------------------------------------- in the base python
def _probe() -> dict:
    """Where torchrl is (without importing it) and whether its shipped extension loads here."""
    import importlib.util

    import torch

    spec = importlib.util.find_spec("torchrl")
    if spec is None or not spec.submodule_search_locations:
        return {"torch": torch.__version__, "package": None}
    package = Path(list(spec.submodule_search_locations)[0])
    csrc = package / "csrc"
    shipped = sorted(str(p) for p in package.glob("_torchrl*.so"))
    out = {"torch": torch.__version__, "package": str(package), "shipped": shipped,
           "csrc": str(csrc) if any(csrc.glob("*.cpp")) else None, "loads": False, "error": None}
    if shipped:
        out["error"] = _load_problem(shipped[-1])
        out["loads"] = out["error"] is None
    return out


def _load_problem(so: str, also: str | None = None) -> str | None:
    """Why the extension file ``so`` cannot serve as torchrl._torchrl here (with the class
    ``also``, if given), or None."""
    import importlib.util

    import torch  # noqa: F401 - the extension needs torch's libraries loaded first

    try:
        spec = importlib.util.spec_from_file_location(MODULE, so)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    except Exception as exc:  # noqa: BLE001 - any failure means "does not load"
        return f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"[:300]
    for name in ("SumSegmentTreeFp32", also):
        if name and not hasattr(module, name):
            return f"it has no {name}"
    return None


def _nvidia_includes() -> list[str]:
    """The headers of the CUDA libraries that torch's pip wheels install (``nvidia/*/include``:
    cuSPARSE, cuBLAS, ...): torch's CUDA headers include them, a bare CUDA toolkit may lack them."""
    try:
        import nvidia
    except ImportError:
        return []
    return sorted(str(p) for base in nvidia.__path__ for p in Path(base).glob("*/include")
                  if p.is_dir())


def _build(csrc: str, out: str, cuda: bool = False) -> dict:
    """Build every C++ source of ``csrc`` (and with ``cuda`` its CUDA sources, with nvcc) into
    ``out/_torchrl*.so`` against this torch."""
    from setuptools import setup
    from torch.utils.cpp_extension import BuildExtension, CppExtension, CUDAExtension

    csrc_path = Path(csrc).resolve()
    sources = sorted(str(p) for p in csrc_path.glob("*.cpp"))
    if not sources:
        raise SystemExit(f"no C++ sources (*.cpp) in {csrc}")
    flags = {"cxx": ["-O3", "-g0"]}
    kind = CppExtension
    if cuda:
        cu = sorted(str(p) for p in csrc_path.glob("*.cu"))
        if not cu:
            raise SystemExit(f"no CUDA sources (*.cu) in {csrc}: this TorchRL has no CUDA trees")
        sources += cu
        flags = {"cxx": ["-O3", "-g0", "-DWITH_CUDA"], "nvcc": ["-O3", "-DWITH_CUDA"]}
        kind = CUDAExtension
    includes = [str(csrc_path), *(_nvidia_includes() if cuda else [])]
    extension = kind("_torchrl", sources, include_dirs=includes, extra_compile_args=flags)
    # -g0: Python's own CFLAGS ask for debug info (-g), which made a 22 MB module instead of 0.5 MB
    out = str(Path(out).resolve())
    started, here = time.time(), os.getcwd()
    with tempfile.TemporaryDirectory() as temp:
        os.chdir(temp)  # setuptools would read a pyproject.toml / setup.cfg of the working folder
        try:
            setup(name="torchrl-conformance-extension", ext_modules=[extension],
                  cmdclass={"build_ext": BuildExtension},
                  script_args=["-q", "build_ext", "--build-lib", out, "--build-temp", temp])
        finally:
            os.chdir(here)
    built = sorted(Path(out).glob("_torchrl*.so"))
    if not built:
        raise SystemExit(f"the build left no _torchrl*.so in {out}")
    problem = _load_problem(str(built[-1]), CUDA_TREES if cuda else None)
    if problem:
        raise SystemExit(f"the built extension does not load: {problem}")
    return {"so": str(built[-1]), "seconds": round(time.time() - started, 1)}


# ------------------------------------------------------------------------- in the runner process
def _last_line(text: str) -> str:
    """The line that says what went wrong: a compiler's first ``error:``, else the last line."""
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    errors = [line for line in lines if "error:" in line and not line.startswith("error: command")]
    return ((errors[0] if errors else lines[-1]) if lines else "no output")[:300]


def _run_json(python: str, args: list[str], env: dict, timeout: float) -> dict:
    # its own process group: on a timeout the compilers it started are stopped with it
    proc = subprocess.Popen([python, "-m", "conformance.upstream.extension", *args],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
                            cwd=ROOT, start_new_session=True)
    try:
        stdout, stderr = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        _end_group(proc)
        raise RuntimeError(f"{args[0]} timed out after {timeout:.0f} s (a busy machine? raise "
                           f"${TIMEOUT_ENV})") from None
    except BaseException:
        # Ctrl-C (or any exit) of this process: the build runs in a session of its own, which
        # the terminal's SIGINT does not reach; left alone it would go on compiling, orphaned,
        # racing the next run in the same cache folder
        _end_group(proc)
        raise
    if proc.returncode:
        raise RuntimeError(_last_line(stdout + "\n" + stderr))
    return json.loads(stdout.strip().splitlines()[-1])


def _end_group(proc: subprocess.Popen) -> None:
    """Stop ``proc`` and every process of its group (the compilers it started)."""
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    proc.communicate()


def build_timeout() -> float:
    """Seconds a build may take: 30-50 s on 2 idle cores; 30 min unless $TIMEOUT_ENV says
    (a finite positive number: nan or inf would be no limit)."""
    try:
        value = float(os.environ.get(TIMEOUT_ENV, "1800"))
    except ValueError:
        return 1800.0
    return value if 0 < value < 1e7 else 1800.0


def _env(python: str, path: str) -> dict:
    env = {**os.environ, "PYTHONPATH": path, "PYTHONNOUSERSITE": "1"}
    # the base environment's own tools (ninja) come first, as if it were activated
    env["PATH"] = os.pathsep.join([str(Path(python).parent), env.get("PATH", "")])
    env.setdefault("MAX_JOBS", str(os.cpu_count() or 2))
    return env


def compiler_problem() -> str | None:
    """Why no C++ compiler can be run here, with the fix, or None."""
    compiler = os.environ.get("CXX") or "c++"
    name = compiler.split()[0] if compiler.split() else compiler
    if shutil.which(name):
        return None
    where = "$CXX names" if os.environ.get("CXX") else "the default compiler"
    return f"no C++ compiler: {where} {name!r}, which is not on PATH — {COMPILER_FIX}"


def nvcc_problem() -> str | None:
    """Why no CUDA compiler can be run here, with the fix, or None."""
    home = os.environ.get("CUDA_HOME") or os.environ.get("CUDA_PATH")
    nvcc = Path(home) / "bin" / "nvcc" if home else shutil.which("nvcc")
    if nvcc and Path(nvcc).is_file():
        return None
    where = f"$CUDA_HOME ({home}) has no bin/nvcc" if home else "no nvcc on PATH"
    return f"no CUDA compiler: {where} — {NVCC_FIX}"


def sources_digest(csrc: Path, cuda: bool = False) -> str:
    """sha256 over the names and contents of the files the (CPU or CUDA) build reads."""
    suffixes = CUDA_SUFFIXES if cuda else SOURCE_SUFFIXES
    digest = hashlib.sha256()
    for path in sorted(p for p in csrc.rglob("*") if p.is_file() and p.suffix in suffixes):
        digest.update(path.relative_to(csrc).as_posix().encode() + b"\0")
        digest.update(path.read_bytes() + b"\0")
    return digest.hexdigest()


def git_csrc(repo: str, version: str, work: Path) -> Path:
    """``torchrl/csrc`` of tag ``v<version>`` of a TorchRL git repository, extracted once."""
    tag = f"v{version}"
    target = work / "csrc" / tag
    if (target / ".complete").is_file():
        return target
    shutil.rmtree(target, ignore_errors=True)
    target.mkdir(parents=True)
    with tempfile.TemporaryDirectory() as temp:
        if Path(repo).exists():
            git_dir = repo
        else:  # a URL: a shallow clone of the tag only
            git_dir = os.path.join(temp, "rl")
            clone = subprocess.run(["git", "clone", "--quiet", "--depth", "1", "--branch", tag,
                                    "--no-checkout", repo, git_dir], capture_output=True, text=True)
            if clone.returncode:
                shutil.rmtree(target, ignore_errors=True)
                raise RuntimeError(f"git clone --branch {tag} {repo}: {_last_line(clone.stderr)}")
        archive = os.path.join(temp, "csrc.tar")
        proc = subprocess.run(["git", "-C", git_dir, "archive", "--format=tar", "-o", archive,
                               f"{tag}:torchrl/csrc"], capture_output=True, text=True)
        if proc.returncode:
            shutil.rmtree(target, ignore_errors=True)
            raise RuntimeError(f"{repo} has no torchrl/csrc at tag {tag}: {_last_line(proc.stderr)}")
        with tarfile.open(archive) as tar:
            if hasattr(tarfile, "data_filter"):  # Python >= 3.10.12: no links out of target
                tar.extractall(target, filter="data")
            else:  # pragma: no cover
                tar.extractall(target)
    (target / ".complete").write_text(f"{repo} {tag}\n")
    return target


SITECUSTOMIZE = '''"""Written by conformance.upstream.extension: load {module} from {so}."""
import importlib.abc
import importlib.machinery
import importlib.util
import os
import sys

_SO = {so!r}


class _TorchRLExtension(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name != {module!r}:
            return None
        loader = importlib.machinery.ExtensionFileLoader(name, _SO)
        return importlib.util.spec_from_file_location(name, _SO, loader=loader)


sys.meta_path.insert(0, _TorchRLExtension())

# then the sitecustomize this one shadows, if the environment has one
_here = os.path.dirname(os.path.abspath(__file__))
_next = importlib.machinery.PathFinder.find_spec(
    "sitecustomize", [p for p in sys.path if os.path.abspath(p or ".") != _here])
if _next is not None and _next.loader is not None:
    _module = importlib.util.module_from_spec(_next)
    _next.loader.exec_module(_module)
'''


def write_overlay(folder: Path, so: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "sitecustomize.py").write_text(SITECUSTOMIZE.format(module=MODULE, so=str(so)))
    return folder


def build_cached(python: str, csrc: Path, torch: str, work: Path, what: str,
                 log=print, cuda: bool = False) -> tuple[Path, bool, str]:
    """(the built extension, built now?, digest): from the cache when the sources digest and the
    torch version match an earlier build, else compiled now (RuntimeError when it fails);
    ``cuda``: with TorchRL's CUDA trees, compiled by nvcc."""
    digest = sources_digest(csrc, cuda)
    tag = f"cp{sys.version_info[0]}{sys.version_info[1]}"
    proc = subprocess.run([python, "-c", "import sys; print(sys.implementation.cache_tag)"],
                          capture_output=True, text=True)
    if proc.returncode == 0 and proc.stdout.strip():
        tag = proc.stdout.strip()
    safe_torch = torch.replace("+", "_")
    cache = work / "ext" / f"{digest[:16]}-torch{safe_torch}-{tag}{'-cuda' if cuda else ''}"
    stamp = cache / "build.json"
    if stamp.is_file():
        so = Path(json.loads(stamp.read_text())["so"])
        if so.is_file():
            return so, False, digest
    problem = compiler_problem() or (nvcc_problem() if cuda else None)
    if problem:
        raise RuntimeError(problem)
    shutil.rmtree(cache, ignore_errors=True)
    cache.mkdir(parents=True)
    log(f"    building torchrl._torchrl{' with CUDA' if cuda else ''} from {what} against torch {torch} (sha256 "
        f"{digest[:12]}, cached in {cache.relative_to(work.parent) if work.parent in cache.parents else cache})")
    started = time.time()
    try:
        result = _run_json(python, ["build", str(csrc), str(cache), *(["--cuda"] if cuda else [])],
                           _env(python, str(ROOT)), timeout=build_timeout())
    except RuntimeError as exc:
        shutil.rmtree(cache, ignore_errors=True)
        raise RuntimeError(f"building torchrl._torchrl from {what} against torch {torch} "
                           f"failed: {exc}") from None
    stamp.write_text(json.dumps({"so": result["so"], "digest": digest, "torch": torch,
                                 "sources": what, "seconds": round(time.time() - started, 1)}))
    return Path(result["so"]), True, digest


def prepare(source, python: str, path: str, work: Path, git_repo: str | None,
            log=print) -> Trees:
    """The C++ trees of ``source`` (installed and importable on ``path``) next to ``python``."""
    started = time.time()

    def done(**kwargs) -> Trees:
        return Trees(seconds=time.time() - started, **kwargs)

    try:
        probe = _run_json(python, ["probe"], _env(python, path), timeout=600)
    except RuntimeError as exc:
        return done(origin="none", problem=f"cannot inspect the installed torchrl: {exc}")
    torch = probe["torch"]
    if probe.get("package") is None:
        return done(origin="none", problem="torchrl is not on the path")
    if probe["loads"]:
        return done(origin=f"shipped ({Path(probe['shipped'][-1]).name}, loads next to torch {torch})")
    why = (f"its shipped {Path(probe['shipped'][-1]).name} does not load next to torch {torch} "
           f"({probe['error']})" if probe["shipped"] else "it has no compiled torchrl._torchrl")
    if probe["csrc"]:
        csrc = Path(probe["csrc"])
        what = source.shipped_csrc()
    elif source.csrc_from_tag:
        if not git_repo:
            problem = (f"torchrl {source.version}: {why}, its wheel ships no torchrl/csrc to build "
                       f"one from, and no TorchRL git repository was given — {GIT_FIX}")
            return done(origin="none (no sources)", problem=problem)
        try:
            csrc = git_csrc(git_repo, source.version, work)
        except RuntimeError as exc:
            return done(origin="none (no sources)",
                        problem=f"torchrl {source.version}: {why}, and {exc} — {GIT_FIX}")
        what = f"torchrl/csrc at tag v{source.version} of {git_repo}"
    else:
        return done(origin="none (no sources)",
                    problem=f"{why}, and the source has no torchrl/csrc to build one from")
    log(f"    torchrl._torchrl: {why}; using {what}")
    try:
        so, built, digest = build_cached(python, csrc, torch, work, what, log)
    except RuntimeError as exc:
        return done(origin="none (build failed)", problem=str(exc))
    overlay = write_overlay(work / "overlay" / getattr(source, "label", "source"), so)
    cached = "built now" if built else "from the cache"
    origin = f"built from {what} (sources sha256 {digest[:12]}, torch {torch}, {cached})"
    log(f"    torchrl._torchrl {cached}: {so}")
    return done(origin=origin, overlay=overlay, built=built)


def cuda_overlay(work: Path, log=print) -> Path:
    """The overlay folder whose ``sitecustomize`` loads a CUDA build of the installed torchrl's
    ``torchrl/csrc`` as ``torchrl._torchrl`` (RuntimeError with the reason when it cannot)."""
    python = sys.executable
    probe = _probe()
    if probe.get("package") is None:
        raise RuntimeError("torchrl is not installed next to this python")
    if not probe.get("csrc"):
        raise RuntimeError(f"the installed torchrl ({probe['package']}) ships no torchrl/csrc to "
                           "build its CUDA trees from")
    csrc = Path(probe["csrc"])
    so, built, _ = build_cached(python, csrc, probe["torch"], work,
                                f"the installed torchrl's csrc ({csrc})", log=log, cuda=True)
    log(f"torchrl._torchrl with CUDA trees {'built now' if built else 'from the cache'}: {so}")
    return write_overlay(work / "overlay" / "cuda", so)


USAGE = ("usage: python -m conformance.upstream.extension probe | build CSRC OUT [--cuda] | "
         "cuda-overlay WORK")


def main(argv=None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["probe"]:
        print(json.dumps(_probe()))
    elif argv[:1] == ["build"] and len(argv) in (3, 4) and argv[3:] in ([], ["--cuda"]):
        stdout, sys.stdout = sys.stdout, sys.stderr  # setuptools' chatter is not our JSON
        try:
            result = _build(argv[1], argv[2], cuda=argv[3:] == ["--cuda"])
        finally:
            sys.stdout = stdout
        print(json.dumps(result))
    elif argv[:1] == ["cuda-overlay"] and len(argv) == 2:
        try:  # the overlay folder alone on stdout: PYTHONPATH=$(python -m ... cuda-overlay W)
            print(cuda_overlay(Path(argv[1]).resolve(), log=lambda m: print(m, file=sys.stderr)))
        except RuntimeError as exc:
            print(f"cuda-overlay: {exc}", file=sys.stderr)
            return 1
    else:
        print(USAGE, file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
