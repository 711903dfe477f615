"""Reads outside a transaction and their offset commits (YdbTopics PlainRead and CommitOffset,
[ocommit]): the engine's three answers, the wait for a transaction calculated on the partition,
the API's receive_batch / commit / commit_with_ack, a generated run, and the trace checker on
each, with the bugs ``commit_dead_session`` and ``commit_unblocked`` rejected where they show."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from test_ydb_api import run_app

from ref_impl.ydb import api, trace
from ref_impl.ydb.actions import run
from ref_impl.ydb.constants import Constants
from ref_impl.ydb.engine import Engine
from ref_impl.ydb.protocol import PROTOCOL
from ref_impl.ydb.replay import replay
from ref_impl.ydb.sim import GENERATOR, Faults, Simulation, Workload
from ref_impl.ydb.state import Msg
from trace_check.traces import format as trace_format
from trace_check.traces.options import CheckOptions
from trace_check.traces.reader import read_trace
from trace_check.traces.validation import check_trace
from trace_check.traces.verdicts import Status


def engine(bugs: tuple[str, ...] = (), **kw: Any) -> tuple[Engine, list[dict[str, Any]]]:
    events: list[dict[str, Any]] = []
    k = Constants(**{"workers": ("w1", "w2"), "msgs_per_src": 2, "max_txns": 1, "max_plain_commits": 2,
                     "max_hangs": 1, "bugs": bugs, **kw})
    return Engine(k, owner={1: "w1"}, emit=events.append), events


def verdict(tmp_path: Path, e: Engine, events: list[dict[str, Any]]) -> Any:
    if not e.k.bugs:  # a buggy run is checked against the correct protocol, which cannot replay it
        assert replay(e.k.to_spec(), events) is None, "the engine does not replay its own run"
    head = trace_format.header("ydb", trace.SPEC_DIR, trace.SPEC_MODULES, e.k.to_spec(), 0, GENERATOR, trace.LOGGED,
                               workload="explicit", faults="hangs=1", bugs=[])
    trace_format.write_trace(tmp_path / "t.jsonl", head, events, PROTOCOL.columns.order)
    return check_trace(read_trace(tmp_path / "t.jsonl"), CheckOptions(engine="tlc"))


def zombie_commit(bugs: tuple[str, ...] = ()) -> tuple[Engine, list[dict[str, Any]]]:
    """w1 reads [0, 2) outside a transaction and hangs before its commit; the group gives the
    partition to w2, which reads [0, 1) and commits it; w1 resumes and commits [0, 2)."""
    e, events = engine(bugs)
    assert run(e, "PlainRead", ("w1", 1, 2)) and run(e, "Hang", "w1") and run(e, "TakeOver", ("w2", 1))
    assert run(e, "PlainRead", ("w2", 1, 1)) and run(e, "CommitOffset", "w2")
    assert run(e, "Resume", "w1") and run(e, "CommitOffset", "w1")
    return e, events


@pytest.mark.tlc
def test_a_zombies_commit_outside_a_transaction_is_refused_in_its_dead_session(tmp_path: Path) -> None:
    """partition.cpp CommitUserAct: a commit in a read session that is no longer the partition's
    is WRONG_COOKIE ("set offset in already dead session"): the offset stays where the live
    reader put it, and the partition's new reader reads message 1 next."""
    e, events = zombie_commit()
    assert [x["action"] for x in events if x["action"].startswith("CommitOffset")] == ["CommitOffset", "CommitOffsetRefused"]
    assert e.committed[1] == 1 and e.read_begin("w2", 1) == 1
    assert verdict(tmp_path, e, events).status is Status.ACCEPTED


@pytest.mark.tlc
def test_a_commit_in_a_dead_session_that_applies_is_rejected_at_that_commit(tmp_path: Path) -> None:
    e, events = zombie_commit(bugs=("commit_dead_session",))
    assert e.committed[1] == 2  # the zombie's [0, 2): message 0 was consumed by w2 too
    v = verdict(tmp_path, e, events)
    assert (v.status, v.at_event) == (Status.REJECTED, len(events)), (v.status, v.at_event, v.reason)


def zombie_txn_then_commit(bugs: tuple[str, ...] = ()) -> tuple[Engine, list[dict[str, Any]], bool]:
    """w1's copy transaction reads [0, 1), writes it and is calculated on both tablets; w1 hangs;
    w2 takes the partition over and reads [0, 2) outside a transaction. Whether w2's commit is
    enabled while the transaction is calculated and not yet executed on A; then everything runs
    to its end."""
    e, events = engine(bugs, batch_max=2)
    assert run(e, "ReadBatch", ("w1", 1, 1)) and run(e, "TxWrite", "w1")
    [w] = e.net
    for name, arg in (("PqWrite", w), ("Flush", "w1"), ("CommitTx", "w1"), ("PqPropose", ("A", 1)),
                      ("PqPropose", ("B", 1)), ("CoordPlan", 1), ("PqPlanStep", "A"), ("PqCalc", ("A", 1)),
                      ("Hang", "w1"), ("TakeOver", ("w2", 1)), ("PlainRead", ("w2", 1, 2))):
        assert run(e, name, arg), f"{name} is not enabled"
    blocked = not run(e, "CommitOffset", "w2")
    for name, arg in (("PqPlanStep", "B"), ("PqCalc", ("B", 1))):
        assert run(e, name, arg), f"{name} is not enabled"
    while e.net:
        assert run(e, "PqReadSet", e.net[0]) or run(e, "PqReadSetAck", e.net[0])
    for name, arg in (("PqExecute", ("A", 1)), ("PartitionApply", ("A", 1, 1)), ("PqExecute", ("B", 1)),
                      ("PartitionApply", ("B", 1, 1)), ("PqTxDone", ("A", 1))):
        assert run(e, name, arg), f"{name} is not enabled"
    if blocked:
        assert run(e, "CommitOffset", "w2")
    return e, events, blocked


@pytest.mark.tlc
def test_a_commit_waits_for_a_transaction_calculated_on_the_partition_and_consumes_again(tmp_path: Path) -> None:
    """partition.cpp PreProcessUserAct: a commit outside a transaction is Blocked while a
    transaction of the consumer is between predicate and persist (TxAffectedConsumers). It then
    moves the offset past the zombie's range without checking where its batch began: message 0 is
    in B (the zombie's copy) and was consumed by w2 too. YDB's at least once, outside a
    transaction; the trace is a behaviour of the spec (whose ExactlyOnce this run violates, as the
    model ydb_plain_commit_duplicates pins)."""
    e, events, blocked = zombie_txn_then_commit()
    assert blocked and e.committed[1] == 2 and e.target[1] == [Msg(1, 0)] and not e.range_bad
    assert ("w2", 1, 0, 2, "ok") in e.plain_commits
    v = verdict(tmp_path, e, events)
    assert v.status is not Status.REJECTED, (v.status, v.at_event, v.reason)


@pytest.mark.tlc
def test_a_commit_that_passes_a_calculated_transaction_is_rejected(tmp_path: Path) -> None:
    e, events, blocked = zombie_txn_then_commit(bugs=("commit_unblocked",))
    assert not blocked and e.range_bad  # the transaction then applied [0, 1) at offset 2
    commit = next(i for i, x in enumerate(events, 1) if x["action"] == "CommitOffset")
    v = verdict(tmp_path, e, events)
    assert (v.status, v.at_event) == (Status.REJECTED, commit), (v.status, v.at_event, v.reason)


def test_a_commit_at_or_below_the_committed_offset_is_stale_and_moves_nothing() -> None:
    """CommitUserAct: "this is stale request, answer ok for it"."""
    e, events = engine()
    assert run(e, "PlainRead", ("w1", 1, 1)) and run(e, "Hang", "w1") and run(e, "TakeOver", ("w2", 1))
    assert run(e, "Resume", "w1") and run(e, "TakeOver", ("w1", 1)) is False  # w2 is not hung
    e.committed[1] = 1  # as if a transaction of the partition's reader had committed [0, 1)
    e.owner[1] = "w1"
    assert run(e, "CommitOffset", "w1") and events[-1]["action"] == "CommitOffsetStale" and e.committed[1] == 1


# --- the API: receive_batch, commit, commit_with_ack ---


def plain_then_tx(driver: api.Driver, seen: list[Any]) -> api.App:
    reader = driver.reader()
    batch = yield reader.receive_batch(1)
    seen.append(batch)
    yield reader.commit_with_ack(batch)
    tx = driver.begin_transaction("read")
    seen.append((yield reader.receive_batch_with_tx(tx, 2)))
    seen.append((yield tx.commit()))


@pytest.mark.tlc
def test_a_batch_committed_outside_a_transaction_is_not_read_again_by_the_next_one(tmp_path: Path) -> None:
    sim, events, seen = run_app(plain_then_tx, "copy:workers=1,dst=1,msgs=3,batch=2,txns=1,shapes=read,commits=1")
    plain, in_tx, result = seen
    assert plain == api.Batch(0, 1, (Msg(1, 0),)) and in_tx.messages == (Msg(1, 1), Msg(1, 2))
    assert result == "COMMITTED" and sim.engine.committed[1] == 3
    v = verdict(tmp_path, sim.engine, events)
    assert v.status is Status.ACCEPTED, (v.status, v.at_event, v.reason)


def test_a_batch_read_in_a_transaction_cannot_be_committed_by_the_reader() -> None:
    """TxUsage Offsets_Cannot_Be_Promoted_When_Reading_In_A_Transaction: the C++ SDK throws when
    the application commits a batch it read in a transaction."""
    def app(driver: api.Driver, seen: list[Any]) -> api.App:
        reader = driver.reader()
        tx = driver.begin_transaction("read")
        batch = yield reader.receive_batch_with_tx(tx, 1)
        with pytest.raises(api.IllegalStateError, match="offsets cannot be promoted when reading in a transaction"):
            reader.commit(batch)
        seen.append((yield tx.commit()))

    _sim, _events, seen = run_app(app, "copy:workers=1,dst=1,msgs=2,batch=1,txns=1,shapes=read,commits=1")
    assert seen == ["COMMITTED"]


def test_receive_batch_beyond_the_runs_budget_is_refused_with_the_fix() -> None:
    e, _events = engine(max_plain_commits=0)
    with pytest.raises(api.IllegalStateError, match=r"MaxPlainCommits.*commits=N"):
        api.Driver(e, "w1").reader().receive_batch(1)


def test_commit_with_ack_of_a_zombie_raises_partition_expired() -> None:
    e, _events = engine()
    d1, d2 = api.Driver(e, "w1"), api.Driver(e, "w2")
    r1 = d1.reader()
    call = r1.receive_batch(2)
    assert run(e, *call.next_step())  # type: ignore[misc]
    batch = call.outcome()
    assert run(e, "Hang", "w1") and run(e, "TakeOver", ("w2", 1)) and run(e, "Resume", "w1")
    ack = r1.commit_with_ack(batch)
    assert run(e, *ack.next_step())  # type: ignore[misc]
    with pytest.raises(api.PartitionExpired):
        ack.outcome()
    assert e.committed[1] == 0 and d2.reader().has_messages()


# --- generated runs ---


@pytest.mark.tlc
@pytest.mark.parametrize("seed", [0, 6])
def test_generated_runs_with_commits_outside_transactions_are_accepted(tmp_path: Path, seed: int) -> None:
    """Without a zombie (no hang), reads outside transactions beside copy and read-only ones."""
    events: list[dict[str, Any]] = []
    sim = Simulation(Workload.parse("copy:msgs=6,txns=4,shapes=copy+read,commits=3,rollback=true"), Faults.parse("none"),
                     seed, events.append)
    sim.run()
    assert sum(x["action"] == "CommitOffset" for x in events) >= 2
    v = verdict(tmp_path, sim.engine, events)
    assert v.status is Status.ACCEPTED, (v.status, v.at_event, v.reason)
