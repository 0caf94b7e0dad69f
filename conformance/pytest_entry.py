"""The ``pytest11`` entry point: wakes the suite's plug-in only in a run that collects specs.

Installing this package registers this module in every pytest run of the environment (TorchRL's
own tests included). It imports nothing heavy and changes nothing: no option, no header line, no
file, no hypothesis profile. Only when the command line points into this package (``pytest
--pyargs conformance``, ``pytest <site-packages>/conformance/test_x.py``, a checkout's
``pytest conformance``) does it register :mod:`conformance.pytest_plugin`, before the command
line is parsed, so that ``--impl`` and the other options exist. A test module that embeds the
specs loads the plug-in itself with ``-p conformance.pytest_plugin`` (docs/check-your-torchrl.md).
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


@pytest.hookimpl(tryfirst=True)
def pytest_load_initial_conftests(early_config, parser, args):
    known = early_config.known_args_namespace
    if targets_specs(list(getattr(known, "file_or_dir", None) or []),
                     bool(getattr(known, "pyargs", False)),
                     Path(early_config.invocation_params.dir)):
        register(early_config.pluginmanager)
