"""The YDB reference engine's structure: one table of actions that names exactly the actions of
the spec's Next, each a guard and an effect named after it; the state module is a leaf; the
engine uses nothing of Kafka's; every event it emits is one the plug-in reads; and the engine
replays its own runs (and stops at a bug's first deviation)."""

from __future__ import annotations

import ast
import json
import re
import sys
from pathlib import Path

import pytest

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib
from test_ref_impl_structure import import_graph, next_actions, snake

from ref_impl.ydb import trace as ydb_trace
from ref_impl.ydb.actions import ACTIONS, APPLICATION, BY_EVENT, EVENTS, MESSAGE, MESSAGE_TYPES, SCHEDULER, Action
from ref_impl.ydb.constants import BUGS
from ref_impl.ydb.engine import Engine
from ref_impl.ydb.replay import replay
from ref_impl.ydb.sim import Faults, Simulation, Workload
from ref_impl.ydb.zoo import ZOO

ROOT = Path(__file__).resolve().parents[1]
SPEC = ROOT / "specs" / "ydb" / "YdbTopics.tla"
PACKAGE = ROOT / "ref_impl" / "ydb"
RUNS = [("copy", "none"), ("copy:table=true,version=v25", "all"), ("copy:workers=3,src=2,dst=3,msgs=5,batch=3,txns=8", "all"),
        ("copy:workers=1,table=true", "restarts=2,loss=2,locklosses=1,deadlines=1"), ("copy:workers=2,rollback=true,txns=8", "all"),
        ("copy:producers=partition,txns=8", "hangs=2,restarts=1,loss=1"),
        ("copy:shapes=copy+read+write,producers=partition,nontx=2,rollback=true,txns=8", "all"),
        ("copy:shapes=read+write,table=true,dst=1,txns=6", "hangs=1,restarts=1,loss=1")]


def simulate(workload: str, faults: str, seed: int, bugs: tuple[str, ...] = (), prune: bool = True) -> Simulation:
    events: list[dict] = []
    sim = Simulation(Workload.parse(workload), Faults.parse(faults), seed, events.append, bugs=bugs, prune=prune)
    sim.run()
    sim.events = events  # type: ignore[attr-defined]
    return sim


# --- the table of actions and the spec's Next ---


def test_the_table_names_exactly_the_actions_of_the_specs_next() -> None:
    spec = next_actions(SPEC.read_text(), roots=("Next",))
    table = {a.name for a in ACTIONS}
    assert spec - table == set(), "actions of the spec's Next that the reference engine lacks"
    assert table - spec == set(), "actions of the reference engine that the spec's Next lacks"
    assert len(table) == len(ACTIONS) == 43


def operator_body(text: str, name: str) -> str:
    """The text of operator ``name``'s definition, up to the next blank line."""
    start = re.search(rf"^{name}(\(|\s*==)", text, flags=re.M)
    assert start, name
    return text[start.start(): text.index("\n\n", start.start())]


def test_the_events_are_the_names_the_specs_action_variable_gives() -> None:
    """Each action emits the names its spec operator writes into ``action'``: Act("ReadBatch", ...),
    or Act(CASE ~accept -> "PqWriteRefused" [] ... [] OTHER -> "PqWrite", ...)."""
    text = SPEC.read_text()
    assert "Act(" in text
    for a in ACTIONS:
        names: set[str] = set()
        body = operator_body(text, a.name)
        for first in re.findall(r'Act\((CASE .*?OTHER -> "\w+"|IF [^,]*? THEN "\w+" ELSE "\w+"|"\w+")', body, flags=re.S):
            names |= set(re.findall(r'"(\w+)"', first))
        assert set(a.events) == names, (a.name, a.events, names)
    assert set(EVENTS) == set(BY_EVENT) == set(ydb_trace.EVENT_COLUMNS)


def test_the_trace_names_the_spec_action_of_each_event_as_the_table_does() -> None:
    assert {ev: ydb_trace.spec_action(ev) for ev in EVENTS} == {ev: BY_EVENT[ev].name for ev in EVENTS}


def test_each_action_is_a_guard_and_an_effect_of_the_same_name() -> None:
    for a in ACTIONS:
        assert a.guard.__name__ == snake(a.name) + "_enabled", a.name
        assert a.effect.__name__ == snake(a.name), a.name
        assert getattr(Engine, a.guard.__name__) is a.guard and getattr(Engine, a.effect.__name__) is a.effect
        assert a.by in (SCHEDULER, APPLICATION)
        assert (a.over == MESSAGE) == bool(a.takes) and set(a.takes) <= set(MESSAGE_TYPES), a.name
        assert isinstance(a, Action)
    guards = {n for n in dir(Engine) if n.endswith("_enabled")}
    assert guards == {a.guard.__name__ for a in ACTIONS}


def test_the_sdk_takes_the_workers_steps_and_the_scheduler_the_rest() -> None:
    sdk = {a.name for a in ACTIONS if a.by == APPLICATION}
    assert sdk == {"ReadBatch", "ReadOnlyBatch", "ReadMore", "ReadOther", "UpdateOffsets", "BeginWrites", "TxWrite", "NonTxWrite",
                   "OtherProducerWrite", "PlainWrite", "PlainRead", "CommitOffset", "ForceClose", "TableWrite",
                   "Flush", "CommitTx", "RollbackTx"}
    faults = {a.name for a in ACTIONS if a.fault}
    assert faults == {"Hang", "Resume", "PlanDeadline", "LockLost", "Lose", "TabletRestart", "PqWriteAckLost", "Resend",
                      "Split"}


# --- imports ---


def test_the_state_module_is_a_leaf_and_nothing_of_kafka_is_used() -> None:
    """YDB's engine uses only itself and the protocol-neutral simulator (ref_impl/sim: settings,
    the step loop, the replay of spec states), which uses no protocol's code."""
    graph = import_graph()
    assert graph["ref_impl.ydb.state"] <= {"ref_impl.ydb.constants"}
    assert graph["ref_impl.ydb.constants"] == set()
    used = {t for m, targets in graph.items() if m.startswith("ref_impl.ydb") for t in targets}
    assert {t for t in used if t.startswith("ref_impl") and not t.startswith("ref_impl.ydb")} == {
        "ref_impl.sim", "ref_impl.sim.settings", "ref_impl.sim.stepper", "ref_impl.sim.replay_states"}
    shared = {t for m, targets in graph.items() if m.startswith("ref_impl.sim") for t in targets}
    assert {t for t in shared if t.startswith("ref_impl") and not t.startswith("ref_impl.sim")} == set()
    for path in PACKAGE.glob("*.py"):  # and no kafka import written any other way
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom):
                assert "kafka" not in (node.module or ""), path.name
            if isinstance(node, ast.Import):
                assert all("kafka" not in n.name for n in node.names), path.name


# --- runs ---


@pytest.mark.parametrize("workload,faults", RUNS)
def test_every_event_is_one_the_plugin_reads_and_the_engine_replays_its_own_runs(workload: str, faults: str) -> None:
    for seed in range(3):
        sim = simulate(workload, faults, seed)
        events = sim.events  # type: ignore[attr-defined]
        k = sim.k.to_spec()
        ydb_trace.check_constants(k)
        for ev in events:
            ydb_trace.check_event(ev, k)
            assert set(ev) - {"action"} <= ydb_trace.EVENT_COLUMNS[ev["action"]] | ydb_trace.INFO_COLUMNS
            for col, v in ev.items():
                assert v in ydb_trace.COLUMNS.enums.get(col, {v}), (col, v)
        assert replay(k, events) is None, (workload, faults, seed)


def test_pruning_quiet_transactions_hides_no_step() -> None:
    for workload, faults in RUNS:
        for seed in range(3):
            pruned = simulate(workload, faults, seed).events  # type: ignore[attr-defined]
            full = simulate(workload, faults, seed, prune=False).events  # type: ignore[attr-defined]
            assert json.dumps(pruned) == json.dumps(full), (workload, faults, seed)


@pytest.mark.parametrize("bug", ZOO, ids=lambda b: b.name)
def test_each_zoo_run_deviates_from_the_correct_engine_at_its_event(bug) -> None:  # type: ignore[no-untyped-def]
    sim = simulate(bug.workload, bug.faults, bug.seed, bug.bugs)
    events = sim.events  # type: ignore[attr-defined]
    n = replay(sim.k.to_spec(), events)
    assert n is not None, f"{bug.name}: seed {bug.seed} no longer exposes the bug"
    assert events[n - 1]["action"] == bug.rejected_at


def test_the_spec_names_every_bug_of_the_zoo() -> None:
    text = SPEC.read_text()
    block = text[text.index("BugNames =="): text.index("ASSUME")]
    names = set(re.findall(r'^\s+"(\w+)",?\s+\\\*', block, flags=re.M))
    assert len(names) == 27
    assert names == {z.name for z in ZOO} == set(BUGS)


def test_each_zoo_bug_names_the_registry_model_of_the_same_bug() -> None:
    models = tomllib.loads((ROOT / "specs" / "ydb" / "models.toml").read_text())["models"]
    for bug in ZOO:
        assert bug.model in models, bug.name
        assert set(models[bug.model]["constants"]["Bugs"]) == set(bug.bugs), bug.name
