"""The tessera package's modules import each other without a circle (issue 31): an import of a
sibling anywhere in a module, a lazy one inside a function included, is an edge, and the graph
has no cycle. A circle works only while every import of it stays lazy and in the right order."""

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "python" / "tessera"


def sibling_imports(path: Path) -> set:
    modules = {p.stem for p in PACKAGE.glob("*.py")}
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.level == 1:
            if node.module:  # from .x import y
                found.add(node.module.split(".")[0])
            else:  # from . import x, y
                found.update(alias.name for alias in node.names)
    return {m for m in found if m in modules and m != path.stem}


def find_cycle(graph: dict):
    state = {}  # 1: on the current path, 2: done

    def visit(node, path):
        state[node] = 1
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                return path + [node, nxt]
            if nxt not in state:
                cycle = visit(nxt, path + [node])
                if cycle:
                    return cycle
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state:
            cycle = visit(node, [])
            if cycle:
                return cycle
    return None


def test_the_package_has_no_import_circle():
    graph = {p.stem: sibling_imports(p) for p in PACKAGE.glob("*.py")}
    assert graph["torch"], "the check reads the package's imports (tessera.torch imports its siblings)"
    assert find_cycle(graph) is None, f"import circle: {' -> '.join(find_cycle(graph))}"


def test_a_circle_is_found():
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) is not None
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": set()}) is None
