"""A conformance verdict only from a complete run; the suite's own plug-ins always on.

A run is *partial* when the command line narrows what runs or how (``-k``, ``-m``, ``--ignore``,
``--ignore-glob``, ``--deselect``, node ids or paths below ``conformance/``, ``--lf``/``--ff``,
``--sw``, ``-x``/``--maxfail``, ``--co``, ``--setup-only``, ``--setup-plan``, ``--fixtures``,
``--fixtures-per-test``, ``--help``, ``--runxfail``), or when it did not run every collected
test (interrupted, stopped early, deselected by a plug-in). Plain ``pytest conformance`` may
narrow for the inner loop: its results, its reports and its last line say PARTIAL RUN.

A gate asks for a complete run with ``--require-complete``: a partial run then exits with
:data:`PARTIAL_EXIT` (6), never 0, whatever its rows say. ``nox -s upstream`` and ``.ci/gate.sh``
pass it.

The suite's own plug-ins (``conformance-*``: results, expectations, watchdog, isolation, ...)
cannot be switched off with ``-p no:...``: that is a usage error (exit code 4), since without
them a run that tested nothing could exit 0.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from conformance import manifest, paths
from conformance.plugin import keys

PARTIAL_EXIT = 6  #: pytest's exit code for a partial run under --require-complete
OPTION = "--require-complete"
PLUGIN_PREFIX = "conformance"
#: a file to which a partial run under --require-complete appends its reason (one line): how
#: .ci/gate.sh learns it through nox, which reports every failing command as exit code 1
FLAG_ENV = "TORCHRL_CONFORMANCE_PARTIAL_FILE"

# (option dest, how it reads in a reason); each narrows what runs or stops before a verdict
_NARROWING = (
    ("ignore", "--ignore {}"),
    ("ignore_glob", "--ignore-glob {}"),
    ("deselect", "--deselect {}"),
    ("lf", "--lf"),
    ("failedfirst", "--ff"),
    ("stepwise", "--sw"),
    ("stepwise_skip", "--sw-skip"),
    ("collectonly", "--collect-only"),
    ("setuponly", "--setup-only"),
    ("setupplan", "--setup-plan"),
    ("showfixtures", "--fixtures"),
    ("show_fixtures_per_test", "--fixtures-per-test"),
    ("help", "--help"),
    ("runxfail", "--runxfail (known failures are not checked as such)"),
)


def addoption(group) -> None:
    group.addoption(
        OPTION, action="store_true", dest="require_complete",
        help=f"a gate run: a partial run (narrowed, stopped early, interrupted) exits with code "
             f"{PARTIAL_EXIT}, never 0")


def _shown(value) -> str:
    return " ".join(map(str, value)) if isinstance(value, (list, tuple)) else str(value)


def _suite_selected(config) -> bool:
    """Whether the command line collects the whole suite (its folder or the rootdir)."""
    root = config.rootpath.resolve()
    suite = paths.PACKAGE  # the specs that run: a checkout's, or an installed wheel's
    invoked = Path(config.invocation_params.dir)
    for arg in config.args:
        if "::" in arg:
            continue
        if getattr(config.option, "pyargs", False) and arg == suite.name:
            return True  # pytest --pyargs conformance
        if (invoked / arg).resolve() in (suite, root if paths.CHECKOUT else suite):
            return True
    return False


def option_reasons(config) -> list[str]:
    """Why the command line makes this run partial, before anything runs (empty: it does not)."""
    option = config.option
    reasons = []
    if getattr(option, "keyword", ""):
        reasons.append(f"filtered with -k {option.keyword!r}")
    if getattr(option, "markexpr", ""):
        reasons.append(f"filtered with -m {option.markexpr!r}")
    for dest, text in _NARROWING:
        value = getattr(option, dest, None)
        if value:
            reasons.append(text.format(_shown(value)))
    if getattr(option, "maxfail", 0):
        reasons.append(f"may stop early (--maxfail {option.maxfail})")
    if not getattr(option, "help", False) and not _suite_selected(config):
        reasons.append("selected: " + " ".join(config.args))
    return reasons


def check_own_plugins(config, names) -> None:
    """``-p no:conformance-*`` (on the command line, in PYTEST_ADDOPTS or addopts): usage error."""
    blocked = [n for n in names if config.pluginmanager.is_blocked(n)]
    blocked += [v.removeprefix("no:") for v in (getattr(config.option, "plugins", None) or [])
                if v.startswith("no:") and v.removeprefix("no:").startswith(PLUGIN_PREFIX)
                and v.removeprefix("no:") not in blocked]
    if blocked:
        raise pytest.UsageError(
            f"-p no:{blocked[0]}: the suite's own plug-ins cannot be disabled (without them a run "
            "that tested nothing could pass); drop the option")


def _normalized(spec: str) -> str:
    """A spec id as the manifest writes it, whatever folder the suite was collected from
    (``../site-packages/conformance/test_x.py::t`` -> ``conformance/test_x.py::t``)."""
    path, sep, rest = spec.partition("::")
    parts = Path(path).parts
    if len(parts) >= 2 and parts[-2] == "conformance":
        path = f"conformance/{parts[-1]}"
    return f"{path}{sep}{rest}"


def rows_reason(rows, implementations, run_device: str, expected=None) -> str | None:
    """Why ``rows`` are not a complete run, judged from the rows alone (None: they are).

    Complete: every spec id of the committed manifest has a row with an outcome for every
    implementation in ``implementations``, on ``run_device``, and there is no row of another
    implementation, another device or a spec the manifest does not list (a stale manifest is
    no verdict either: regenerate it). Used by the results plug-in, the upstream runner and
    ``bugs --verify``; ``expected`` (spec ids) replaces the manifest in self-tests."""
    try:
        specs = manifest.spec_ids() if expected is None else frozenset(expected)
    except manifest.ManifestError as exc:
        return str(exc)
    implementations = list(dict.fromkeys(implementations))
    if not implementations:
        return "no implementation was selected"
    have: dict[str, set[str]] = {impl: set() for impl in implementations}
    strangers, elsewhere, unknown = set(), set(), set()
    for row in rows:
        if not isinstance(row, dict) or row.get("outcome") is None:
            continue
        impl, nodeid = row.get("implementation"), str(row.get("nodeid", ""))
        if impl not in have:
            strangers.add(str(impl))
            continue
        if row.get("device", run_device) != run_device:
            elsewhere.add(str(row.get("device")))
            continue
        spec = _normalized(manifest.spec_id(nodeid, impl))
        if spec not in specs:
            unknown.add(spec)
            continue
        have[impl].add(spec)
    reasons = []
    for impl in implementations:
        missing = specs - have[impl]
        if missing:
            reasons.append(f"{len(missing)} of {len(specs)} specs have no {impl} row (e.g. "
                           f"{min(missing)})")
    if strangers:
        reasons.append(f"rows of implementation(s) not selected: {', '.join(sorted(strangers))}")
    if elsewhere:
        reasons.append(f"rows of another device than {run_device}: {', '.join(sorted(elsewhere))}")
    if unknown:
        reasons.append(f"{len(unknown)} row(s) of specs not in conformance/manifest.json (e.g. "
                       f"{min(unknown)}; a stale manifest? `python -m conformance.manifest`)")
    return "; ".join(reasons) or None


def required(config) -> bool:
    return bool(getattr(config.option, "require_complete", False))


def partial_reason(config) -> str | None:
    """The reason recorded by the results plug-in at the end of the run, else the options'."""
    recorded = config.stash.get(keys.PARTIAL, None)
    if recorded:
        return recorded
    return "; ".join(option_reasons(config)) or None


def flag(reason: str) -> None:
    """Leave the reason where $TORCHRL_CONFORMANCE_PARTIAL_FILE says (if it says)."""
    target = os.environ.get(FLAG_ENV)
    if target:
        with open(target, "a", encoding="utf-8") as fh:
            fh.write(reason.replace("\n", " ") + "\n")


def gate_exit(config, exitstatus: int) -> int:
    """The exit code of a run: a partial one under --require-complete never exits 0."""
    if not required(config) or int(exitstatus) in (
            pytest.ExitCode.INTERRUPTED, pytest.ExitCode.INTERNAL_ERROR,
            pytest.ExitCode.USAGE_ERROR):
        return exitstatus
    return PARTIAL_EXIT if partial_reason(config) else exitstatus
