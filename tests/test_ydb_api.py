"""The SDK-shaped API of the YDB engine (ref_impl/ydb/api.py) as an application uses it: a
rollback at any point before the commit (tx.rollback()), the reader reading the rolled-back range
again, a rollback the session refuses while the commit is under way, and a clear error where the
run's constants forbid a rollback; read-only and write-only transactions: a read-only one
commits its batch's offsets with no writer, as an immediate transaction on A's partition
(kqp_data_executer.cpp ImmediateTx, partition.cpp ProcessImmediateTx); a write-only one writes
messages of the application's own with no read, immediate on one partition of B and distributed
(B the only participant) on two; a zombie's read-only commit is ABORTED by the immediate path's
offset check. Each run's trace is accepted by the spec (TLC)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from ref_impl.ydb import api, trace
from ref_impl.ydb.actions import run
from ref_impl.ydb.constants import Constants
from ref_impl.ydb.engine import Engine
from ref_impl.ydb.replay import replay
from ref_impl.ydb.sim import GENERATOR, AppRunner, Faults, Simulation, Workload
from ref_impl.ydb.state import Msg
from trace_check.traces import format as trace_format
from trace_check.traces.options import CheckOptions
from trace_check.traces.reader import read_trace
from trace_check.traces.validation import check_trace
from trace_check.traces.verdicts import Status

App = Callable[[api.Driver, list[Any]], api.App]


def run_app(app: App, workload: str = "copy:workers=1,dst=1,msgs=4,batch=2,txns=4,rollback=true",
            seed: int = 0) -> tuple[Simulation, list[dict[str, Any]], list[Any]]:
    """Run one application on worker w1 (the scheduler's steps interleave as in a simulation);
    returns the simulation, its events and what the application recorded."""
    events: list[dict[str, Any]] = []
    sim = Simulation(Workload.parse(workload), Faults.parse("none"), seed, events.append)
    seen: list[Any] = []
    sim.apps = [AppRunner("w1", app(api.Driver(sim.engine, "w1"), seen))]
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
    v = check_trace(read_trace(path), CheckOptions(engine="tlc"))
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


# --- read-only and write-only transactions ---


def actions(events: list[dict[str, Any]]) -> list[str]:
    return [e["action"] for e in events]


def read_only_twice(driver: api.Driver, seen: list[Any]) -> api.App:
    reader = driver.reader("A")
    for _ in range(2):
        tx = driver.begin_transaction(shape="read")
        batch = yield reader.receive_batch_with_tx(tx, 2)
        seen.append((batch, (yield tx.commit())))


def write_only(count: int, rollback_first: bool = False) -> Any:
    def app(driver: api.Driver, seen: list[Any]) -> api.App:
        if rollback_first:
            tx = driver.begin_transaction(shape="write")
            w = yield driver.tx_writer(tx, "B")
            yield w.write(w.next_message())
            yield tx.rollback()
        tx = driver.begin_transaction(shape="write")
        w = yield driver.tx_writer(tx, "B")
        messages = []
        for _ in range(count):
            messages.append(w.next_message())
            yield w.write(messages[-1])
        seen.append((messages, (yield tx.commit())))

    return app


@pytest.mark.tlc
def test_a_read_only_transaction_commits_its_offsets_immediately_and_writes_nothing(tmp_path: Path) -> None:
    sim, events, seen = run_app(read_only_twice, workload="copy:workers=1,dst=1,msgs=4,batch=2,txns=2,shapes=read")
    (first, r1), (second, r2) = seen
    assert (r1, r2) == ("COMMITTED", "COMMITTED")
    assert first.messages == (Msg(1, 0), Msg(1, 1)) and second.messages == (Msg(1, 2), Msg(1, 3))
    e = sim.engine
    assert e.committed[1] == 4 and all(not e.target[d] for d in e.k.dst_parts)
    # one participant on one partition: no proposal, plan or read sets (KQP's ImmediateTx)
    assert "PqPropose" not in actions(events) and "CoordPlan" not in actions(events)
    assert [(x["tablet"], x["decision"]) for x in events if x["action"] == "PqImmediate"] == [("A", "commit")] * 2
    accepted(tmp_path, sim, events)


@pytest.mark.tlc
@pytest.mark.parametrize(("dst", "path"), [(1, "PqImmediate"), (2, "CoordPlan")])
def test_a_write_only_transaction_publishes_its_own_messages(tmp_path: Path, dst: int, path: str) -> None:
    """With one partition of B the transaction is immediate; with two, distributed with B as the
    only participant (a plan step, no read sets). A rolled-back one before it publishes nothing."""
    sim, events, seen = run_app(write_only(2, rollback_first=True),
                                workload=f"copy:workers=1,dst={dst},msgs=2,batch=2,txns=2,shapes=write,rollback=true")
    [(messages, result)] = seen
    assert result == "COMMITTED"
    e = sim.engine
    assert sorted(m for d in e.k.dst_parts for m in e.target[d]) == sorted(messages) == [Msg(0, 2), Msg(0, 3)]
    assert e.committed[1] == 0, "a write-only transaction commits no offset"
    assert path in actions(events) and "PqReadSet" not in actions(events)
    if dst == 2:
        accepted(tmp_path, sim, events)


def test_a_zombies_read_only_commit_is_aborted_by_the_offset_check() -> None:
    """w1 reads [0, 2) read-only and hangs; w2 takes the partition over, reads and commits the same
    range; w1 resumes and commits: the immediate path finds the committed offset past its begin
    (partition.cpp ProcessImmediateTx: "incorrect offset range (gap)", ABORTED)."""
    events: list[dict[str, Any]] = []
    e = Engine(Constants(workers=("w1", "w2"), msgs_per_src=2, max_txns=2, max_hangs=1, shapes=("read",)),
               owner={1: "w1"}, emit=events.append)

    def commit(w: str, tx: int) -> None:
        for name, arg in (("Flush", w), ("CommitTx", w), ("PqImmediate", ("A", tx)), ("KqpResult", tx)):
            assert run(e, name, arg), f"{name} is not enabled"

    assert run(e, "ReadOnlyBatch", ("w1", 1, 2)) and run(e, "Hang", "w1") and run(e, "TakeOver", ("w2", 1))
    assert run(e, "ReadOnlyBatch", ("w2", 1, 2))
    commit("w2", 2)
    assert run(e, "Resume", "w1")
    commit("w1", 1)
    assert (e.told[1], e.told[2], e.committed[1]) == ("ABORTED", "COMMITTED", 2)
    [zombie] = [x for x in events if x["action"] == "PqImmediate" and x["txn_id"] == 1]
    assert (zombie["decision"], zombie["reason"]) == ("abort", "Conflict")


def test_the_shapes_the_run_does_not_allow_are_refused_in_one_line() -> None:
    def app(driver: api.Driver, seen: list[Any]) -> api.App:
        driver.begin_transaction(shape="write")
        yield from ()

    with pytest.raises(api.IllegalStateError, match=r"Shapes are copy, not 'write'.*--workload copy:shapes=copy\+write"):
        run_app(app, workload="copy:workers=1,txns=1")

    def writes_in_read_only(driver: api.Driver, seen: list[Any]) -> api.App:
        tx = driver.begin_transaction(shape="read")
        yield driver.reader("A").receive_batch_with_tx(tx, 1)
        tx.writer("B")

    with pytest.raises(api.IllegalStateError, match="a read-only transaction writes nothing"):
        run_app(writes_in_read_only, workload="copy:workers=1,txns=1,shapes=read")


@pytest.mark.tlc
def test_a_write_outside_the_transaction_wins_and_the_commit_is_aborted(tmp_path: Path) -> None:
    """YDB's WriteToTopic_Demo_3: the producer writes in a transaction, then outside it; the plain
    write is visible at once, with the SeqNo the transaction holds (the SDK's automatic SeqNo
    continues from the main partition, where the transaction's write is not); the commit is
    ABORTED by the MinSeqNo check. The next transaction of the producer commits."""

    def app(driver: api.Driver, seen: list[Any]) -> api.App:
        for attempt in range(2):
            tx = driver.begin_transaction(shape="write")
            w = yield driver.tx_writer(tx, "B")
            m = w.next_message()
            yield w.write(m)
            plain = (yield driver.write_outside_tx(tx)) if attempt == 0 else None
            try:
                seen.append(([m], plain, (yield tx.commit())))
            except api.TransactionAborted:
                seen.append(([m], plain, "ABORTED"))

    sim, events, seen = run_app(app, workload="copy:workers=1,dst=1,batch=1,txns=2,shapes=write,producers=partition,nontx=1")
    (first, plain, r1), (second, _, r2) = seen
    assert (r1, r2) == ("ABORTED", "COMMITTED")
    assert plain == first[0] == Msg(0, 0), "the plain write took the SeqNo the transaction holds"
    assert sim.engine.target[1] == [plain, second[0]], "the plain write is published, the aborted transaction's is not"
    [aborted] = [x for x in events if x["action"] == "PqImmediate" and x["decision"] == "abort"]
    assert aborted["reason"] == "MinSeqNo"
    accepted(tmp_path, sim, events)


@pytest.mark.tlc
def test_a_write_only_transaction_that_writes_nothing_commits_as_an_empty_one(tmp_path: Path) -> None:
    """The SDK's tx_writer opened and nothing written, then tx.commit(): no topic operation, so
    no participant; KQP answers COMMITTED at once, and B publishes nothing."""

    def app(driver: api.Driver, seen: list[Any]) -> api.App:
        tx = driver.begin_transaction(shape="write")
        yield driver.tx_writer(tx, "B")
        seen.append((yield tx.commit()))

    sim, events, seen = run_app(app, workload="copy:workers=1,dst=1,batch=2,txns=1,shapes=write")
    assert seen == ["COMMITTED"]
    assert actions(events) == ["BeginWrites", "Flush", "CommitTx", "KqpResult"]
    assert sim.engine.target[1] == [] and sim.engine.kqp[1].st == "done"
    accepted(tmp_path, sim, events)


def resend_run(bugs: tuple[str, ...] = ()) -> tuple[Engine, list[dict[str, Any]]]:
    """A write-only transaction of producer 0 writes SeqNo 1 and 2; the first write's
    acknowledgement is lost, which breaks the stream and loses the second write with it; the SDK's
    writer reconnects and sends both again; the commit is immediate on B's one partition."""
    events: list[dict[str, Any]] = []
    e = Engine(Constants(workers=("w1",), msgs_per_src=2, max_txns=1, shapes=("write",), producers="partition",
                         max_reconnects=1, bugs=bugs), emit=events.append)
    assert run(e, "BeginWrites", "w1") and run(e, "TxWrite", "w1") and run(e, "TxWrite", "w1")
    first, _second = sorted(e.net, key=lambda m: m.m.off)
    assert run(e, "PqWriteAckLost", first) and e.net == [] and e.wacked[1] == set()
    assert run(e, "Resend", "w1") and sorted(m.m for m in e.net) == [Msg(0, 0), Msg(0, 1)]
    for m in sorted(e.net, key=lambda m: m.m.off):
        assert run(e, "PqWrite", m)
    for name, arg in (("Flush", "w1"), ("CommitTx", "w1"), ("PqImmediate", ("B", 1)), ("KqpResult", 1)):
        assert run(e, name, arg), f"{name} is not enabled"
    return e, events


@pytest.mark.tlc
def test_a_resent_write_the_partition_has_is_skipped_and_published_once(tmp_path: Path) -> None:
    """partition_write.cpp AnswerCurrentWrites: a SeqNo at or below the SourceId's last one is
    AlreadyWritten and not stored; the SDK reports it as Skipped. Each message is published once."""
    e, events = resend_run()
    writes = [(x["action"], x["offset"]) for x in events if x["action"].startswith("PqWrite")]
    assert writes == [("PqWriteAckLost", 0), ("PqWriteSkipped", 0), ("PqWrite", 1)]
    assert e.told[1] == "COMMITTED" and e.target[1] == [Msg(0, 0), Msg(0, 1)]
    assert replay(e.k.to_spec(), events) is None
    head = trace_format.header("ydb", trace.SPEC_DIR, trace.SPEC_MODULES, e.k.to_spec(), 0, GENERATOR, trace.LOGGED,
                               workload="explicit", faults="reconnects=1", bugs=[])
    from ref_impl.ydb.protocol import PROTOCOL

    trace_format.write_trace(tmp_path / "t.jsonl", head, events, PROTOCOL.columns.order)
    v = check_trace(read_trace(tmp_path / "t.jsonl"), CheckOptions(engine="tlc"))
    assert v.status is Status.ACCEPTED, (v.status, v.at_event, v.reason)


@pytest.mark.tlc
def test_without_deduplication_the_resend_is_published_twice_and_the_trace_is_rejected(tmp_path: Path) -> None:
    e, events = resend_run(bugs=("no_write_dedup",))
    assert e.told[1] == "COMMITTED" and e.target[1] == [Msg(0, 0), Msg(0, 0), Msg(0, 1)]
    head = trace_format.header("ydb", trace.SPEC_DIR, trace.SPEC_MODULES, e.k.to_spec(), 0, GENERATOR, trace.LOGGED,
                               workload="explicit", faults="reconnects=1", bugs=["no_write_dedup"])
    from ref_impl.ydb.protocol import PROTOCOL

    trace_format.write_trace(tmp_path / "t.jsonl", head, events, PROTOCOL.columns.order)
    v = check_trace(read_trace(tmp_path / "t.jsonl"), CheckOptions(engine="tlc"))
    resent = next(i for i, x in enumerate(events, 1) if x["action"] == "PqWrite" and x["offset"] == 0)
    assert v.status is Status.REJECTED and v.at_event == resent, (v.status, v.at_event, v.reason)


def table_race(bugs: tuple[str, ...] = ()) -> tuple[Engine, list[dict[str, Any]]]:
    """Two write-only transactions read and upsert the table's one row, with nothing written to
    the topics (the datashard alone: the immediate path); w1 commits first."""
    events: list[dict[str, Any]] = []
    e = Engine(Constants(workers=("w1", "w2"), max_txns=2, table=True, shapes=("write",), bugs=bugs), emit=events.append)
    for w in ("w1", "w2"):
        assert run(e, "BeginWrites", w)
    for w in ("w1", "w2"):
        assert run(e, "TableWrite", w)
    for w, tx in (("w1", 1), ("w2", 2)):
        for name, arg in (("Flush", w), ("CommitTx", w), ("PqImmediate", ("DS", tx)), ("KqpResult", tx)):
            assert run(e, name, arg), f"{name} is not enabled"
    return e, events


def check_explicit(tmp_path: Path, e: Engine, events: list[dict[str, Any]], bugs: list[str]) -> Any:
    from ref_impl.ydb.protocol import PROTOCOL

    head = trace_format.header("ydb", trace.SPEC_DIR, trace.SPEC_MODULES, e.k.to_spec(), 0, GENERATOR, trace.LOGGED,
                               workload="explicit", faults="none", bugs=bugs)
    trace_format.write_trace(tmp_path / "t.jsonl", head, events, PROTOCOL.columns.order)
    return check_trace(read_trace(tmp_path / "t.jsonl"), CheckOptions(engine="tlc"))


@pytest.mark.tlc
def test_a_committed_write_of_the_row_breaks_the_other_transactions_lock(tmp_path: Path) -> None:
    """Both read version 0 of the row; w1's commit writes version 1, which breaks w2's optimistic
    lock: w2's commit is ABORTED, LocksBroken ("Transaction locks invalidated"). No update is lost."""
    e, events = table_race()
    assert (e.told[1], e.told[2], e.rows) == ("COMMITTED", "ABORTED", [1])
    [second] = [x for x in events if x["action"] == "PqImmediate" and x["txn_id"] == 2]
    assert (second["decision"], second["reason"]) == ("abort", "LocksBroken")
    v = check_explicit(tmp_path, e, events, [])
    assert v.status is Status.ACCEPTED, (v.status, v.at_event, v.reason)


@pytest.mark.tlc
def test_without_the_table_lock_both_commit_and_the_trace_is_rejected_at_the_second(tmp_path: Path) -> None:
    e, events = table_race(bugs=("no_table_lock",))
    assert (e.told[1], e.told[2], e.rows) == ("COMMITTED", "COMMITTED", [1, 2]), "w1's update is lost"
    v = check_explicit(tmp_path, e, events, ["no_table_lock"])
    second = next(i for i, x in enumerate(events, 1) if x["action"] == "PqImmediate" and x["txn_id"] == 2)
    assert v.status is Status.REJECTED and v.at_event == second, (v.status, v.at_event, v.reason)


def test_an_aborted_commit_says_why_as_ydbs_issue_would() -> None:
    """The SDK raises ABORTED with YDB's issue; the API's TransactionAborted carries the
    participant's reason and its meaning: here a write outside the transaction took its SeqNo
    (MinSeqNo), and, in a second run, another transaction's write broke the row's lock."""

    def app(driver: api.Driver, seen: list[Any]) -> api.App:
        tx = driver.begin_transaction(shape="write")
        w = yield driver.tx_writer(tx, "B")
        yield w.write(w.next_message())
        yield driver.write_outside_tx(tx)
        try:
            yield tx.commit()
        except api.TransactionAborted as err:
            seen.append(err)

    _, _, [err] = run_app(app, workload="copy:workers=1,dst=1,batch=1,txns=1,shapes=write,producers=partition,nontx=1")
    assert (err.status, err.reason) == ("ABORTED", "MinSeqNo")
    assert str(err) == ("transaction 1 was aborted (ABORTED): the producer's SeqNo does not move forward: a later write "
                        "of the same producer was published first (MinSeqNo)")
    assert set(api.ABORT_MEANINGS) == set(trace.REASONS) | {"Expired", "Ranges"}, "every reason the trace can give has a meaning"



# --- UpdateOffsetsInTransaction: YDB's TopicService tests (ydb-platform/ydb
# ydb/services/persqueue_v1/ut/topic_service_ut.cpp, TUpdateOffsetsInTransactionFixture), ported.
# Their transaction begins with no read and their topic is empty; here the transaction begins with
# its read (the spec folds BeginTx into it) and the topic holds MsgsPerSrc messages, so "past the
# end" is past those. One consumer, one partition per transaction (the spec's abstraction), so
# DifferentConsumers_TheRangesOverlap and UnknownConsumer/UnknownTopic are not ported.

RANGES = "copy:workers=1,dst=1,msgs=4,batch=3,txns=3,shapes=read,ranges=1"


def named_range(first: int, begin: int, end: int, table: bool = False) -> Any:
    """Read [0, first) in a read-only transaction, name [begin, end) of its own, commit; then the
    reader's next read-only transaction reads and commits what the first left."""

    def app(driver: api.Driver, seen: list[Any]) -> api.App:
        reader = driver.reader("A")
        tx = driver.begin_transaction(shape="read")
        batch = yield reader.receive_batch_with_tx(tx, first)
        seen.append([m.off for m in batch.messages])
        try:
            yield tx.update_offsets_in_transaction(begin, end)
            seen.append("SUCCESS")
            if table:
                yield tx.upsert("rows", {"tx": tx.id})
            seen.append((yield tx.commit()))
        except api.YdbError as err:
            seen.append((err.status, getattr(err, "reason", None)))
        for _ in range(2):  # the reader's next transaction; once more if it conflicts
            tx = driver.begin_transaction(shape="read")
            batch = yield reader.receive_batch_with_tx(tx, 3)
            try:
                seen.append(([m.off for m in batch.messages], (yield tx.commit())))
                return
            except api.TransactionAborted as err:
                seen.append(([m.off for m in batch.messages], err.reason))

    return app


@pytest.mark.tlc
def test_update_offsets_a_range_that_intersects_the_transactions_is_bad_request(tmp_path: Path) -> None:
    """OneConsumer_TheRangesOverlap: a second range of the same consumer and partition that
    intersects the first is BAD_REQUEST ("offset ranges intersect", kqp_topics.cpp), and KQP
    invalidates the transaction (ReplyQueryError): nothing commits, the reader reads from 0 again."""
    sim, events, seen = run_app(named_range(2, 1, 3), workload=RANGES)
    assert seen == [[0, 1], ("BAD_REQUEST", None), ([0, 1, 2], "COMMITTED")]
    upd = next(x for x in events if x["action"] == "UpdateOffsets")
    assert (upd["offsets_begin"], upd["offsets_end"], upd["result"], upd["kqp_state"]) == (1, 3, "BAD_REQUEST", "done")
    assert sim.engine.told[1] == "BAD_REQUEST" and sim.engine.committed[1] == 3
    accepted(tmp_path, sim, events)


@pytest.mark.tlc
def test_update_offsets_ranges_that_do_not_overlap_join_and_commit(tmp_path: Path) -> None:
    """OneConsumer_TheRangesDoNotOverlap: a range next to the read's is SUCCESS; the two are one
    interval, KQP sends [0, 3), and the immediate path commits it. The reader itself read only
    [0, 1): its next transaction reads from 1 and conflicts with the committed offset (ABORTED),
    and the retry reads from 3."""
    sim, events, seen = run_app(named_range(1, 1, 3), workload=RANGES)
    assert seen == [[0], "SUCCESS", "COMMITTED", ([1, 2, 3], "Conflict"), ([3], "COMMITTED")]
    assert sim.engine.kqp[1].named == {0, 1, 2} and (sim.engine.kqp[1].b, sim.engine.kqp[1].e) == (0, 3)
    accepted(tmp_path, sim, events)


@pytest.mark.tlc
def test_update_offsets_ranges_with_a_gap_are_aborted_by_kqp_itself(tmp_path: Path) -> None:
    """ThereAreGapsInTheOffsetRanges: [0, 1) and [2, 4) are SUCCESS one by one, but not one interval:
    the commit is ABORTED by KQP before any participant ("Incorrect offset ranges in the
    transaction", kqp_session_actor.cpp CheckTopicOperations); offset 1 is never committed."""
    sim, events, seen = run_app(named_range(1, 2, 4), workload=RANGES)
    assert seen == [[0], "SUCCESS", ("ABORTED", "Ranges"), ([0, 1, 2], "COMMITTED")]
    first = [x["action"] for x in events if x.get("txn_id") == 1]
    assert first == ["ReadOnlyBatch", "UpdateOffsets", "Flush", "CommitTx", "KqpResult"], "no participant is asked"
    accepted(tmp_path, sim, events)


@pytest.mark.tlc
def test_update_offsets_past_the_end_is_bad_request_on_the_immediate_path(tmp_path: Path) -> None:
    """OnePartitionAndNoGapsInTheOffsets: the ranges are one interval that ends past the
    partition's end; one partition, so KQP's immediate path, where the partition answers
    BAD_REQUEST ("incorrect offset range (commit to the future)", partition.cpp ProcessImmediateTx)."""
    sim, events, seen = run_app(named_range(2, 2, 5), workload=RANGES)
    assert seen == [[0, 1], "SUCCESS", ("BAD_REQUEST", None), ([0, 1, 2], "COMMITTED")]
    assert [x["result"] for x in events if x["action"] == "KqpResult"] == ["BAD_REQUEST", "COMMITTED"]
    accepted(tmp_path, sim, events)


@pytest.mark.tlc
def test_update_offsets_past_the_end_is_aborted_on_the_distributed_path(tmp_path: Path) -> None:
    """MultiplePartitionsAndNoGapsInTheOffsets: with a second participant (there a second
    partition, here the table's row) the transaction is distributed, and the partition's predicate
    fails at CALCULATING ("BehindEnd"): ABORTED, not BAD_REQUEST."""
    sim, events, seen = run_app(named_range(2, 2, 5, table=True), workload=RANGES + ",table=true")
    assert seen == [[0, 1], "SUCCESS", ("ABORTED", "BehindEnd"), ([0, 1, 2], "COMMITTED")]
    calc = next(x for x in events if x["action"] == "PqCalc" and x["tablet"] == "A" and x["txn_id"] == 1)
    assert (calc["decision"], calc["reason"]) == ("abort", "BehindEnd")
    accepted(tmp_path, sim, events)


def test_update_offsets_without_the_gap_check_commits_what_was_never_processed(tmp_path: Path) -> None:
    """The bug range_gap_accepted: KQP sends [0, 4) for [0, 1) and [2, 4), the partition commits
    it, and offset 1, never processed, is consumed: the checker rejects the trace at the commit."""
    events: list[dict[str, Any]] = []
    e = Engine(Constants(workers=("w1",), msgs_per_src=4, batch_max=3, max_txns=1, shapes=("read",), max_ranges=1,
                         bugs=("range_gap_accepted",)), emit=events.append)
    for name, arg in (("ReadOnlyBatch", ("w1", 1, 1)), ("UpdateOffsets", ("w1", 2, 4)), ("Flush", "w1"),
                      ("CommitTx", "w1"), ("PqImmediate", ("A", 1)), ("KqpResult", 1)):
        assert run(e, name, arg), f"{name} is not enabled"
    assert (e.told[1], e.committed[1], e.kqp[1].named) == ("COMMITTED", 4, {0, 2, 3})
    v = check_explicit(tmp_path, e, events, ["range_gap_accepted"])
    assert v.status is Status.REJECTED and events[v.at_event - 1]["action"] == "CommitTx", (v.status, v.at_event)


def test_update_offsets_is_refused_where_the_run_cannot_express_it() -> None:
    e = Engine(Constants(workers=("w1",), shapes=("read", "copy")))
    driver = api.Driver(e, "w1")
    with pytest.raises(api.IllegalStateError, match="read-only"):
        driver.begin_transaction("copy").update_offsets_in_transaction(0, 1)
    assert run(e, "ReadOnlyBatch", ("w1", 1, 1))
    tx = driver.begin_transaction("read")
    tx.id = e.cl["w1"].tx
    with pytest.raises(api.IllegalStateError, match="MaxRanges"):
        tx.update_offsets_in_transaction(1, 2)


# --- several reads in one transaction (ReadMore) ---


@pytest.mark.tlc
def test_two_reads_in_one_read_only_transaction_commit_as_one_range(tmp_path: Path) -> None:
    """The Python SDK's TestTopicTransactionalReader::test_commit: receive_batch_with_tx twice
    (max_messages=1) in one transaction reads "123" then "456"; the commit names [0, 2), and a new
    reader's first message is "789" (offset 2)."""

    def app(driver: api.Driver, seen: list[Any]) -> api.App:
        reader = driver.reader("A")
        tx = driver.begin_transaction(shape="read")
        for _ in range(2):
            batch = yield reader.receive_batch_with_tx(tx, 1)
            seen.append([m.off for m in batch.messages])
        seen.append((yield tx.commit()))
        tx = driver.begin_transaction(shape="read")
        batch = yield reader.receive_batch_with_tx(tx, 1)
        seen.append([m.off for m in batch.messages])

    sim, events, seen = run_app(app, workload="copy:workers=1,dst=1,msgs=3,batch=1,txns=2,shapes=read,reads=2")
    assert seen == [[0], [1], "COMMITTED", [2]]
    assert [x["action"] for x in events if x.get("txn_id") == 1][:2] == ["ReadOnlyBatch", "ReadMore"]
    assert sim.engine.committed[1] == 2
    accepted(tmp_path, sim, events)


@pytest.mark.tlc
def test_a_copy_transaction_reads_after_its_writes_and_b_keeps_the_order(tmp_path: Path) -> None:
    """Read [0, 1), write it, read [1, 3), write those, commit: B holds 0, 1, 2 in order and
    the committed offset is 3. A transaction's reads and writes interleave."""

    def app(driver: api.Driver, seen: list[Any]) -> api.App:
        reader = driver.reader("A")
        tx = driver.begin_transaction()
        batch = yield reader.receive_batch_with_tx(tx, 1)
        writer = tx.writer("B")
        for m in batch.messages:
            yield writer.write(m)
        batch = yield reader.receive_batch_with_tx(tx, 2)
        for m in batch.messages:
            yield writer.write(m)
        seen.append((yield tx.commit()))

    sim, events, seen = run_app(app, workload="copy:workers=1,dst=1,msgs=3,batch=2,txns=1,reads=2")
    assert seen == ["COMMITTED"]
    assert [x["action"] for x in events if x["action"] in ("ReadBatch", "ReadMore", "TxWrite")] == [
        "ReadBatch", "TxWrite", "ReadMore", "TxWrite", "TxWrite"]
    assert [m.off for m in sim.engine.target[1]] == [0, 1, 2] and sim.engine.committed[1] == 3
    accepted(tmp_path, sim, events)


def test_a_read_beyond_the_runs_reads_is_refused_with_the_fix() -> None:
    e = Engine(Constants(workers=("w1",), shapes=("read",)))
    driver = api.Driver(e, "w1")
    assert run(e, "ReadOnlyBatch", ("w1", 1, 1))
    tx = driver.begin_transaction("read")
    tx.id = e.cl["w1"].tx
    with pytest.raises(api.IllegalStateError, match="MaxReads"):
        driver.reader("A").receive_batch_with_tx(tx, 1)
