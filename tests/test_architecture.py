"""The layout docs/architecture.md describes: the import graph of the whole tree has no cycle, nor
has the graph of its packages (``trace_check`` at the bottom, then ``ref_impl``, ``spark_replay``,
``probe``) or of the parts of one package (the known exceptions listed); ``ref_impl`` uses only the
trace format and the plug-in contract of ``trace_check``, and ``trace_check`` imports no protocol's
code and no command of another package (it loads a plug-in or a command by name).

An import counts wherever it is: at the top of a module, inside a function (a lazy import) or under
``TYPE_CHECKING`` (``imported_modules`` walks the whole file). Loading a module by name with
``importlib`` is not an import statement and does not count: that is how the layers point up."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from test_ref_impl_structure import find_cycle, imported_modules, module_name

from trace_check.cli.main import COMMANDS

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("trace_check", "ref_impl", "spark_replay", "probe")
# What ref_impl may import of trace_check: the trace format and the plug-in contract (and the
# packages that hold them, whose __init__ modules only document).
# The value model too: a plug-in's replayed states (Protocol.spec_states) are its values; a leaf.
ALLOWED_FROM_REF_IMPL = {"trace_check", "trace_check.traces", "trace_check.traces.format", "trace_check.traces.protocol",
                         "trace_check.values", "trace_check.values.tla"}


def whole_graph() -> dict[str, set[str]]:
    paths = sorted(p for pkg in PACKAGES for p in (ROOT / pkg).rglob("*.py"))
    modules = {module_name(p) for p in paths}
    return {module_name(p): imported_modules(p, modules) for p in paths}


def part(module: str, depth: int) -> str:
    """The package (``depth`` 1) or the part of a package (2: a module or subpackage of it) that ``module`` is in."""
    return ".".join(module.split(".")[:depth])


def coarse_graph(graph: dict[str, set[str]], key: Callable[[str], str], within_package: bool = False,
                 parent: int = 1) -> dict[str, set[str]]:
    """``graph`` with each module replaced by ``key(module)``: an edge for each import between two keys
    (of one package only, ``parent`` deep, with ``within_package``)."""
    out: dict[str, set[str]] = {}
    for m, targets in graph.items():
        for t in targets:
            if key(m) != key(t) and not (within_package and part(m, parent) != part(t, parent)):
                out.setdefault(key(m), set()).add(key(t))
    return out


def cycles(graph: dict[str, set[str]]) -> set[frozenset[str]]:
    """The strongly connected components of ``graph`` with more than one node: each a set of nodes
    that reach one another."""
    reach = {n: _reachable(graph, n) for n in set(graph) | {t for ts in graph.values() for t in ts}}
    return {frozenset(m for m in reach if n in reach[m] and m in reach[n]) for n in reach if n in reach[n]}


def _reachable(graph: dict[str, set[str]], start: str) -> set[str]:
    seen: set[str] = set()
    todo = list(graph.get(start, ()))
    while todo:
        n = todo.pop()
        if n not in seen:
            seen.add(n)
            todo.extend(graph.get(n, ()))
    return seen


def edges_between(graph: dict[str, set[str]], key: Callable[[str], str], cycle: frozenset[str]) -> list[tuple[str, str]]:
    """The imports that make ``cycle``: for the message of a failing test."""
    return sorted((m, t) for m, ts in graph.items() for t in ts if key(m) in cycle and key(t) in cycle and key(m) != key(t))


def test_the_import_graph_of_the_tree_has_no_cycle() -> None:
    graph = whole_graph()
    assert len(graph) > 40  # the walk found the tree
    assert find_cycle(graph) == []


def test_ref_impl_uses_only_the_trace_format_and_the_plugin_contract_of_trace_check() -> None:
    bad = {
        (m, t)
        for m, targets in whole_graph().items()
        if m.startswith("ref_impl")
        for t in targets
        if t.startswith("trace_check") and t not in ALLOWED_FROM_REF_IMPL
    }
    assert bad == set()


def test_trace_check_imports_no_protocol_code() -> None:
    bad = {(m, t) for m, targets in whole_graph().items() if m.startswith("trace_check") for t in targets if t.startswith("ref_impl")}
    assert bad == set()


def test_the_contract_modules_are_leaves_of_trace_check() -> None:
    graph = whole_graph()
    for leaf in ("trace_check.traces.format", "trace_check.traces.protocol"):
        assert {t for t in graph[leaf] if t.startswith("trace_check")} <= {"trace_check", "trace_check.traces"}, leaf


def test_the_graph_sees_lazy_imports() -> None:
    graph = whole_graph()
    assert "probe.run" in graph["probe.command"]  # ``from probe.run import record`` inside cmd_probe
    assert "spark_replay.replay" in graph["spark_replay.command"]  # inside cmd_replay


def test_the_packages_import_one_another_one_way() -> None:
    graph = whole_graph()
    packages = coarse_graph(graph, lambda m: part(m, 1))
    assert packages.keys() <= set(PACKAGES)
    found = cycles(packages)
    assert found == set(), [edges_between(graph, lambda m: part(m, 1), c) for c in found]
    assert packages.get("trace_check", set()) == set()  # the bottom layer: it loads the others' code by name only


def part_cycles(graph: dict[str, set[str]]) -> dict[int, set[frozenset[str]]]:
    """For each depth d, the cycles among the parts d deep of each package d - 1 deep (its modules
    and its subpackages, e.g. ``ref_impl.kafka.sim`` and ``ref_impl.kafka.protocol`` inside
    ``ref_impl.kafka``): only imports between two parts of the same package count, and a package's
    own ``__init__`` is not one of its parts."""
    depth = max(m.count(".") + 1 for m in graph)
    out: dict[int, set[frozenset[str]]] = {}
    for d in range(2, depth + 1):
        deep = {m: {t for t in ts if t.count(".") + 1 >= d} for m, ts in graph.items() if m.count(".") + 1 >= d}
        found = cycles(coarse_graph(deep, lambda m, d=d: part(m, d), within_package=True, parent=d - 1))
        if found:
            out[d] = found
    return out


def test_the_parts_of_every_package_import_one_another_one_way() -> None:
    graph = whole_graph()
    assert {m.count(".") for m in graph} >= {0, 1, 2, 3}  # ref_impl.kafka.sim.scheduler is four deep
    found = part_cycles(graph)
    assert found == {}, {d: [edges_between(graph, lambda m, d=d: part(m, d), c) for c in cs] for d, cs in found.items()}


def test_a_cycle_inside_a_subpackage_is_found() -> None:
    graph = {"p.a.x": {"p.a.y"}, "p.a.y": {"p.a.x"}, "p.b": {"p.a.x"}, "p.a": set()}
    assert part_cycles(graph) == {3: {frozenset({"p.a.x", "p.a.y"})}}
    assert part_cycles({"p.a.x": {"p.b"}, "p.b": {"p.a.y"}, "p.a.y": set()}) == {2: {frozenset({"p.a", "p.b"})}}  # out and back in
    assert part_cycles({"p.a.x": {"p.a.y"}, "p.a.y": {"p.b"}, "p.b": set()}) == {}


def test_the_cycle_finder_finds_each_cycle() -> None:
    graph = {"a": {"b"}, "b": {"a", "c"}, "c": {"d"}, "d": {"c"}, "e": {"a"}}
    assert cycles(graph) == {frozenset({"a", "b"}), frozenset({"c", "d"})}
    assert cycles({"a": {"b"}, "b": {"c"}}) == set()


def test_the_commands_of_other_packages_are_named_not_imported() -> None:
    owners = {where.partition(":")[0].split(".")[0] for where in COMMANDS.values()}
    assert owners == {"trace_check", "spark_replay", "probe"}
    bad = {(m, t) for m, targets in whole_graph().items() if m.startswith("trace_check") for t in targets if part(t, 1) in ("spark_replay", "probe")}
    assert bad == set()


def test_spark_replay_uses_only_the_coordinators_states_of_ref_impl() -> None:
    # Kafka's transaction states and validPreviousStates, one table for the reference broker and the
    # replay's checks (P5, P7); a leaf module of ref_impl/kafka.
    graph = whole_graph()
    used = {t for m, targets in graph.items() if m.startswith("spark_replay") for t in targets if t.startswith("ref_impl")}
    assert used <= {"ref_impl", "ref_impl.kafka", "ref_impl.kafka.states"}
    assert graph["ref_impl.kafka.states"] == set()


def private_imports(path: Path) -> list[str]:
    """The private names (``_x``, not dunders) that ``path`` imports from another module of the
    tree: what a module keeps to itself is used by no other."""
    import ast

    tree = ast.parse(path.read_text(encoding="utf-8"))
    return [f"{node.module}.{a.name}" for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)
            and (node.level > 0 or (node.module or "").split(".")[0] in (*PACKAGES, "scripts"))
            for a in node.names if a.name.startswith("_") and not a.name.startswith("__")]


def test_no_module_imports_another_modules_private_names(tmp_path: Path) -> None:
    found = {str(p.relative_to(ROOT)): names for pkg in (*PACKAGES, "scripts") for p in sorted((ROOT / pkg).rglob("*.py"))
             if (names := private_imports(p))}
    assert not found, f"private names imported across modules: {found}"
    planted = tmp_path / "m.py"
    planted.write_text("def f():\n    from ref_impl.kafka.replay import _hidden, public\n", encoding="utf-8")
    assert private_imports(planted) == ["ref_impl.kafka.replay._hidden"]  # lazy imports count
