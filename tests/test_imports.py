"""No import circles in onlinebma/ (issue 39 item 4), counting every import: at the top of a
module, inside a function and under ``TYPE_CHECKING`` alike.

The graph is read from the source with :mod:`ast`, not from ``sys.modules``: an import inside
a function is an edge although it has not run. ``from package import name`` is an edge to the
module ``package.name`` when that is a module of the package, else to ``package`` itself.
Importing a submodule also runs its package's ``__init__``, but that is not counted as an edge:
a package that re-exports its modules would otherwise be a circle with each of them.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1] / "onlinebma"


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def modules() -> dict:
    """``{module name: path}`` of every Python module of the package."""
    return {module_name(p): p for p in sorted(ROOT.rglob("*.py"))}


def imported(name: str, path: Path, known: dict) -> set:
    """The package's modules that module ``name`` (at ``path``) imports, anywhere in it."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    out = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[:len(base) - node.level + 1]
                source = ".".join(base + ([node.module] if node.module else []))
            else:
                source = node.module or ""
            targets = [f"{source}.{alias.name}" if f"{source}.{alias.name}" in known else source
                       for alias in node.names]
        else:
            continue
        for target in targets:
            while target and target not in known:  # "a.b.c" as a name in a.b: module a.b
                target = target.rpartition(".")[0]
            if target and target != name:
                out.add(target)
    return out


def import_graph() -> dict:
    known = modules()
    return {name: imported(name, path, known) for name, path in known.items()}


def find_cycle(graph: dict):
    """One circle of ``graph`` as a list of modules (first = last), or ``None``."""
    state: dict = {}  # 1: on the current path, 2: done
    for start in sorted(graph):
        if start in state:
            continue
        path, stack = [start], [iter(sorted(graph[start]))]
        state[start] = 1
        while stack:
            nxt = next(stack[-1], None)
            if nxt is None:
                state[path.pop()] = 2
                stack.pop()
            elif state.get(nxt) == 1:
                return path[path.index(nxt):] + [nxt]
            elif nxt not in state:
                state[nxt] = 1
                path.append(nxt)
                stack.append(iter(sorted(graph.get(nxt, ()))))
    return None


def test_finds_a_circle_through_a_function_level_import():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert find_cycle(graph) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": set(), "c": {"a", "b"}}) is None


def test_reads_every_kind_of_import(tmp_path, monkeypatch):
    pkg = tmp_path / "onlinebma"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "sub" / "__init__.py").write_text("from .leaf import thing\n")
    (pkg / "sub" / "leaf.py").write_text(
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n    from ..top import T\n"
        "def f():\n    from .. import top\n    import onlinebma.other\n"
        "    from . import sibling\n")
    for name in ("top", "other"):
        (pkg / f"{name}.py").write_text("")
    (pkg / "sub" / "sibling.py").write_text("")
    monkeypatch.setitem(globals(), "ROOT", pkg)
    graph = import_graph()
    assert graph["onlinebma.sub.leaf"] == {"onlinebma.top", "onlinebma.other",
                                           "onlinebma.sub.sibling"}
    assert graph["onlinebma.sub"] == {"onlinebma.sub.leaf"}


def test_no_import_circles():
    graph = import_graph()
    assert len(graph) > 50  # the package was found
    cycle = find_cycle(graph)
    if cycle is not None:
        pytest.fail("import circle: " + " -> ".join(cycle))
