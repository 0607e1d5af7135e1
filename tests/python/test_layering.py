"""Each layer of src/ includes only its own headers, core/ (header-only, below everything) and the
layers it links (issue 31: "an upward include fails the build or a test"). The link graph is read
from CMakeLists.txt, where each layer names what it links (tessera_layer(NAME DEPS ...)), so the
rule written in docs/ARCHITECTURE.md and the one the build enforces cannot drift apart: an
include of a layer that is not linked below is an upward (or sideways) dependency."""

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SRC = ROOT / "src"
HEADER_ONLY = {"core"}  # included by every layer, includes nothing above itself
INCLUDE = re.compile(r'^\s*#\s*include\s+"([a-z_]+)/', re.M)


def link_graph(cmake_text: str) -> dict:
    """Layer -> the layers it links directly, from tessera_layer(...) and the variables it uses."""
    variables = {}
    for name, values in re.findall(r"\bset\((\w+)\s+([^)]*)\)", cmake_text):
        variables[name] = values.split()
    for name, values in re.findall(r"\blist\(APPEND\s+(\w+)\s+([^)]*)\)", cmake_text):
        variables.setdefault(name, []).extend(values.split())

    def expand(tokens):
        out = []
        for t in tokens:
            m = re.fullmatch(r"\$\{(\w+)\}", t)
            out.extend(expand(variables.get(m.group(1), [])) if m else [t])
        return out

    graph = {}
    for name, args in re.findall(r"\btessera_layer\((\w+)([^)]*)\)", cmake_text):
        tokens = expand(args.split())
        deps = tokens[tokens.index("DEPS") + 1:] if "DEPS" in tokens else []
        if "EXTRA" in deps:
            deps = deps[:deps.index("EXTRA")]
        graph[name] = {d[len("tessera_"):] for d in deps if d.startswith("tessera_")}
    # The command line links the report layer and everything below it (add_library(tessera_cli ...)).
    for m in re.findall(r"target_link_libraries\(tessera_cli\s+PUBLIC\s+([^)]*)\)", cmake_text):
        graph["cli"] = {d[len("tessera_"):] for d in m.split() if d.startswith("tessera_")}
    return graph


def below(graph: dict, layer: str) -> set:
    seen, stack = set(), list(graph.get(layer, ()))
    while stack:
        d = stack.pop()
        if d not in seen:
            seen.add(d)
            stack.extend(graph.get(d, ()))
    return seen


def upward_includes(graph: dict, src: Path) -> list:
    found = []
    for path in sorted(src.glob("*/*")):
        if path.suffix not in (".h", ".cpp"):
            continue
        layer = path.parent.name
        allowed = {layer} | HEADER_ONLY | below(graph, layer)
        for target in INCLUDE.findall(path.read_text()):
            if target not in allowed:
                found.append(f"{path.relative_to(src)} includes {target}/ (links: {sorted(below(graph, layer))})")
    return found


def test_every_layer_is_in_the_link_graph():
    graph = link_graph((ROOT / "CMakeLists.txt").read_text())
    layers = {p.name for p in SRC.iterdir() if p.is_dir()} - HEADER_ONLY
    assert layers <= set(graph), f"layers without a tessera_layer(...): {sorted(layers - set(graph))}"
    # The rooms that were io/ (issue 31), each above the last, all above the model's layers.
    assert below(graph, "report") >= {"evaluation", "catalog", "formats", "search", "calibrate"}
    assert "formats" in below(graph, "catalog") and "catalog" in below(graph, "evaluation")
    assert "cost" in below(graph, "search")


def test_no_layer_includes_a_layer_above_or_beside_it():
    graph = link_graph((ROOT / "CMakeLists.txt").read_text())
    assert upward_includes(graph, SRC) == []


def test_an_upward_include_is_found(tmp_path):
    (tmp_path / "cost").mkdir()
    (tmp_path / "cost" / "bad.cpp").write_text('#include "core/error.h"\n#include "search/planner.h"\n')
    graph = {"cost": {"plan"}, "plan": {"model"}, "search": {"cost"}}
    assert upward_includes(graph, tmp_path) == [
        "cost/bad.cpp includes search/ (links: ['model', 'plan'])"]


def test_formats_and_catalog_parse_only():
    """formats/ reads files and catalog/ resolves names: neither prices anything (issue 31: "parsing
    only: no cost model calls"), so neither includes the cost model, the simulator or the planner,
    although their link line reaches them (the value types they fill live beside those)."""
    pricing = {"cost", "schedule", "search"}
    found = [f"{path.relative_to(SRC)} includes {target}/"
             for room in ("formats", "catalog") for path in sorted((SRC / room).glob("*"))
             for target in INCLUDE.findall(path.read_text()) if target in pricing]
    assert found == []
