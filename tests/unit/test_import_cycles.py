"""No module of brupop imports itself back, however indirectly: the layers contracts order the
packages, and this keeps the modules inside each package acyclic too."""

from __future__ import annotations

import grimp


def _cycles(graph: grimp.ImportGraph) -> list[list[str]]:
    """The strongly connected groups of more than one module (Tarjan, without recursion)."""
    ours = sorted(m for m in graph.modules if m.split(".")[0] == "brupop")
    edges = {
        m: sorted(w for w in graph.find_modules_directly_imported_by(m) if w in ours) for m in ours
    }
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for root in ours:
        if root in index:
            continue
        work = [(root, 0)]
        while work:
            module, position = work.pop()
            if position == 0:
                index[module] = low[module] = len(index)
                stack.append(module)
                on_stack.add(module)
            for target in edges[module][position:]:
                position += 1
                if target not in index:
                    work += [(module, position), (target, 0)]
                    break
                if target in on_stack:
                    low[module] = min(low[module], index[target])
            else:
                if low[module] == index[module]:
                    group = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        group.append(member)
                        if member == module:
                            break
                    if len(group) > 1:
                        found.append(sorted(group))
                if work:
                    parent = work[-1][0]
                    low[parent] = min(low[parent], low[module])
    return found


def test_no_module_imports_itself_back() -> None:
    assert _cycles(grimp.build_graph("brupop")) == []


def test_the_cycle_finder_finds_a_cycle() -> None:
    graph = grimp.ImportGraph()
    for name in ("brupop.a", "brupop.b", "brupop.c"):
        graph.add_module(name)
    graph.add_import(importer="brupop.a", imported="brupop.b")
    graph.add_import(importer="brupop.b", imported="brupop.a")
    graph.add_import(importer="brupop.b", imported="brupop.c")

    assert _cycles(graph) == [["brupop.a", "brupop.b"]]
