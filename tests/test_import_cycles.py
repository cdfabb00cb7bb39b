"""No import circle inside riido_pg (issue 32).

Every ``import`` and ``from … import`` statement of every module counts, wherever it
stands: at the top, inside a function, under ``if TYPE_CHECKING:``. A circle hidden by a
function-level import is still one concept split over modules that need each other.
An import names the module it reaches: ``from a.b import c`` reaches ``a.b.c`` when
that is a module, else ``a.b``; a package's ``__init__`` running on the way down
(importing ``a.b.c`` runs ``a/__init__``) is not counted, as every import has it.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator, Mapping, Set
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st
from support import REPO

PACKAGE = REPO / "riido_pg"


def module_name(path: Path, root: Path = REPO) -> str:
    parts = path.relative_to(root).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def modules() -> dict[str, Path]:
    return {module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def _base(module: str, path: Path, node: ast.ImportFrom) -> str:
    """The absolute name a ``from`` import's module part stands for."""
    if not node.level:
        return node.module or ""
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    for _ in range(node.level - 1):
        package = package.rpartition(".")[0]
    return f"{package}.{node.module}" if node.module else package


def imports(module: str, path: Path, known: Set[str]) -> Iterator[tuple[str, int]]:
    """(module reached, line) for each import of ``module`` of another module in
    ``known``."""
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            reached = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = _base(module, path, node)
            reached = [
                f"{base}.{alias.name}" if f"{base}.{alias.name}" in known else base
                for alias in node.names
            ]
        else:
            continue
        for name in reached:
            if name in known and name != module:
                yield name, node.lineno


def circles(graph: Mapping[str, Set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one node (Tarjan), each sorted,
    in sorted order."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return sorted(found)


def test_no_import_circle_in_the_package() -> None:
    known = modules()
    graph: dict[str, set[str]] = {m: set() for m in known}
    where: dict[tuple[str, str], int] = {}
    for module, path in known.items():
        for reached, line in imports(module, path, set(known)):
            graph[module].add(reached)
            where.setdefault((module, reached), line)
    assert sum(map(len, graph.values())) > 300  # the walk sees the imports there are
    report = []
    for component in circles(graph):
        members = set(component)
        report.append(" <-> ".join(component))
        report += [
            f"    {a} imports {b} ({known[a].relative_to(REPO)}:{where[a, b]})"
            for a in component
            for b in sorted(graph[a] & members)
        ]
    assert report == [], "import circles:\n" + "\n".join(report)


def test_the_walk_resolves_every_import_form(tmp_path: Path) -> None:
    package = tmp_path / "riido_pg"
    (package / "sub").mkdir(parents=True)
    (package / "__init__.py").write_text("from riido_pg.sub import leaf\n")
    (package / "sub" / "__init__.py").write_text("from . import leaf\n")
    (package / "sub" / "leaf.py").write_text(
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n    from ..top import T\n"
        "def f():\n    import riido_pg.top\n    from .. import top\n"
    )
    (package / "top.py").write_text("from riido_pg.sub.leaf import f\nimport os\n")
    files = {module_name(p, tmp_path): p for p in package.rglob("*.py")}
    known = set(files)

    def edges(module: str) -> set[tuple[str, int]]:
        return set(imports(module, files[module], known))

    assert edges("riido_pg") == {("riido_pg.sub.leaf", 1)}
    assert edges("riido_pg.sub") == {("riido_pg.sub.leaf", 1)}
    assert edges("riido_pg.sub.leaf") == {
        ("riido_pg.top", 3),
        ("riido_pg.top", 5),
        ("riido_pg.top", 6),
    }
    assert edges("riido_pg.top") == {("riido_pg.sub.leaf", 1)}


@given(st.dictionaries(st.integers(0, 7), st.sets(st.integers(0, 7), max_size=4), max_size=8))
def test_circles_are_exactly_the_mutually_reachable_groups(raw: dict[int, set[int]]) -> None:
    graph = {str(v): {str(w) for w in ws} for v, ws in raw.items()}
    nodes = set(graph) | {w for ws in graph.values() for w in ws}

    def reach(v: str) -> set[str]:
        seen, todo = set(), [v]
        while todo:
            for w in graph.get(todo.pop(), ()):
                if w not in seen:
                    seen.add(w)
                    todo.append(w)
        return seen

    reaches = {v: reach(v) for v in nodes}
    expected = {frozenset({v} | {w for w in reaches[v] if v in reaches[w]}) for v in nodes}
    assert circles(graph) == sorted(sorted(c) for c in expected if len(c) > 1)
