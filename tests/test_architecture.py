"""The layout docs/architecture.md describes: the import graph of the whole tree has no cycle,
``ref_impl`` uses only the trace format and the plug-in contract of ``trace_check``, and
``trace_check`` imports no protocol's code (it loads a plug-in by name)."""

from __future__ import annotations

from pathlib import Path

from test_ref_impl_structure import find_cycle, imported_modules, module_name

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
