"""The reference broker's structure: no import cycle, one table of actions, and that table names
exactly the actions of the spec's Next (and the consumers' steps of NextWithConsumers)."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from ref_impl.kafka.actions import ACTIONS, APPLICATION, MESSAGE, SCHEDULER, Action
from ref_impl.kafka.cluster import Cluster
from ref_impl.kafka.messages import MESSAGE_TYPES
from ref_impl.kafka.sim.faults import Faults
from ref_impl.kafka.sim.scheduler import Simulation
from ref_impl.kafka.sim.workloads import Workload

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "ref_impl"
SPEC = ROOT / "specs" / "kafka" / "KafkaTxn.tla"


# --- imports ---


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imported_modules(path: Path, modules: set[str]) -> set[str]:
    """The modules of ``modules`` that ``path`` imports, wherever in the file."""
    name = module_name(path)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    out = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                up = package.split(".")
                up = up[: len(up) - (node.level - 1)]
                base = ".".join(up + ([node.module] if node.module else []))
            targets = [base] + [f"{base}.{a.name}" for a in node.names]
        else:
            continue
        for t in targets:
            while t and t not in modules:  # ``import a.b.c`` imports a, a.b and a.b.c
                t = t.rpartition(".")[0]
            if t and t != name:
                out.add(t)
    return out


def import_graph() -> dict[str, set[str]]:
    paths = sorted(PACKAGE.rglob("*.py"))
    modules = {module_name(p) for p in paths}
    return {module_name(p): imported_modules(p, modules) for p in paths}


def find_cycle(graph: dict[str, set[str]]) -> list[str]:
    state: dict[str, int] = {}  # 1: on the path, 2: done
    path: list[str] = []

    def visit(n: str) -> list[str]:
        state[n] = 1
        path.append(n)
        for m in sorted(graph.get(n, ())):
            if state.get(m) == 1:
                return [*path[path.index(m):], m]
            if m not in state and (cycle := visit(m)):
                return cycle
        path.pop()
        state[n] = 2
        return []

    for n in sorted(graph):
        if n not in state and (cycle := visit(n)):
            return cycle
    return []


def test_the_import_graph_of_ref_impl_has_no_cycle() -> None:
    graph = import_graph()
    assert "ref_impl.kafka.state" in graph["ref_impl.kafka.client"]  # the graph sees relative imports
    assert find_cycle(graph) == []


def test_the_cycle_finder_finds_a_cycle() -> None:
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b", "c"}, "b": {"c"}, "c": set()}) == []


def test_the_state_module_is_a_leaf() -> None:
    assert import_graph()["ref_impl.kafka.state"] <= {
        "ref_impl.kafka.messages", "ref_impl.kafka.constants", "ref_impl.kafka.log", "ref_impl.kafka.states"}


@pytest.mark.parametrize("path", sorted((PACKAGE / "kafka").glob("*.py")), ids=lambda p: p.name)
def test_the_broker_imports_only_at_the_top_of_a_module(path: Path) -> None:
    tree = ast.parse(path.read_text())
    top = {id(n) for n in tree.body}
    nested = [n.lineno for n in ast.walk(tree) if isinstance(n, (ast.Import, ast.ImportFrom)) and id(n) not in top]
    assert nested == [], f"{path.name}: imports inside a function, class or block at lines {nested}"


def test_each_constant_and_record_of_the_state_is_defined_once() -> None:
    names = ("OFFSETS_PART", "NO_INST", "Inst", "Client", "TxnEntry", "Pending", "Coord", "ProducerState", "Held",
             "Group")
    where: dict[str, list[str]] = {n: [] for n in names}
    for path in (PACKAGE / "kafka").rglob("*.py"):  # the Kafka broker's records; another protocol may name its own alike
        for node in ast.parse(path.read_text()).body:
            if isinstance(node, ast.ClassDef):
                defined = [node.name]
            elif isinstance(node, (ast.Assign, ast.AnnAssign)):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                defined = [t.id for t in targets if isinstance(t, ast.Name)]
            else:
                continue
            for n in defined:
                if n in where:
                    where[n].append(module_name(path))
    assert where == {n: ["ref_impl.kafka.state"] for n in names}


# --- the table of actions ---


def snake(name: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()


def test_each_action_is_a_guard_and_an_effect_of_the_same_name() -> None:
    assert len({a.name for a in ACTIONS}) == len(ACTIONS)
    for a in ACTIONS:
        assert a.guard.__name__ == snake(a.name) + "_enabled", a.name
        assert a.effect.__name__ == snake(a.name), a.name
        assert getattr(Cluster, a.guard.__name__) is a.guard and getattr(Cluster, a.effect.__name__) is a.effect
        assert a.by in (SCHEDULER, APPLICATION)
        assert (a.over == MESSAGE) == bool(a.takes) and set(a.takes) <= set(MESSAGE_TYPES), a.name
    # every guard of the cluster belongs to an action of the table
    guards = {n for n in dir(Cluster) if n.endswith("_enabled")}
    assert guards == {a.guard.__name__ for a in ACTIONS}


def test_a_message_has_at_most_one_step_besides_its_loss() -> None:
    """The simulator lists a message's steps in the table's order, Drop last: with at most one
    other step per message, that order is the order its runs were pinned with."""

    class Checked(Simulation):
        def steps(self):  # type: ignore[no-untyped-def]
            c = self.cluster
            for m in c.net:
                on = [a.name for a in ACTIONS if a.over == MESSAGE and a.enabled(c, m)]
                assert all(next(b for b in ACTIONS if b.name == n).takes_message(m) for n in on), (m, on)
                assert len([n for n in on if n != "Drop"]) <= 1, (m, on)
            return super().steps()

    for w in ("transfer:aborts=true", "ctp:ids=2,input=3,version=TV1"):
        for seed in range(4):
            Checked(Workload.parse(w), Faults.parse("all"), seed, lambda ev: None).run()


# --- the spec's Next ---


def spec_definitions(text: str) -> dict[str, str]:
    """Operator name -> the text of its definition (comments and strings removed)."""
    text = re.sub(r"\(\*.*?\*\)", " ", text, flags=re.S)
    text = re.sub(r"\\\*.*", "", text)
    text = re.sub(r'"[^"]*"', '""', text)
    heads = list(re.finditer(r"^([A-Za-z_]\w*)\s*(?:\([^)]*\))?\s*==", text, flags=re.M))
    ends = [h.start() for h in heads[1:]] + [len(text)]
    return {h.group(1): re.split(r"^-{4,}|^={4,}", text[h.end():e], flags=re.M)[0] for h, e in zip(heads, ends, strict=False)}


def next_actions(text: str, roots: tuple[str, ...] = ("Next", "NextWithConsumers")) -> set[str]:
    """The actions the disjunctions of ``roots`` take: the operators they refer to that set the
    variable ``action'``; an operator that does not (a sub-disjunction such as ClientStep, or
    Finished) is followed to the operators it refers to."""
    defs = spec_definitions(text)
    found: set[str] = set()
    seen: set[str] = set()
    todo = list(roots)
    while todo:
        name = todo.pop()
        if name in seen or name not in defs:
            continue
        seen.add(name)
        body = defs[name]
        if name not in roots and re.search(r"\baction\s*'", body):
            found.add(name)
            continue
        todo += [w for w in re.findall(r"[A-Za-z_]\w*", body) if w in defs]
    return found


def test_the_table_names_exactly_the_actions_of_the_specs_next() -> None:
    spec = next_actions(SPEC.read_text())
    table = {a.name for a in ACTIONS}
    assert spec - table == set(), "actions of the spec's Next that the reference broker lacks"
    assert table - spec == set(), "actions of the reference broker that the spec's Next lacks"


def test_the_comparison_with_next_sees_an_action_added_or_removed() -> None:
    text = SPEC.read_text()
    base = next_actions(text)
    assert {"TcEndTxn", "ClientReceive", "Failover", "TcResendMarker", "Fetch", "OffsetCommit"} <= base
    assert "Finished" not in base and "TcAddPartitions" not in base and "Next" not in base
    removed = text.replace(r"\/ TcEndTxn(m)", "", 1)
    assert next_actions(removed) == base - {"TcEndTxn"}
    added = text.replace("    \\/ Failover\n", "    \\/ Failover\n    \\/ Crash\n", 1) + "\nCrash == /\\ action' = 1\n"
    assert next_actions(added) == base | {"Crash"}
    grouped = text.replace("Next ==\n", "Next ==\n    \\/ ClientStep\n", 1) + (
        "\nClientStep == \\E i \\in Instances : Hang2(i)\nHang2(i) == action' = 1\n")
    assert next_actions(grouped) == base | {"Hang2"}
    assert all(isinstance(a, Action) for a in ACTIONS)
