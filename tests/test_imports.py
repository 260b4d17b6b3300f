"""The package's import graph has no cycles: every ``import`` of a package module,
at the top of a file, inside a function or under ``TYPE_CHECKING``, counts."""

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# where each package's modules live (setup.cfg's package_dir)
PACKAGES = {"deepxde_lnn": ROOT / "deepxde_lnn", "deepxde_lnn.cases": ROOT / "cases"}


def modules() -> dict[str, Path]:
    """Module name -> file, for every module of the package."""
    out = {}
    for package, folder in PACKAGES.items():
        for path in folder.rglob("*.py"):
            parts = [p for p in path.relative_to(folder).with_suffix("").parts]
            out[".".join([package, *(p for p in parts if p != "__init__")])] = path
    return out


def imported(name: str, path: Path, node, known) -> list[str]:
    """The package modules an ``import`` node of module ``name`` loads."""
    if isinstance(node, ast.Import):
        return [a.name for a in node.names if a.name in known]
    base = name if path.name == "__init__.py" else name.rpartition(".")[0]
    for _ in range(node.level - 1):
        base = base.rpartition(".")[0]
    target = (
        node.module if not node.level else ".".join(filter(None, (base, node.module)))
    )
    subs = [f"{target}.{a.name}" for a in node.names if f"{target}.{a.name}" in known]
    return subs or ([target] if target in known else [])


def graph() -> dict[str, set[str]]:
    """Module -> the modules it imports (the root package, a facade that every
    submodule import passes through, left out)."""
    known = modules()
    edges = {name: set() for name in known}
    for name, path in known.items():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                edges[name] |= set(imported(name, path, node, known))
    for name in edges:
        edges[name] -= {"deepxde_lnn", name}
    del edges["deepxde_lnn"]
    return edges


def cycles(edges: dict[str, set[str]]) -> list[set[str]]:
    """The strongly connected components of more than one module."""
    reach = {}
    for start in edges:
        seen, todo = set(), [start]
        while todo:
            for nxt in edges.get(todo.pop(), ()):
                if nxt not in seen:
                    seen.add(nxt)
                    todo.append(nxt)
        reach[start] = seen
    groups = {frozenset({a, *(b for b in reach[a] if a in reach[b])}) for a in edges}
    return [set(g) for g in groups if len(g) > 1]


def short(group) -> set[str]:
    return {m.removeprefix("deepxde_lnn.") for m in group}


def test_the_graph_sees_every_kind_of_import():
    edges = graph()
    assert "deepxde_lnn.api" in edges["deepxde_lnn.cli"]  # in a function
    assert "deepxde_lnn.problems.case" in edges["deepxde_lnn.cases.laplace"]  # absolute
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [{"a", "b", "c"}]


def test_run_folders_are_drawn_by_their_writer_not_the_runner():
    edges = graph()
    assert "deepxde_lnn.analysis.figures" in edges["deepxde_lnn.experiments.jobs"]
    training = [m for m in edges if m.startswith("deepxde_lnn.training")]
    assert not any(
        i.startswith("deepxde_lnn.analysis") for m in training for i in edges[m]
    )


def test_no_import_cycles():
    assert [short(g) for g in cycles(graph())] == []
