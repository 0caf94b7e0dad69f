"""pytest plugin: TorchRL's tests with the ``impls`` classes in place of TorchRL's.

A practitioner switches by changing an import; this plugin does the same for TorchRL's test
modules. While the tests are collected, every loaded ``torchrl``/``tensordict`` module attribute
that is one of the replaced classes points at the ``impls`` class, so that the test modules'
``from torchrl... import X`` (and decorator arguments evaluated at import) get the reference.
Once collection is over, TorchRL's and tensordict's own modules get their classes back and only
the modules under the test root keep the swapped names: TorchRL's internals are not rebound
(``impls`` classes subclass TorchRL's, and TorchRL's code keeps calling its own).

Load it with ``-p conformance.dropin.swap``.
"""

from __future__ import annotations

import importlib
import sys
from pathlib import Path

# (impls name, the TorchRL/tensordict class it replaces: module, attribute)
REPLACED = [
    ("TanhNormal", "torchrl.modules.distributions.continuous", "TanhNormal"),
    ("SACLoss", "torchrl.objectives.sac", "SACLoss"),
    ("DiscreteSACLoss", "torchrl.objectives.sac", "DiscreteSACLoss"),
    ("ClipPPOLoss", "torchrl.objectives.ppo", "ClipPPOLoss"),
    ("PrioritizedSampler", "torchrl.data.replay_buffers.samplers.prioritized",
     "PrioritizedSampler"),
    ("PrioritizedReplayBuffer", "torchrl.data", "PrioritizedReplayBuffer"),
    ("TensorDictPrioritizedReplayBuffer", "torchrl.data", "TensorDictPrioritizedReplayBuffer"),
    ("CompositeDistribution", "tensordict.nn", "CompositeDistribution"),
    ("ProbabilisticActor", "torchrl.modules", "ProbabilisticActor"),
]

_OWNERS = ("torchrl", "tensordict")


def replacements() -> dict:
    """{TorchRL class: impls class}."""
    import impls

    table = {}
    for name, module, attribute in REPLACED:
        original = getattr(importlib.import_module(module), attribute)
        table[original] = getattr(impls, name)
    return table


def _library_modules():
    for name, module in list(sys.modules.items()):
        if module is not None and name.split(".")[0] in _OWNERS:
            yield module


def _rebind(module, table: dict) -> int:
    """Point every global of ``module`` that is a key of ``table`` at its value."""
    count = 0
    namespace = getattr(module, "__dict__", {})
    for attribute, value in list(namespace.items()):
        try:
            replacement = table.get(value)
        except Exception:  # unhashable values, or hashes that raise
            continue
        if replacement is not None:
            namespace[attribute] = replacement
            count += 1
    return count


def _is_replacement(value, back: dict) -> bool:
    try:
        return value in back
    except Exception:
        return False


class DropinSwap:
    def __init__(self, config) -> None:
        self.root = Path(str(config.rootpath)).resolve()
        self.table = replacements()
        self.bound: dict[str, int] = {}

    def pytest_collection(self, session) -> None:
        for module in _library_modules():
            _rebind(module, self.table)

    def pytest_collection_finish(self, session) -> None:
        # every library module, including those first imported during collection
        back = {new: old for old, new in self.table.items()}
        for module in _library_modules():
            _rebind(module, back)
        for name, module in list(sys.modules.items()):
            file = getattr(module, "__file__", None)
            if file and name.split(".")[0] not in _OWNERS and self._is_test_file(file):
                _rebind(module, self.table)
                count = sum(1 for v in list(vars(module).values()) if _is_replacement(v, back))
                if count:
                    self.bound[name] = count

    def _is_test_file(self, file: str) -> bool:
        try:
            Path(file).resolve().relative_to(self.root)
        except ValueError:
            return False
        return True

    def pytest_report_header(self, config):
        names = ", ".join(sorted(cls.__name__ for cls in self.table.values()))
        return f"dropin swap: impls classes in place of TorchRL's ({names})"

    def pytest_terminal_summary(self, terminalreporter) -> None:
        modules = ", ".join(f"{m} ({n})" for m, n in sorted(self.bound.items())) or "none"
        terminalreporter.write_line(f"dropin swap: names rebound in {modules}")


def pytest_configure(config) -> None:
    config.pluginmanager.register(DropinSwap(config), "dropin-swap")
