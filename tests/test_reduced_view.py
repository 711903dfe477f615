"""ReducedView and ReducedNext (specs/kafka/MCKafkaTxn.tla) must not hide a bug.

The holding Kafka models are checked under ReducedView, a view that forgets what no later step or
invariant can read, and with ReducedNext, a partial-order reduction that gives marker
acknowledgements, TcComplete and a client's own steps priority (the spec says why each is sound).
The arguments are on paper; these are their tests: every Kafka model that violates an invariant
under the exact View and Next must violate the same invariant under the reductions too: with a
counterexample of the same length under ReducedView, and of at least that length with ReducedNext
(which may have to take a priority step first). In small bounds, ReducedNext must reach every
value of the variables the invariants read that Next reaches. And each reduction must reduce.

The registered models themselves are checked once per session (tests/shared_runs.py), shared with
tests/test_models.py.
"""

from __future__ import annotations

import re
import subprocess
from collections.abc import Callable
from pathlib import Path

import attrs
import pytest
from shared_runs import GUARD_SECONDS, SharedTlcRuns

from trace_check.engines import tlc, tlc_tools, tlc_workdir
from trace_check.engines.runner import run_task
from trace_check.models.registry import Model, load_registry
from trace_check.values.tlc_print import parse_state

REGISTRY = load_registry(Path(__file__).resolve().parents[1] / "specs" / "kafka" / "models.toml")
# The safety models: the reductions are sound for invariants. Models with temporal properties run
# on whole states (no view, Next): a lasso's loop is found among the states TLC keeps.
KAFKA = [m for m in REGISTRY.select([], "ci") if m.task.spec_file.name == "MCKafkaTxn.tla" and not m.task.properties]
VIOLATING = [m for m in KAFKA if m.expect.startswith("violates")]
LIVENESS = [m for m in REGISTRY.select([], "ci") if m.task.properties]

pytestmark = pytest.mark.tlc


# The runs these tests derive from a model get the shared runs' guard at least: on a loaded 2-core CI
# machine kafka_no_group_fencing's reduced run took over the model's 120 s (stop 56's CI run; about
# 40 s alone).


def with_view(model: Model, view: str) -> Model:
    task = attrs.evolve(model.task, tlc=attrs.evolve(model.task.tlc, view=view), timeout=max(model.task.timeout, GUARD_SECONDS))
    return attrs.evolve(model, task=task)


def with_next(model: Model, next_: str) -> Model:
    return attrs.evolve(model, task=attrs.evolve(model.task, next=next_, timeout=max(model.task.timeout, GUARD_SECONDS)))


def test_every_holding_kafka_model_uses_the_reduced_view() -> None:
    holding = [m for m in KAFKA if m.expect == "holds"]
    assert holding and all(m.task.tlc.view == "ReducedView" for m in holding)
    assert VIOLATING and all(m.task.tlc.view == "View" for m in VIOLATING)


def test_every_holding_kafka_model_uses_the_reduced_next() -> None:
    holding = [m for m in KAFKA if m.expect == "holds"]
    assert all(m.task.next == "ReducedNext" for m in holding)
    assert all(m.task.next == "Next" for m in VIOLATING)


def test_no_liveness_model_uses_a_reduction() -> None:
    assert LIVENESS and all(m.task.tlc.view is None and m.task.next == "Next" and m.task.specification for m in LIVENESS)


# kafka_no_group_fencing's reduced run takes a minute and a half on a loaded 2-core machine: it is
# outside CI's core (the marker `long`: tests/tiers.py runs it in its shard's turn); the other
# violating models are each a few seconds.
LONG_VIOLATING = {"kafka_no_group_fencing"}


@pytest.mark.parametrize("model", [pytest.param(m, marks=pytest.mark.long) if m.name in LONG_VIOLATING else m for m in VIOLATING],
                         ids=lambda m: m.name)
def test_reduced_view_finds_the_same_violation(model: Model, tmp_path: Path, shared_tlc: SharedTlcRuns) -> None:
    exact = shared_tlc.run(model.task)
    reduced = run_task("tlc", with_view(model, "ReducedView").task, tmp_path / "reduced")
    assert reduced.verdict == model.expect, f"{model.name}: {reduced.message} (log: {reduced.log_file})"
    # breadth-first search, and the view merges only states with the same futures: the shortest
    # counterexample keeps its length
    assert exact.counterexample is not None and reduced.counterexample is not None
    assert len(reduced.counterexample.steps) == len(exact.counterexample.steps)
    both = run_task("tlc", with_next(with_view(model, "ReducedView"), "ReducedNext").task, tmp_path / "both")
    assert both.verdict == model.expect, f"{model.name} with ReducedNext: {both.message} (log: {both.log_file})"
    # the reduced graph is a part of the full one: no shorter path to a violation
    assert both.counterexample is not None
    assert len(both.counterexample.steps) >= len(exact.counterexample.steps)


# each reduction undone: kafka_tv2_hanging must explore fewer states with it than without it
UNDO = {
    "ReducedView": lambda m: with_view(m, "View"),
    "ReducedNext": lambda m: with_next(m, "Next"),
}


@pytest.mark.parametrize("undo", UNDO.values(), ids=UNDO.keys())
def test_the_reduction_explores_fewer_states(undo: Callable[[Model], Model], tmp_path: Path, shared_tlc: SharedTlcRuns) -> None:
    model = next(m for m in KAFKA if m.name == "kafka_tv2_hanging")
    reduced = shared_tlc.run(model.task)
    unreduced = run_task("tlc", undo(model).task, tmp_path / "unreduced")
    assert reduced.verdict == unreduced.verdict == "holds"
    assert reduced.distinct_states is not None and unreduced.distinct_states is not None
    assert reduced.distinct_states < unreduced.distinct_states


def test_reduced_next_explores_past_a_stale_acknowledgement(tmp_path: Path) -> None:
    """After a failover, an acknowledgement of the old coordinator epoch is outside the view. Had
    ReducedNext taken it first, TLC would take the result for the state it came from and explore
    nothing after it: the witness NoStaleAndLiveAcks (a stale and a live acknowledgement in flight
    together) would never be violated. It is, as under Next."""
    base = next(m for m in KAFKA if m.name == "kafka_happy_path")
    constants = dict(base.task.constants, MaxFailovers=1, InputSize=0)
    task = attrs.evolve(base.task, constants=constants, invariants=("NoStaleAndLiveAcks",), next="ReducedNext",
                        tlc=attrs.evolve(base.task.tlc, view="ReducedView"))
    reduced = run_task("tlc", task, tmp_path / "reduced")
    full = run_task("tlc", attrs.evolve(task, next="Next", tlc=attrs.evolve(task.tlc, view="View")), tmp_path / "full")
    assert full.verdict == "violates NoStaleAndLiveAcks", full.message
    assert reduced.verdict == "violates NoStaleAndLiveAcks", reduced.message


# Every step ReducedNext puts first leaves these alone (the markers' and clients' bookkeeping is
# elsewhere), and every invariant reads little else: the partition logs and producer states, the
# transaction logs, the group and the coordinator epoch.
VISIBLE = ("plog", "pst", "tlog", "gc", "cepoch")

# Small bounds, each exercising different priority steps: a hang and a zombie with a lost message;
# a late EndTxn with a failover; a late produce with timeouts; consume-transform-produce.
SMALL = {
    "zombie_loss": dict(NumPartitions=1, TxnsPerInstance=1, MaxFailovers=0),
    "late_endtxn_failover": dict(Version="TV2", NumInstances=1, NumPartitions=1, LateRequests=["EndTxn"],
                                 MaxRetries=1, MaxHangs=0),
    "late_produce_timeouts": dict(Version="TV2", NumInstances=1, NumPartitions=1, TxnsPerInstance=1,
                                  LateRequests=["Produce"], ProduceTimeouts=True, MaxRetries=1, MaxHangs=0),
    "ctp": dict(TxnIds=["a", "b"], NumInstances=1, NumPartitions=1, TxnsPerInstance=1, InputSize=1, MaxLoss=0,
                MaxFailovers=0),
}


def visible_values(model: Model, next_: str, workdir: Path) -> set[tuple]:
    """Run TLC under the exact View with ``next_``, dump every state it finds, and return the
    distinct values of the VISIBLE variables."""
    task = attrs.evolve(model.task, next=next_, tlc=attrs.evolve(model.task.tlc, view="View", workers=2))
    workdir.mkdir(parents=True)
    tlc_workdir.prepare_workdir(task, workdir)
    (workdir / "tmp").mkdir()
    cmd = tlc.build_command(task, workdir, tlc_tools.find_java(), tlc_tools.find_tla2tools())
    cmd[-1:-1] = ["-dump", str(workdir / "states")]  # TLC adds .dump
    done = subprocess.run(cmd, cwd=workdir, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout[-3000:]
    # TLC prints equal values alike, so the text of the visible variables is deduplicated first
    # and only the distinct texts are parsed (parsing every state would take minutes)
    texts = set()
    for block in re.split(r"^State \d+:\s*$", (workdir / "states.dump").read_text(), flags=re.M)[1:]:
        conjuncts = re.split(r"^/\\ ", block.strip(), flags=re.M)
        texts.add("\n".join("/\\ " + c for c in conjuncts if c.split(" = ", 1)[0] in VISIBLE))
    values = set()
    for text in texts:
        state = parse_state(text)
        assert set(state) == set(VISIBLE)
        values.add(tuple(state[v] for v in VISIBLE))
    return values


# Each pair of runs dumps every state; the first three bounds take a minute each on 2 cores and are
# outside CI's core (the marker `long`: tests/tiers.py runs them in their shard's turn); the core
# compares the late produce's.
LONG_BOUNDS = {"zombie_loss", "late_endtxn_failover", "ctp"}


@pytest.mark.parametrize("bounds", [pytest.param(b, marks=pytest.mark.long, id=k) if k in LONG_BOUNDS else pytest.param(b, id=k)
                                    for k, b in SMALL.items()])
def test_reduced_next_reaches_every_visible_state(bounds: dict, tmp_path: Path) -> None:
    """A partial-order reduction whose priority steps are invisible keeps every reachable value of
    what is visible; so ReducedNext must reach exactly the values of plog, pst, tlog, gc and
    cepoch that Next reaches. (Checked: with the loss of an answer left out of a client's priority
    steps, ReducedNext misses 132 of them in the first bounds.)"""
    base = REGISTRY.select(["kafka_tv1_safe"])[0]
    model = attrs.evolve(base, task=attrs.evolve(base.task, constants=dict(base.task.constants, **bounds)))
    full = visible_values(model, "Next", tmp_path / "full")
    reduced = visible_values(model, "ReducedNext", tmp_path / "reduced")
    assert len(full) > 50
    assert reduced == full, f"only under Next: {len(full - reduced)}, only under ReducedNext: {len(reduced - full)}"


def test_a_reduction_that_loses_states_fails_its_pin(tmp_path: Path) -> None:
    """The pins are what catches a reduction gone wrong: the same model with a view that forgets
    which partitions are held (so TLC merges states that differ) still holds every invariant, and
    only the pinned count of distinct states says that it stopped reaching states."""
    model = next(m for m in KAFKA if m.name == "kafka_tv2_hanging")
    spec = tmp_path / "spec"
    spec.mkdir()
    for module in model.task.spec_file.parent.glob("*.tla"):
        (spec / module.name).write_text(module.read_text())
    mc = spec / model.task.spec_file.name
    text = mc.read_text()
    found = re.search(r"^ReducedView ==(.*?), held, lag, gc, faultVars>>$", text, flags=re.S | re.M)
    assert found, "ReducedView's definition moved: update this test"
    lossy = f"LossyView =={found.group(1)}, lag, gc, faultVars>>\n\n"
    end = re.search(r"^={4,}\s*$", text, flags=re.M)
    assert end
    mc.write_text(text[:end.start()] + lossy + text[end.start():])
    lossy_model = with_view(attrs.evolve(model, task=attrs.evolve(model.task, spec_file=mc)), "LossyView")
    result = run_task("tlc", lossy_model.task, tmp_path / "run")
    assert result.verdict == "holds", result.message
    assert result.distinct_states is not None and model.distinct_states is not None
    assert result.distinct_states < model.distinct_states
    mismatch = lossy_model.pin_mismatch(result)
    assert mismatch is not None and "distinct states where" in mismatch and "are pinned" in mismatch


def test_the_long_cases_name_existing_ones() -> None:
    assert LONG_VIOLATING.issubset(m.name for m in VIOLATING) and LONG_BOUNDS.issubset(SMALL)
