"""The SDK-shaped API of the YDB engine (ref_impl/ydb/api.py) as an application uses it: a
rollback at any point before the commit (tx.rollback()), the reader reading the rolled-back range
again, a rollback the session refuses while the commit is under way, and a clear error where the
run's constants forbid a rollback. Each run's trace is accepted by the spec (TLC)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from ref_impl.ydb import api, trace
from ref_impl.ydb.replay import replay
from ref_impl.ydb.sim import GENERATOR, AppRunner, Faults, Simulation, Workload
from trace_check.traces import format as trace_format
from trace_check.traces.reader import read_trace
from trace_check.traces.validation import check_trace
from trace_check.traces.verdicts import Status

App = Callable[[api.Driver], api.App]


def run_app(app: App, workload: str = "copy:workers=1,dst=1,msgs=4,batch=2,txns=4,rollback=true",
            seed: int = 0) -> tuple[Simulation, list[dict[str, Any]], list[Any]]:
    """Run one application on worker w1 (the scheduler's steps interleave as in a simulation);
    returns the simulation, its events and what the application recorded."""
    events: list[dict[str, Any]] = []
    sim = Simulation(Workload.parse(workload), Faults.parse("none"), seed, events.append)
    seen: list[Any] = []
    sim.apps = [AppRunner("w1", app(api.Driver(sim.engine, "w1"), seen))]  # type: ignore[call-arg]
    sim.run()
    assert sim.apps[0].finished, "the application did not finish: a call never returned"
    assert replay(sim.k.to_spec(), events) is None, "the engine does not replay its own run"
    return sim, events, seen


def accepted(tmp_path: Path, sim: Simulation, events: list[dict[str, Any]]) -> None:
    head = trace_format.header("ydb", trace.SPEC_DIR, trace.SPEC_MODULES, sim.k.to_spec(), 0, GENERATOR, trace.LOGGED,
                               workload=sim.w.describe(), faults="none", bugs=[])
    path = tmp_path / "run.jsonl"
    from ref_impl.ydb.protocol import PROTOCOL
    from trace_check.traces.format import write_trace

    write_trace(path, head, events, PROTOCOL.columns.order)
    v = check_trace(read_trace(path), engine="tlc")
    assert v.status is Status.ACCEPTED, (v.status, v.at_event, v.reason, v.message)


def rollback_at(where: str) -> Callable[..., api.App]:
    """Read a batch, roll back at ``where`` (after the read, after one write, after the flush),
    then read again in a new transaction and commit it."""

    def app(driver: api.Driver, seen: list[Any]) -> api.App:
        reader = driver.reader("A")
        tx = driver.begin_transaction()
        first = yield reader.receive_batch_with_tx(tx, 2)
        writer = tx.writer("B")
        if where in ("write", "flush"):
            yield writer.write(first.messages[0])
        if where == "flush":
            for m in first.messages[1:]:
                yield writer.write(m)
            yield writer.flush()
        yield tx.rollback()
        tx2 = driver.begin_transaction()
        again = yield reader.receive_batch_with_tx(tx2, 2)
        w2 = tx2.writer("B")
        for m in again.messages:
            yield w2.write(m)
        seen.append((first, again, (yield tx2.commit())))

    return app


@pytest.mark.tlc
@pytest.mark.parametrize("where", ["read", "write", "flush"])
def test_a_rollback_at_any_point_publishes_nothing_and_the_range_is_read_again(tmp_path: Path, where: str) -> None:
    sim, events, seen = run_app(rollback_at(where))
    [(first, again, result)] = seen
    assert result == "COMMITTED"
    assert again.messages[0] == first.messages[0], "after a rollback the reader starts again at the committed offset"
    rolled = [e for e in events if e["action"] == "RollbackTx"]
    assert [e["txn_id"] for e in rolled] == [first.tx_id]
    e = sim.engine
    published = [m for d in e.k.dst_parts for m in e.target[d]]
    assert published == list(again.messages), "only the committed transaction's writes are visible"
    assert e.told[first.tx_id] == "ABORTED"
    accepted(tmp_path, sim, events)


def test_without_rollbacks_in_the_constants_a_rollback_is_refused_at_once() -> None:
    def app(driver: api.Driver, seen: list[Any]) -> api.App:
        tx = driver.begin_transaction()
        yield driver.reader("A").receive_batch_with_tx(tx, 1)
        yield tx.rollback()

    # the error comes as the call is made: nothing waits for a step that can never come
    with pytest.raises(api.IllegalStateError, match=r"\(Rollbacks is false\); make the engine with Constants\(rollbacks=True\)"):
        run_app(app, workload="copy:workers=1,msgs=2,batch=1,txns=1")


def test_a_rollback_while_the_commit_is_under_way_is_refused_and_the_commit_stands(tmp_path: Path) -> None:
    def app(driver: api.Driver, seen: list[Any]) -> api.App:
        reader = driver.reader("A")
        for _ in range(3):
            tx = driver.begin_transaction()
            batch = yield reader.receive_batch_with_tx(tx, 2)
            w = tx.writer("B")
            for m in batch.messages:
                yield w.write(m)
            seen.append((yield tx.commit(rollback_meanwhile=True)))

    _, events, seen = run_app(app, workload="copy:workers=1,dst=1,msgs=6,batch=2,txns=3")
    assert seen == ["COMMITTED"] * 3
    assert not [e for e in events if e["action"] == "RollbackTx"], "the correct session refuses the rollback"
