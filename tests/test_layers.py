"""The package's layers: setup.cfg's import-linter contract holds (every import
counts, inside functions and under ``TYPE_CHECKING`` too), a wrong import breaks
it, no module hides an import of the package's own modules inside a function, and
the reporting layers load no torch."""

import ast
import subprocess
import sys
from pathlib import Path

import grimp
import pytest
from importlinter.api import read_configuration
from importlinter.contracts.layers import LayersContract

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "deepxde_lnn"

# Imports of the package's own modules inside a function that stay, and why: each
# loads torch and DeepXDE (or the whole library) only when it is used.
LAZY = {
    # `import deepxde_lnn` alone selects the backend; deepxde_lnn.LNN, .compare,
    # .report, .main load their modules on first use
    ("__init__.py", "__getattr__"),
    ("__init__.py", "_network"),  # the networks of DeepXDE's backend
    # each command imports what it runs: `deepxde-lnn report` runs without torch
    ("cli.py", "cmd_list"),
    ("cli.py", "cmd_run"),
    ("cli.py", "cmd_compare"),
    ("cli.py", "cmd_ablate"),
    ("cli.py", "cmd_sweep"),
    ("cli.py", "cmd_reference"),
    ("cli.py", "cmd_report"),
}


def _contract() -> LayersContract:
    config = read_configuration(str(ROOT / "setup.cfg"))
    (options,) = config["contracts_options"]
    return LayersContract(options["name"], config["session_options"], options)


def _graph() -> grimp.ImportGraph:
    """The package's import graph, built afresh (a check may change it)."""
    return grimp.build_graph("deepxde_lnn", cache_dir=None)


def test_the_package_keeps_its_layers():
    check = _contract().check(_graph(), verbose=False)
    assert check.kept, check.metadata


@pytest.mark.parametrize(
    "importer, imported",
    [
        ("deepxde_lnn.runs.folder", "deepxde_lnn.training.runner"),  # upwards
        ("deepxde_lnn.training.runner", "deepxde_lnn.analysis.figures"),  # siblings
        ("deepxde_lnn.problems.build", "deepxde_lnn.fem.solver"),  # siblings
        ("deepxde_lnn.analysis.table", "deepxde_lnn.study.registry"),  # upwards
        ("deepxde_lnn.networks.pytorch", "deepxde_lnn.problems.methods"),  # upwards
    ],
)
def test_a_wrong_import_breaks_the_contract(importer, imported):
    graph = _graph()
    graph.add_import(
        importer=importer,
        imported=imported,
        line_number=1,
        line_contents=f"import {imported}",
    )
    check = _contract().check(graph, verbose=False)
    assert not check.kept
    found = str(check.metadata)
    assert importer in found and imported in found


def _hidden_imports(path: Path) -> list[tuple[str, str, int]]:
    """``(function, target, line)`` of every import of the package's own modules
    (``deepxde_lnn...`` or relative) inside a function of the file ``path``."""
    found = []

    def visit(node, function):
        for child in ast.iter_child_nodes(node):
            inner = function
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                inner = child.name
            if function is not None and isinstance(child, ast.ImportFrom):
                if child.level or (child.module or "").startswith("deepxde_lnn"):
                    target = "." * child.level + (child.module or "")
                    found.append((function, target, child.lineno))
            if function is not None and isinstance(child, ast.Import):
                found.extend(
                    (function, a.name, child.lineno)
                    for a in child.names
                    if a.name.split(".")[0] == "deepxde_lnn"
                )
            visit(child, inner)

    visit(ast.parse(path.read_text(encoding="utf-8")), None)
    return found


def test_no_import_of_the_package_hides_inside_a_function():
    hidden = [
        f"{path.relative_to(PACKAGE)}:{line} {function}() imports {target}"
        for path in sorted(PACKAGE.rglob("*.py"))
        for function, target, line in _hidden_imports(path)
        if (path.relative_to(PACKAGE).as_posix(), function) not in LAZY
    ]
    assert hidden == []


def test_the_scan_finds_an_import_inside_a_function(tmp_path):
    path = tmp_path / "m.py"
    path.write_text(
        "import torch\nfrom . import top\n\n"
        "def f():\n    import matplotlib\n    from ..runs import atomic\n\n"
        "class C:\n    def g(self):\n        import deepxde_lnn.cli\n"
    )
    assert _hidden_imports(path) == [
        ("f", "..runs", 6),
        ("g", "deepxde_lnn.cli", 10),
    ]


def test_the_lazy_imports_are_still_there():
    """Every allowed exception names a function that still has such an import."""
    found = {
        (path.relative_to(PACKAGE).as_posix(), function)
        for path in PACKAGE.rglob("*.py")
        for function, _, _ in _hidden_imports(path)
    }
    assert LAZY <= found, LAZY - found


def _torch_free_modules() -> list[str]:
    """Every module of the reporting layers (analysis, and the study but for
    its registry, which imports the cases)."""
    names = []
    for folder in ("analysis", "study"):
        for path in sorted((PACKAGE / folder).glob("*.py")):
            if path.stem not in ("registry", "__main__"):
                stem = "" if path.stem == "__init__" else f".{path.stem}"
                names.append(f"deepxde_lnn.{folder}{stem}")
    return names


@pytest.mark.slow
def test_reporting_loads_no_torch():
    names = _torch_free_modules()
    assert (
        "deepxde_lnn.study.report" in names and "deepxde_lnn.analysis.figures" in names
    )
    code = "import sys\n" + "".join(f"import {n}\n" for n in names)
    code += "print(sorted(m for m in ('torch', 'deepxde') if m in sys.modules))"
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT
    )
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip().splitlines()[-1] == "[]"
