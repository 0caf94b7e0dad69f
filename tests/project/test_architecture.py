"""The project's modules form no import cycle, and the layers stay apart: oracles never import
the code under test, benchmarks never pull in the pytest plugin."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

from conformance.paths import ROOT

PACKAGES = ("conformance", "impls", "benchmarks", "benchtools")


def _module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(path: Path, package: str) -> set[str]:
    """Project modules imported anywhere in the module: an import inside a function is deferred,
    not absent, and a cycle through one is still a cycle."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
            found |= {f"{node.module}.{a.name}" for a in node.names}
    return {m for m in found if m.split(".")[0] in PACKAGES}


def _graph() -> dict[str, set[str]]:
    files = [p for pkg in PACKAGES for p in (ROOT / pkg).rglob("*.py")]
    names = {_module_name(p): p for p in files}
    graph = {}
    for name, path in names.items():
        graph[name] = {m for m in _imports(path, name) if m in names and m != name}
    return graph


def test_no_import_cycle():
    graph = _graph()
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node):
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1:
                cycle = stack[stack.index(nxt):] + [nxt]
                raise AssertionError("import cycle: " + " -> ".join(cycle))
            if nxt not in state:
                visit(nxt)
        stack.pop()
        state[node] = 2

    for node in sorted(graph):
        if node not in state:
            visit(node)


def test_oracles_import_neither_impls_nor_libraries_under_test():
    for path in (ROOT / "conformance" / "oracles").glob("*.py"):
        text = path.read_text()
        for forbidden in ("import impls", "from impls", "import torchrl", "from torchrl"):
            assert forbidden not in text, f"{path.name}: {forbidden}"


def test_benchmarks_load_no_pytest_plugin():
    code = ("import sys, benchtools.cli, benchtools.report; "
            "print(sorted(m for m in sys.modules if m.startswith(('conformance.plugin', '_pytest'))))")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True,
                         check=True).stdout.strip()
    assert out == "[]", out


def test_imports_inside_functions_count(tmp_path):
    module = tmp_path / "m.py"
    module.write_text("def f():\n    from benchtools import report\n    import conformance.paths\n")
    assert _imports(module, "m") >= {"benchtools", "benchtools.report", "conformance.paths"}


#: The floors of the ``conformance`` package, lowest first (docs/architecture.md draws them): a
#: module imports its own floor and the floors below it, never one above. The longest prefix
#: places a module; every module of the package must have a floor.
FLOORS = (
    ("base", ("conformance", "conformance.paths", "conformance.outcomes", "conformance.areas",
              "conformance.record", "conformance.defects", "conformance.verdict",
              "conformance.files", "conformance.versions", "conformance.cli",
              "conformance.manifest", "conformance.shipped", "conformance.device",
              "conformance.stack", "conformance.changelog", "conformance._assertions")),
    ("records and reporting", ("conformance.reporting", "conformance.history",
                               "conformance.dashboard")),
    ("interface and adapters", ("conformance.interface", "conformance.interface_check",
                                "conformance.oracles", "conformance.implementations",
                                "conformance.libraries")),
    ("plug-in and specs", ("conformance.plugin", "conformance.pytest_plugin",
                           "conformance.pytest_entry", "conformance.conftest",
                           "conformance.capabilities", "conformance.test_")),
    ("runners", ("conformance.upstream", "conformance.dropin", "conformance.libraries.run",
                 "conformance.libraries.selftests")),
    ("entry points", ("conformance.console", "conformance.embed", "conformance.parent",
                      "conformance.build_trees")),
)


def _floor(module: str) -> int | None:
    best = None
    for number, (_name, prefixes) in enumerate(FLOORS):
        for prefix in prefixes:
            placed = (module == prefix or module.startswith(prefix + ".")
                      or (prefix.endswith("_") and module.startswith(prefix)))
            if placed and (best is None or len(prefix) > best[1]):
                best = (number, len(prefix))
    return best[0] if best else None


def test_no_import_runs_up_a_floor():
    graph = {m: deps for m, deps in _graph().items() if m.split(".")[0] == "conformance"}
    unplaced = sorted(m for m in graph if _floor(m) is None)
    assert not unplaced, f"modules without a floor (add them to FLOORS): {unplaced}"
    upward = sorted(f"{m} ({FLOORS[_floor(m)][0]}) imports {d} ({FLOORS[_floor(d)][0]})"
                    for m, deps in graph.items() for d in deps
                    if d.split(".")[0] == "conformance" and _floor(d) > _floor(m))
    assert not upward, "\n".join(upward)


def test_the_floor_rule_sees_an_upward_import():
    assert _floor("conformance.upstream.runner") > _floor("conformance.reporting.matrix")
    assert _floor("conformance.libraries.run") > _floor("conformance.libraries.registry")
    assert _floor("conformance.test_prioritized_replay") == _floor("conformance.plugin.keys")


def test_every_reference_file_belongs_to_one_declared_area():
    """conformance/areas.py declares each area's reference files once (the mutation run reads
    them there): a new file of impls/ belongs to an area, never to two."""
    from conformance.areas import ORDER

    declared = [path for area in ORDER for path in area.impls]
    assert len(declared) == len(set(declared)), declared
    files = sorted(p.relative_to(ROOT).as_posix() for p in (ROOT / "impls").glob("*.py")
                   if p.name != "__init__.py")
    assert sorted(declared) == files
