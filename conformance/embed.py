"""The specs inside another project's test run: one test of the host per spec, in a few lines.

The pattern of scikit-learn's ``parametrize_with_checks(..., expected_failed_checks=...)`` and
pandas' ``tests.extension.base``: a test module of TorchRL (or of any implementation) writes::

    from pathlib import Path
    from conformance.embed import specs

    test_conformance = specs("torchrl", expectations=Path(__file__).with_name("conformance.txt"))

and its own pytest run (``pytest test/``, ``-k``, ``--lf``, JUnit XML, pytest-xdist) holds one
test per spec id of the committed manifest (``conformance/manifest.json``), each passing,
failing, or known to fail (xfailed) as the suite decided it. The host's id of a spec is the
manifest's id with the package folder, ``.py`` and ``::`` turned into a dotted name
(:func:`host_id`): ``conformance/test_x.py::test_y[a=1]`` is ``test_conformance[test_x.test_y[a=1]]``,
so a command line can select it by node id. The expectations file is the suite's own format
(docs/expectations.md), keyed by the suite's test ids (``conformance/test_x.py::test_y``), so
one file serves this, ``torchrl-conformance`` and the reusable workflow alike.

Why a child process: the specs run in their own ``pytest`` (the suite's plug-in, its
watchdog, state isolation, hypothesis profile and expectations), started once per host run
for the specs the host selected. The host's conftest files, autouse fixtures, ini options and
plug-ins never reach the specs, and the suite's machinery never reaches the host's own tests;
the host sees each spec's outcome and message. The child's results and report are kept under
the host's temporary folder (the failure message names it).
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from conformance import manifest, outcomes, paths
from conformance.implementations import _id_for
from conformance.reporting.results_file import upgrade

#: the outcomes that are expected and not a pass, shown as skips by the host
_SKIPS = (outcomes.NOT_APPLICABLE, outcomes.UNTESTABLE, outcomes.SKIPPED)
#: how many characters of the child's output a failure message quotes
_TAIL = 1500


def host_id(spec: str) -> str:
    """The host's parameter id of a manifest spec id: ``conformance/test_x.py::test_y[a=1]``
    -> ``test_x.test_y[a=1]`` (no ``::``, which a node id on the command line would split)."""
    path, _, name = spec.partition("::")
    return f"{Path(path).stem}.{name}"


def spec_of(host: str) -> str:
    """The manifest spec id of a host parameter id (the inverse of :func:`host_id`)."""
    module, _, name = host.partition(".")
    return f"{paths.PACKAGE.name}/{module}.py::{name}"


@dataclass(frozen=True)
class Embedding:
    """What one ``specs(...)`` call asked for: the child run's arguments."""

    impl: str
    expectations: str | None
    device: str | None
    pytest_args: tuple[str, ...]

    def key(self, selected: Iterable[str]) -> str:
        text = json.dumps([self.impl, self.expectations, self.device, list(self.pytest_args),
                           sorted(selected), str(paths.PACKAGE)])
        return hashlib.sha256(text.encode()).hexdigest()[:16]


@dataclass(frozen=True)
class Spec:
    """One spec id of the manifest, as the host's parameter (its id is :func:`host_id`)."""

    id: str
    embedding: Embedding = field(repr=False)


@dataclass
class ChildRun:
    """The child ``pytest``'s outcome: its rows by spec id, and why a spec may have none."""

    folder: Path
    returncode: int
    rows: dict[str, dict]
    output: str
    partial: str | None = None
    #: the child ran the whole suite (the host selected every spec): a partial run is then no
    #: verdict for any spec (a thread that changed global state, a spec that did not run)
    whole: bool = False

    def why_missing(self) -> str:
        if self.rows:
            return f"the suite's run has no row for it ({self.partial or 'complete run'})"
        start = self.output.find("ERROR")  # pytest's usage error: the rest is its text
        tail = (self.output[start:start + _TAIL] if start >= 0 else self.output[-_TAIL:]).strip()
        return f"the suite's run ended with exit code {self.returncode} and no results:\n{tail}"

    def check(self, spec: Spec) -> None:
        """Pass, xfail, skip or fail this host test as the suite's row for ``spec`` says."""
        row = self.rows.get(spec.id)
        where = f"(the suite's results and report: {self.folder})"
        if self.whole and self.partial:
            pytest.fail(f"{spec.id}: the suite's run is not complete, so no spec has a verdict: "
                        f"{self.partial}\n{where}", pytrace=False)
        if row is None:
            pytest.fail(f"{spec.id}: {self.why_missing()}\n{where}", pytrace=False)
        outcome, message = row["outcome"], row.get("message", "")
        if not row["expected"]:
            pytest.fail(f"{row['nodeid']}: {outcome.upper()}\n{message}\n{where}", pytrace=False)
        if outcome == outcomes.KNOWN_FAILURE:
            # one short line: the host's -ra prints it per spec (the whole message is the suite's
            # report's, under the folder the verdict block names)
            name = row.get("defect") or row.get("reason") or message
            pytest.xfail(_short(f"known failure: {name}"))
        if outcome in _SKIPS:
            pytest.skip(_short(message or outcome))  # the message starts with what it stands for
        if outcome != outcomes.PASS:  # an expected row of an outcome this module does not know
            pytest.fail(f"{row['nodeid']}: outcome {outcome!r} {where}", pytrace=False)


def _short(text: str, width: int = 100) -> str:
    """The first line of ``text``, cut to ``width`` characters."""
    line = (text or "").strip().splitlines()[0] if (text or "").strip() else ""
    return line if len(line) <= width else line[:width - 1] + "…"


def spec_ids(areas: Iterable[str] | None = None) -> list[str]:
    """The manifest's spec ids, for the given areas (default: all), in the manifest's order."""
    by_area = json.loads(manifest.PATH.read_text())["areas"]
    wanted = list(by_area) if areas is None else list(areas)
    unknown = [a for a in wanted if a not in by_area]
    if unknown:
        raise ValueError(f"unknown area(s) {', '.join(unknown)}; choose {', '.join(by_area)}")
    return [spec for area in wanted for spec in by_area[area]]


def specs(impl: str = "torchrl", *, expectations: str | os.PathLike | None = None,
          areas: Iterable[str] | None = None, device: str | None = None,
          pytest_args: Iterable[str] = ()):
    """A test function for the host module: one test per spec id of ``areas``.

    ``impl``: ``torchrl``, ``reference`` or ``pkg.module:IMPL`` (as ``--impl``).
    ``expectations``: the host's known failures (a file in the suite's format; the suite's test
    ids are its keys), ``"none"`` for none; default: the file shipped for the installed version,
    as ``torchrl-conformance`` chooses it. ``device``: as ``--device``. ``pytest_args``: more
    arguments of the suite's run, from the allow-list of ``conformance.upstream.passthrough``
    (``--spec-timeout 600``, ``-v``); anything else (``--impl``, ``--reruns``) is a ValueError.
    """
    pytest_args = checked_args(pytest_args)
    if expectations is not None and str(expectations) != "none":
        expectations = Path(expectations).resolve()
        if not expectations.is_file():
            raise FileNotFoundError(f"conformance expectations {expectations}: no such file")
    embedding = Embedding(impl, None if expectations is None else str(expectations), device,
                          tuple(pytest_args))
    ids = spec_ids(areas)

    @pytest.mark.parametrize("spec", [Spec(i, embedding) for i in ids], ids=[host_id(i) for i in ids])
    def test_conformance(spec: Spec, request) -> None:
        run_for(request, spec.embedding).check(spec)

    test_conformance.__doc__ = f"A conformance spec of torchrl-conformance on --impl {impl}."
    return test_conformance


def checked_args(pytest_args: Iterable[str]) -> tuple[str, ...]:
    """The child's extra arguments, refused in one line unless on the pass-through allow-list:
    the embed's own ``impl`` is what is judged (``pytest_args=["--impl", "reference"]`` passed
    495 host tests from the reference, as TorchRL)."""
    from conformance.upstream import passthrough

    if isinstance(pytest_args, (str, bytes)):
        raise ValueError("conformance.embed.specs: pytest_args is a list of arguments, not one "
                         f"string ({pytest_args!r})")
    args = tuple(str(a) for a in pytest_args)
    try:
        passthrough.check(list(args), paths.PACKAGE.parent, "conformance.embed.specs: pytest_args")
    except passthrough.PassThroughError as exc:
        raise ValueError(str(exc)) from None
    return args


# ---------------------------------------------------------------------- the child run

_RUNS: dict[str, ChildRun] = {}


def _selected(request, embedding: Embedding) -> list[str]:
    """The spec ids of this embedding that the host's run selected (after -k, node ids, --lf)."""
    found = []
    for item in request.session.items:
        spec = getattr(getattr(item, "callspec", None), "params", {}).get("spec")
        if isinstance(spec, Spec) and spec.embedding == embedding:
            found.append(spec.id)
    return list(dict.fromkeys(found))  # two host modules may embed the same specs alike


def _child_nodeid(spec: str, impl_id: str) -> str:
    """The suite's test id of ``spec`` for ``impl_id`` (``manifest.spec_id``'s inverse)."""
    head, bracket, params = spec.partition("[")
    inside = impl_id if not bracket else f"{impl_id}-{params.removesuffix(']')}"
    return f"{head}[{inside}]"


def targets(embedding: Embedding, selected: list[str]) -> list[str]:
    """The child's positional arguments: the whole package when every spec of the manifest is
    selected (a complete run), else each selected test by its id."""
    if set(selected) >= set(spec_ids()):
        return ["--pyargs", paths.PACKAGE.name]
    impl_id = _id_for(embedding.impl)
    return [str(paths.PACKAGE.parent / _child_nodeid(s, impl_id)) for s in selected]


def command(embedding: Embedding, selected: list[str], folder: Path) -> list[str]:
    """The suite's own pytest run, isolated from the host's configuration (an empty ini file
    and rootdir of its own, the plug-in loaded by name)."""
    args = [sys.executable, "-m", "pytest", "-p", "conformance.pytest_plugin",
            "-p", "no:cacheprovider", "-c", str(folder / "pytest.ini"), "--rootdir", str(folder),
            "-q", "--impl", embedding.impl, "--results", str(folder / "results.json")]
    if embedding.expectations is not None:
        args += ["--expectations", embedding.expectations]
    if embedding.device is not None:
        args += ["--device", embedding.device]
    return [*args, *embedding.pytest_args, *targets(embedding, selected)]


def _environment() -> dict[str, str]:
    # the host's pytest settings (PYTEST_ADDOPTS, xdist's worker variables) are not the suite's
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")}
    if paths.CHECKOUT:  # the suite imported here is a checkout: the child imports the same
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(paths.ROOT), env.get("PYTHONPATH")]))
    return env


def _execute(embedding: Embedding, selected: list[str], folder: Path) -> ChildRun:
    done = folder / "done.json"
    if not done.is_file():
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "pytest.ini").write_text("[pytest]\n")
        proc = subprocess.run(command(embedding, selected, folder), cwd=folder, env=_environment(),
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        (folder / "output.txt").write_text(proc.stdout)
        done.write_text(json.dumps({"returncode": proc.returncode}))
    returncode = json.loads(done.read_text())["returncode"]
    output = (folder / "output.txt").read_text()
    results = folder / "results.json"
    rows, partial = {}, None
    if results.is_file():
        document = upgrade(json.loads(results.read_text()))  # one shape, whatever the schema
        partial = document.get("partial")
        for row in document["rows"]:
            rows[manifest.spec_id(row["nodeid"], row["implementation"])] = row
    whole = targets(embedding, selected)[:1] == ["--pyargs"]
    return ChildRun(folder, returncode, rows, output, partial, whole)


def run_for(request, embedding: Embedding) -> ChildRun:
    """The child run of this embedding and the host's selection: started by the first spec
    test that needs it, shared by the others (and by pytest-xdist's workers, through a locked
    folder of the run's shared temporary directory)."""
    selected = _selected(request, embedding)
    key = embedding.key(selected)
    if key in _RUNS:
        return _RUNS[key]
    base = request.getfixturevalue("tmp_path_factory").getbasetemp()
    worker = os.environ.get("PYTEST_XDIST_WORKER")
    folder = (base.parent if worker else base) / f"conformance-{key}"
    try:
        import fcntl  # pytest-xdist on a POSIX system: one worker runs, the others wait
    except ImportError:  # elsewhere (Windows) each worker runs its own child, in its own folder
        fcntl, worker = None, None
        folder = base / f"conformance-{key}"
    if worker:
        folder.parent.mkdir(parents=True, exist_ok=True)
        with open(folder.parent / f"conformance-{key}.lock", "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            run = _execute(embedding, selected, folder)
    else:
        run = _execute(embedding, selected, folder)
    _RUNS[key] = run
    config = request.config
    if not worker and not config.pluginmanager.has_plugin(_VERDICT):  # the host's terminal
        config.pluginmanager.register(VerdictPrinter(), _VERDICT)
    return run


_VERDICT = "conformance-embed-verdict"


class VerdictPrinter:
    """The suite's verdict block at the end of the host's run (registered by the first spec
    test): one per child run, read from the results it wrote."""

    # outermost: after the host's own summary (its -ra list included), last before the counts
    @pytest.hookimpl(wrapper=True, tryfirst=True)
    def pytest_terminal_summary(self, terminalreporter):
        result = yield
        self.print_blocks(terminalreporter)
        return result

    def print_blocks(self, terminalreporter):
        from conformance.reporting.verdict import block

        for run in _RUNS.values():
            results = run.folder / "results.json"
            if not results.is_file():
                continue
            document = json.loads(results.read_text())
            terminalreporter.write_sep("=", f"conformance verdict ({run.folder})", bold=True)
            for line in block([document], where=str(run.folder / "conformance.md")):
                terminalreporter.write_line(line)
