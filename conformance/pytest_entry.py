"""The ``pytest11`` entry point: wakes the suite's plug-in only in a run that collects specs.

Installing this package registers this module in every pytest run of the environment (TorchRL's
own tests included). It imports nothing heavy and changes nothing: no option, no header line, no
file, no hypothesis profile. Only when the command line points into this package (``pytest
--pyargs conformance``, ``pytest <site-packages>/conformance/test_x.py``, a checkout's
``pytest conformance``) does it register :mod:`conformance.pytest_plugin`, before the command
line is parsed, so that ``--impl`` and the other options exist. A test module that embeds the
specs through :mod:`conformance.embed` runs them in a pytest of their own (docs/embed.md).

A checkout and an installed wheel in one environment: whichever ``import conformance`` finds
first is the package (``python -m pytest`` in the checkout puts it first); a command line
that points into a checkout while the wheel is imported is one usage error saying so.
"""

from __future__ import annotations

import importlib
from pathlib import Path

import pytest

PACKAGE = "conformance"
PACKAGE_DIR = Path(__file__).resolve().parent
PLUGIN = "conformance.pytest_plugin"


def register(pluginmanager) -> None:
    """Register the suite's plug-in once, under its module name (as ``-p`` would)."""
    if pluginmanager.get_plugin(PLUGIN) is None:
        pluginmanager.register(importlib.import_module(PLUGIN), PLUGIN)


def _inside_package(path: Path) -> bool:
    try:
        path.resolve().relative_to(PACKAGE_DIR)
    except (OSError, ValueError):
        return False
    return True


def targets_specs(args: list[str], pyargs: bool, invocation_dir: Path) -> bool:
    """Whether the positional arguments (paths, node ids, or with ``--pyargs`` module names)
    select anything in this package; none given means the invocation folder."""
    for arg in args or ["."]:
        target = arg.split("::", 1)[0]
        if pyargs and (target == PACKAGE or target.startswith(f"{PACKAGE}.")):
            return True
        if _inside_package(invocation_dir / target):
            return True
    return False


def checkout_of(path: Path) -> Path | None:
    """The root of the checkout of this project that holds ``path``, or None."""
    for folder in [path, *path.parents]:
        if (folder / "noxfile.py").is_file() and (folder / PACKAGE / "pytest_entry.py").is_file():
            return folder
    return None


def other_copy(args: list[str], pyargs: bool, invocation_dir: Path) -> Path | None:
    """A checkout of this project that the command line points into (a path, or no argument
    in a checkout's folder) while Python imports another copy of the package (an installed
    wheel): its specs, conftest and self-tests would run against the other copy's code."""
    for arg in args or ["."]:
        target = arg.split("::", 1)[0]
        if pyargs and (target == PACKAGE or target.startswith(f"{PACKAGE}.")):
            continue  # a module name: resolved by import, to the copy imported here
        try:
            root = checkout_of((invocation_dir / target).resolve())
        except OSError:
            continue
        if root is not None and (root / PACKAGE).resolve() != PACKAGE_DIR:
            return root
    return None


@pytest.hookimpl(tryfirst=True)
def pytest_load_initial_conftests(early_config, parser, args):
    known = early_config.known_args_namespace
    targets = list(getattr(known, "file_or_dir", None) or [])
    pyargs = bool(getattr(known, "pyargs", False))
    invoked = Path(early_config.invocation_params.dir)
    checkout = other_copy(targets, pyargs, invoked)
    if checkout is not None:
        # pytest would stop at an ImportPathMismatchError in conftest.py (or, for tests/,
        # silently test the installed copy): say which copy is which and what to type
        raise pytest.UsageError(
            f"{checkout} is a checkout of torchrl-conformance, but Python imports the installed "
            f"one ({PACKAGE_DIR}): run `python -m pytest` from {checkout} (it imports the "
            f"checkout), set PYTHONPATH={checkout}, or `pip uninstall torchrl-conformance`")
    if targets_specs(targets, pyargs, invoked):
        register(early_config.pluginmanager)
