"""Style is part of the test command: `ruff check` finds nothing in the repository
(pyflakes, pycodestyle's errors and isort's import order, as pyproject.toml
configures them). Ruff comes with the package's `test` extra."""

import ast
import importlib.util
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_ruff_check_finds_nothing():
    assert importlib.util.find_spec("ruff"), "ruff is missing: pip install -e '.[test]'"
    # this interpreter's ruff (the environment's, also when it is not activated),
    # and no cache written into the checkout
    out = subprocess.run(
        [sys.executable, "-m", "ruff", "check", "--no-cache", "."],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert out.returncode == 0, f"`ruff check` in {ROOT}:\n{out.stdout}{out.stderr}"


# a docstring's cross-reference to the package: :mod:`.x`, :func:`~deepxde_lnn.y.z`
REFERENCE = re.compile(r":(mod|func|class|data):`~?(\.[\w.]+|deepxde_lnn[\w.]*)`")


def _top_level_names(path: Path) -> set[str]:
    """What a module defines or imports at its top level (read, not imported)."""
    names: set[str] = set()
    for node in ast.parse(path.read_text()).body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.Assign):
            targets = [t.id for t in node.targets if isinstance(t, ast.Name)]
            names.update(targets)
            if targets == ["__all__"]:  # a package's lazy names (its __getattr__)
                names.update(ast.literal_eval(node.value))
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names.add(node.target.id)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names.update((a.asname or a.name).split(".")[0] for a in node.names)
    return names


def _module_file(name: str) -> Path | None:
    path = ROOT / Path(*name.split("."))
    for candidate in (path.with_suffix(".py"), path / "__init__.py"):
        if candidate.is_file():
            return candidate
    return None


def _resolves(target: str) -> bool:
    """Whether ``deepxde_lnn.a.b`` names a module of the package, or a name at
    the top level of one (attributes of a class are not followed)."""
    parts = target.split(".")
    for i in range(len(parts), 0, -1):
        found = _module_file(".".join(parts[:i]))
        if found is not None:
            return i == len(parts) or parts[i] in _top_level_names(found)
    return False


def test_docstring_references_to_the_package_name_what_exists():
    # issue 51: three docstrings named modules that had been renamed
    wrong = []
    for path in sorted((ROOT / "deepxde_lnn").rglob("*.py")):
        module = ".".join(path.relative_to(ROOT).with_suffix("").parts)
        package = module if path.name == "__init__.py" else module.rsplit(".", 1)[0]
        package = package.removesuffix(".__init__")
        for role, target in REFERENCE.findall(path.read_text()):
            if target.startswith("."):
                dots = len(target) - len(target.lstrip("."))
                base = package.rsplit(".", dots - 1)[0] if dots > 1 else package
                target = f"{base}.{target.lstrip('.')}"
            if not _resolves(target):
                wrong.append(f"{module}: :{role}:`{target}`")
    assert not wrong, "\n".join(wrong)
