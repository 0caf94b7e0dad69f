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

from conformance import paths
from conformance.admission import rows_reason  # noqa: F401 - re-exported
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


# rows_reason (and the spec-id normalization it uses) live in conformance.admission, a base
# module the history and the verdict parents can import; named here for the plug-in's callers


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
