"""The Python SDK's topic-transaction tests (ydb-platform/ydb-python-sdk
tests/topics/test_topic_transactions.py), ported line by line to the SDK-shaped API
(ref_impl/ydb/sdk.py): ``await`` becomes ``yield``, a callee is a generator, the transaction's
shape is named when it begins, and a message is the spec's (offset 0 is the SDK test's "123",
offset 1 "456", offset 2 "789"). Each run's trace is accepted by `txconform check` (TLC)."""

from __future__ import annotations

from collections.abc import Callable, Generator
from pathlib import Path
from typing import Any

import pytest

from ref_impl.ydb import api, sdk, trace
from ref_impl.ydb.protocol import PROTOCOL
from ref_impl.ydb.replay import replay
from ref_impl.ydb.sim import GENERATOR, AppRunner, Faults, Simulation, Workload
from ref_impl.ydb.state import Msg
from trace_check.traces import format as trace_format
from trace_check.traces.options import CheckOptions
from trace_check.traces.reader import read_trace
from trace_check.traces.validation import check_trace
from trace_check.traces.verdicts import Status

DEFAULT_RETRY_SETTINGS = sdk.RetrySettings(max_retries=1)
READER = "copy:workers=1,dst=1,msgs=3,batch=1,txns=4,shapes=read,reads=2,rollback=true"
WRITER = "copy:workers=1,dst=1,batch=1,txns=3,shapes=write,rollback=true"

Test = Callable[[sdk.Driver, list[Any]], api.App]


def run(test: Test, workload: str, tmp_path: Path) -> tuple[Simulation, list[Any]]:
    """Run the ported test as worker w1's application; its trace must be accepted."""
    events: list[dict[str, Any]] = []
    sim = Simulation(Workload.parse(workload), Faults.parse("none"), 0, events.append)
    seen: list[Any] = []
    sim.apps = [AppRunner("w1", test(sdk.Driver(sim.engine, "w1"), seen))]
    sim.run()
    assert sim.apps[0].finished, "the test did not finish: a call never returned"
    assert replay(sim.k.to_spec(), events) is None
    head = trace_format.header("ydb", trace.SPEC_DIR, trace.SPEC_MODULES, sim.k.to_spec(), 0, GENERATOR, trace.LOGGED,
                               workload=sim.w.describe(), faults="none", bugs=[])
    trace_format.write_trace(tmp_path / "t.jsonl", head, events, PROTOCOL.columns.order)
    v = check_trace(read_trace(tmp_path / "t.jsonl"), CheckOptions(engine="tlc"))
    assert v.status is Status.ACCEPTED, (v.status, v.at_event, v.reason)
    return sim, seen


def offsets(batch: api.Batch) -> list[int]:
    return [m.off for m in batch.messages]


def first_message(driver: sdk.Driver, reader: api.TopicReader) -> Generator[api.Call, Any, list[int]]:
    """What a reader reads first now (the SDK tests' receive_message after the transaction)."""
    tx = driver.begin_transaction("read")
    return offsets((yield reader.receive_batch_with_tx(tx, max_messages=1)))


# --- TestTopicTransactionalReader ---


@pytest.mark.tlc
def test_reader_commit(tmp_path: Path) -> None:
    def test(driver: sdk.Driver, seen: list[Any]) -> api.App:
        pool = sdk.QuerySessionPool(driver)
        reader = driver.topic_client.reader("A", "c")

        def callee(tx: api.Tx) -> api.App:
            batch = yield reader.receive_batch_with_tx(tx, max_messages=1)
            assert offsets(batch) == [0]  # "123"
            batch = yield reader.receive_batch_with_tx(tx, max_messages=1)
            assert offsets(batch) == [1]  # "456"

        yield from pool.retry_tx_sync(callee, retry_settings=DEFAULT_RETRY_SETTINGS, shape="read")
        seen.append((yield from first_message(driver, reader)))

    sim, seen = run(test, READER, tmp_path)
    assert seen == [[2]]  # "789"
    assert sim.engine.told[1] == "COMMITTED"


@pytest.mark.tlc
def test_reader_rollback(tmp_path: Path) -> None:
    def test(driver: sdk.Driver, seen: list[Any]) -> api.App:
        pool = sdk.QuerySessionPool(driver)
        reader = driver.topic_client.reader("A", "c")

        def callee(tx: api.Tx) -> api.App:
            batch = yield reader.receive_batch_with_tx(tx, max_messages=1)
            assert offsets(batch) == [0]
            yield tx.rollback()

        yield from pool.retry_tx_sync(callee, retry_settings=DEFAULT_RETRY_SETTINGS, shape="read")
        seen.append((yield from first_message(driver, reader)))

    _, seen = run(test, READER, tmp_path)
    assert seen == [[0]]  # "123" again


@pytest.mark.tlc
def test_reader_error_in_lambda(tmp_path: Path) -> None:
    def test(driver: sdk.Driver, seen: list[Any]) -> api.App:
        pool = sdk.QuerySessionPool(driver)
        reader = driver.topic_client.reader("A", "c")

        def callee(tx: api.Tx) -> api.App:
            batch = yield reader.receive_batch_with_tx(tx, max_messages=1)
            assert offsets(batch) == [0]
            raise RuntimeError("Something went wrong")

        with pytest.raises(RuntimeError):
            yield from pool.retry_tx_sync(callee, retry_settings=DEFAULT_RETRY_SETTINGS, shape="read")
        seen.append((yield from first_message(driver, reader)))

    sim, seen = run(test, READER, tmp_path)
    assert seen == [[0]]
    assert sim.engine.told[1] == "ABORTED", "the pool rolled the transaction back"


# --- TestTopicTransactionalWriter ---


@pytest.mark.tlc
def test_writer_commit(tmp_path: Path) -> None:
    def test(driver: sdk.Driver, seen: list[Any]) -> api.App:
        pool = sdk.QuerySessionPool(driver)

        def callee(tx: api.Tx) -> api.App:
            tx_writer = yield driver.topic_client.tx_writer(tx, "B")
            yield tx_writer.write(sdk.TopicWriterMessage(data=b"123"))

        yield from pool.retry_tx_sync(callee, retry_settings=DEFAULT_RETRY_SETTINGS, shape="write")

    sim, _ = run(test, WRITER, tmp_path)
    assert sim.engine.target[1] == [Msg(0, 0)]  # "123", the producer's SeqNo 1


@pytest.mark.tlc
def test_writer_rollback(tmp_path: Path) -> None:
    def test(driver: sdk.Driver, seen: list[Any]) -> api.App:
        pool = sdk.QuerySessionPool(driver)

        def callee(tx: api.Tx) -> api.App:
            tx_writer = yield driver.topic_client.tx_writer(tx, "B")
            yield tx_writer.write(sdk.TopicWriterMessage(data=b"123"))
            yield tx.rollback()

        yield from pool.retry_tx_sync(callee, retry_settings=DEFAULT_RETRY_SETTINGS, shape="write")

    sim, _ = run(test, WRITER, tmp_path)
    assert sim.engine.target[1] == []


@pytest.mark.tlc
def test_writer_no_msg_written_in_error_case(tmp_path: Path) -> None:
    def test(driver: sdk.Driver, seen: list[Any]) -> api.App:
        pool = sdk.QuerySessionPool(driver)

        def callee(tx: api.Tx) -> api.App:
            tx_writer = yield driver.topic_client.tx_writer(tx, "B")
            yield tx_writer.write(sdk.TopicWriterMessage(data=b"123"))
            raise BaseException("error")

        with pytest.raises(BaseException, match="error"):
            yield from pool.retry_tx_sync(callee, retry_settings=DEFAULT_RETRY_SETTINGS, shape="write")

    sim, _ = run(test, WRITER, tmp_path)
    assert sim.engine.target[1] == []


@pytest.mark.tlc
def test_writer_writes_do_not_conflict_with_executes(tmp_path: Path) -> None:
    """test_writes_do_not_conflict_with_executes: writes and a query in one transaction (here
    the table's row), committed together."""

    def test(driver: sdk.Driver, seen: list[Any]) -> api.App:
        pool = sdk.QuerySessionPool(driver)

        def callee(tx: api.Tx) -> api.App:
            tx_writer = yield driver.topic_client.tx_writer(tx, "B")
            yield tx_writer.write(sdk.TopicWriterMessage(data=b"123", seqno=1))
            seen.append((yield tx.execute("select 1")))
            yield tx.execute("UPSERT INTO rows (id) VALUES ($id)", {"$id": 1})
            yield tx_writer.write(sdk.TopicWriterMessage(data=b"456"))

        yield from pool.retry_tx_sync(callee, retry_settings=DEFAULT_RETRY_SETTINGS, shape="write")

    sim, seen = run(test, "copy:workers=1,dst=1,batch=2,txns=1,shapes=write,table=true", tmp_path)
    assert seen == [[[1]]]
    assert sim.engine.target[1] == [Msg(0, 0), Msg(0, 1)] and sim.engine.rows == [1]


# --- retries and what the engine cannot express ---


@pytest.mark.tlc
def test_retry_tx_sync_retries_an_aborted_transaction(tmp_path: Path) -> None:
    """A read-only transaction whose range another commit took is ABORTED; the pool tries again,
    and the retry reads from the committed offset."""

    def test(driver: sdk.Driver, seen: list[Any]) -> api.App:
        pool = sdk.QuerySessionPool(driver)
        reader = driver.topic_client.reader("A", "c")

        def callee(tx: api.Tx) -> api.App:
            batch = yield reader.receive_batch_with_tx(tx, max_messages=1)
            seen.append(offsets(batch))
            if len(seen) == 1:  # the first try also names offset 1, which the reader reads next
                yield tx.update_offsets_in_transaction(1, 2)

        yield from pool.retry_tx_sync(callee, shape="read")  # commits [0, 2)
        yield from pool.retry_tx_sync(callee, shape="read")  # reads 1: Conflict, ABORTED; the retry reads 2

    sim, seen = run(test, "copy:workers=1,dst=1,msgs=3,batch=1,txns=3,shapes=read,ranges=1", tmp_path)
    assert seen == [[0], [1], [2]]
    assert [sim.engine.told[t] for t in (1, 2, 3)] == ["COMMITTED", "ABORTED", "COMMITTED"]


def test_statements_the_spec_lacks_get_one_line_with_the_fix() -> None:
    from ref_impl.ydb.constants import Constants
    from ref_impl.ydb.engine import Engine

    e = Engine(Constants(workers=("w1",), shapes=("copy",), table=True))
    driver = sdk.Driver(e, "w1")
    tx = driver.begin_transaction()
    with pytest.raises(api.IllegalStateError, match="not a statement of the spec"):
        tx.execute("SELECT * FROM rows WHERE id > 3")


def test_a_writer_closed_by_force_fails_the_commit_with_session_expired() -> None:
    """WriteToTopic_Demo_41 through the SDK's names: a write unacknowledged, close(flush=False),
    then tx.commit() raises SESSION_EXPIRED before anything is sent (the C++ SDK's callback before
    the commit, write_session_impl.cpp), and the transaction can be rolled back."""
    from ref_impl.ydb.actions import run as take
    from ref_impl.ydb.constants import Constants
    from ref_impl.ydb.engine import Engine

    e = Engine(Constants(workers=("w1",), max_txns=1, shapes=("write",), force_closes=True))
    driver = sdk.Driver(e, "w1")
    tx = driver.begin_transaction("write")
    assert take(e, "BeginWrites", "w1")
    tx.id = e.cl["w1"].tx
    writer = sdk.TxWriter(tx.writer("B"))
    assert take(e, "TxWrite", "w1")  # in flight, not acknowledged
    close = writer.close(flush=False)
    assert close.next_step() == ("ForceClose", "w1") and take(e, "ForceClose", "w1")
    err = tx.commit().fails()
    assert isinstance(err, api.TopicWriteError) and err.status == "SESSION_EXPIRED"
    assert take(e, "RollbackTx", "w1") and e.told[1] == "ABORTED"
    with pytest.raises(api.IllegalStateError, match="closed"):
        writer.write(sdk.TopicWriterMessage(b"x"))


# --- TestTopicWriter: writes outside any transaction (the spec's PlainWrite) ---

PLAIN = "copy:workers=1,dst=1,batch=1,txns=1,shapes=write,producers=partition,plain=5"


@pytest.mark.tlc
def test_plain_writer_send_message(tmp_path: Path) -> None:
    """test_send_message: a writer of producer "test" writes one message, visible at once."""

    def test(driver: sdk.Driver, seen: list[Any]) -> api.App:
        writer = driver.topic_client.writer("B", producer_id="test")
        seen.append((yield writer.write(sdk.TopicWriterMessage(data="123"))))
        yield writer.close()

    sim, seen = run(test, PLAIN, tmp_path)
    assert seen == ["written"] and sim.engine.target[1] == [Msg(0, 0)]


@pytest.mark.tlc
def test_plain_writer_wait_last_seqno(tmp_path: Path) -> None:
    """test_wait_last_seqno: with auto_seqno=False the writer names SeqNo 5 (a gap from none); a new
    writer of the same producer learns 5 as its last SeqNo."""

    def test(driver: sdk.Driver, seen: list[Any]) -> api.App:
        writer = driver.topic_client.writer("B", producer_id="test", auto_seqno=False)
        yield writer.write_with_ack(sdk.TopicWriterMessage(data=b"123", seqno=5))
        yield writer.close()
        writer = driver.topic_client.writer("B", producer_id="test")
        seen.append((yield writer.wait_init()).last_seqno)

    sim, seen = run(test, PLAIN, tmp_path)
    assert seen == [5] and sim.engine.target[1] == [Msg(0, 4)]


@pytest.mark.tlc
def test_plain_writer_auto_flush_on_close(tmp_path: Path) -> None:
    """test_auto_flush_on_close: SeqNos 1..3 named, the writer closed; a new writer's last SeqNo is 3."""

    def test(driver: sdk.Driver, seen: list[Any]) -> api.App:
        writer = driver.topic_client.writer("B", producer_id="test", auto_seqno=False)
        for i in range(3):
            yield writer.write(sdk.TopicWriterMessage(data=f"msg-{i}", seqno=i + 1))
        yield writer.close()
        writer = driver.topic_client.writer("B", producer_id="test")
        seen.append((yield writer.wait_init()).last_seqno)

    sim, seen = run(test, PLAIN, tmp_path)
    assert seen == [3] and sim.engine.target[1] == [Msg(0, 0), Msg(0, 1), Msg(0, 2)]


@pytest.mark.tlc
def test_plain_writer_random_producer_id(tmp_path: Path) -> None:
    """test_random_producer_id: two writers with no producer id are two producers."""

    def test(driver: sdk.Driver, seen: list[Any]) -> api.App:
        for _ in range(2):
            writer = driver.topic_client.writer("B")
            yield writer.write(sdk.TopicWriterMessage(data=b"123"))
            yield writer.close()

    sim, _ = run(test, PLAIN, tmp_path)
    [m1, m2] = sim.engine.target[1]
    assert m1.src != m2.src and m1.off == m2.off == 0


@pytest.mark.tlc
def test_plain_writer_a_repeated_seqno_is_skipped(tmp_path: Path) -> None:
    """The partition answers AlreadyWritten for a SeqNo at or below the producer's last (the SDK's
    Skipped, as a write_with_ack result): the message is stored once."""

    def test(driver: sdk.Driver, seen: list[Any]) -> api.App:
        writer = driver.topic_client.writer("B", producer_id="test", auto_seqno=False)
        for seqno in (1, 2, 2, 1, 3):
            seen.append((yield writer.write_with_ack(sdk.TopicWriterMessage(data=b"x", seqno=seqno))))

    sim, seen = run(test, PLAIN, tmp_path)
    assert seen == ["written", "written", "skipped", "skipped", "written"]
    assert sim.engine.target[1] == [Msg(0, 0), Msg(0, 1), Msg(0, 2)]


@pytest.mark.tlc
def test_a_plain_write_past_the_transaction_s_seqno_aborts_it(tmp_path: Path) -> None:
    """The producer of an open write-only transaction writes outside it with a SeqNo of its own
    choosing, past the transaction's: the plain write is published, and the commit is ABORTED
    (MinSeqNo), as in WriteToTopic_Demo_3 with the automatic SeqNo."""

    def test(driver: sdk.Driver, seen: list[Any]) -> api.App:
        tx = driver.begin_transaction("write")
        writer = yield driver.topic_client.tx_writer(tx, "B")
        yield writer.write(sdk.TopicWriterMessage(data=b"in tx"))
        plain = driver.topic_client.writer("B", producer_id="app", auto_seqno=False)
        seen.append((yield plain.write(sdk.TopicWriterMessage(data=b"outside", seqno=3))))
        try:
            yield tx.commit()
        except api.TransactionAborted as err:
            seen.append(err.reason)

    sim, seen = run(test, PLAIN, tmp_path)
    assert seen == ["written", "MinSeqNo"] and sim.engine.target[1] == [Msg(0, 2)]


# --- YDB's C++ TxUsage scenarios through the SDK's names ---


@pytest.mark.tlc
def test_txusage_demo_5_two_transactions_one_after_the_other(tmp_path: Path) -> None:
    """WriteToTopic_Demo_5 (and _10): a transaction writes #1 and commits, then another writes #2
    and commits; both SUCCESS, and a reader sees #1 then #2."""

    def test(driver: sdk.Driver, seen: list[Any]) -> api.App:
        pool = sdk.QuerySessionPool(driver)

        def callee(tx: api.Tx) -> api.App:
            writer = yield driver.topic_client.tx_writer(tx, "B")
            yield writer.write(sdk.TopicWriterMessage(data=b"#"))

        for _ in range(2):
            yield from pool.retry_tx_sync(callee, retry_settings=sdk.RetrySettings(max_retries=0), shape="write")

    sim, _ = run(test, "copy:workers=1,dst=1,batch=1,txns=2,shapes=write,producers=partition", tmp_path)
    assert sim.engine.target[1] == [Msg(0, 0), Msg(0, 1)]
    assert [sim.engine.told[t] for t in (1, 2)] == ["COMMITTED", "COMMITTED"]


@pytest.mark.tlc
def test_txusage_demo_15_two_writers_closed_before_the_commit(tmp_path: Path) -> None:
    """WriteToTopic_Demo_15: in one transaction a writer of message group group_1 writes #1 and is
    closed, then a writer of group_2 writes #2 and is closed; SUCCESS, and a reader sees both. The
    second tx_writer of the transaction is a producer of its own (-2); each close waits for its
    writer's acknowledgements while the other writer may go on."""

    def test(driver: sdk.Driver, seen: list[Any]) -> api.App:
        pool = sdk.QuerySessionPool(driver)

        def callee(tx: api.Tx) -> api.App:
            for data in (b"#1", b"#2"):
                writer = yield driver.topic_client.tx_writer(tx, "B")
                yield writer.write(sdk.TopicWriterMessage(data=data, seqno=1))
                yield writer.close()

        yield from pool.retry_tx_sync(callee, retry_settings=sdk.RetrySettings(max_retries=0), shape="write")

    sim, _ = run(test, "copy:workers=1,dst=1,batch=2,txns=1,shapes=write,producers=partition,writers=2", tmp_path)
    assert sim.engine.told[1] == "COMMITTED"
    assert sim.engine.target[1] == [Msg(0, 0), Msg(-2, 0)]


def test_a_third_writer_beyond_tx_writers_is_one_line_with_the_fix() -> None:
    from ref_impl.ydb.actions import run as take
    from ref_impl.ydb.constants import Constants
    from ref_impl.ydb.engine import Engine

    e = Engine(Constants(workers=("w1",), shapes=("write",), tx_writers=2))
    driver = sdk.Driver(e, "w1")
    tx = driver.begin_transaction("write")
    assert take(e, "BeginWrites", "w1")
    tx.id, tx.base = e.cl["w1"].tx, e.cl["w1"].b
    tx.writer("B")
    driver.topic_client.tx_writer(tx, "B")
    with pytest.raises(api.IllegalStateError, match=r"at most 2 writers \(TxWriters\).*writers=N"):
        driver.topic_client.tx_writer(tx, "B")


@pytest.mark.tlc
def test_txusage_demo_25_read_in_the_transaction_and_write_what_was_read(tmp_path: Path) -> None:
    """WriteToTopic_Demo_25: read topic A in the transaction and write what was read to topic B;
    SUCCESS, B holds exactly A's messages and the consumer's offset is past them."""

    def test(driver: sdk.Driver, seen: list[Any]) -> api.App:
        pool = sdk.QuerySessionPool(driver)
        reader = driver.topic_client.reader("A", "c")

        def callee(tx: api.Tx) -> api.App:
            batch = yield reader.receive_batch_with_tx(tx, max_messages=2)
            writer = yield driver.topic_client.tx_writer(tx, "B")
            for m in batch.messages:
                yield writer.write(sdk.TopicWriterMessage(data=m))

        yield from pool.retry_tx_sync(callee, retry_settings=sdk.RetrySettings(max_retries=0), shape="copy")

    sim, _ = run(test, "copy:workers=1,dst=1,msgs=2,batch=2,txns=1", tmp_path)
    assert sorted(sim.engine.target[1]) == [Msg(1, 0), Msg(1, 1)] and sim.engine.committed[1] == 2


@pytest.mark.tlc
def test_txusage_demo_41_the_writer_closed_by_force_is_session_expired(tmp_path: Path) -> None:
    """WriteToTopic_Demo_41 through the pool: close(flush=False) before the acknowledgement, then
    the commit fails with SESSION_EXPIRED; the pool rolls back and, with no retry left, raises it."""

    def test(driver: sdk.Driver, seen: list[Any]) -> api.App:
        pool = sdk.QuerySessionPool(driver)

        def callee(tx: api.Tx) -> api.App:
            writer = yield driver.topic_client.tx_writer(tx, "B")
            yield writer.write(sdk.TopicWriterMessage(data=b"x" * 10))
            yield writer.close(flush=False)

        try:
            yield from pool.retry_tx_sync(callee, retry_settings=sdk.RetrySettings(max_retries=0), shape="write")
        except api.TopicWriteError as err:
            seen.append(err.status)

    # seed 0's schedule closes the writer before the tablet acknowledges the write
    sim, seen = run(test, "copy:workers=1,dst=1,batch=1,txns=1,shapes=write,close=true", tmp_path)
    assert seen == ["SESSION_EXPIRED"] and sim.engine.told[1] == "ABORTED" and sim.engine.target[1] == []


@pytest.mark.tlc
def test_txusage_demo_43_the_commit_through_a_query(tmp_path: Path) -> None:
    """WriteToTopic_Demo_43: the transaction writes (100 x 1 MB there, BatchMax here), then
    Execute("SELECT 1", tx) with commit = true commits it: the query succeeds and every message is
    read. The SDK's tx.execute(..., commit_tx=True) flushes the writers first, as commit() does."""

    def test(driver: sdk.Driver, seen: list[Any]) -> api.App:
        pool = sdk.QuerySessionPool(driver)

        def callee(tx: api.Tx) -> api.App:
            writer = yield driver.topic_client.tx_writer(tx, "B")
            for _ in range(2):
                yield writer.write(sdk.TopicWriterMessage(data=b"1 MB"))
            seen.append((yield tx.execute("SELECT 1", commit_tx=True)))

        yield from pool.retry_tx_sync(callee, retry_settings=sdk.RetrySettings(max_retries=0), shape="write")

    sim, seen = run(test, "copy:workers=1,dst=1,batch=2,txns=1,shapes=write", tmp_path)
    assert seen == [[[1]]] and sim.engine.told[1] == "COMMITTED"
    assert sim.engine.target[1] == [Msg(0, 0), Msg(0, 1)]


@pytest.mark.tlc
def test_txusage_demo_44_a_query_opens_the_transaction_and_another_commits_it(tmp_path: Path) -> None:
    """WriteToTopic_Demo_44: ExecuteInTx("SELECT 1", commit = false) opens the transaction; the
    writes follow and are acknowledged; a reader sees nothing; Execute("SELECT 2", tx) commits, and
    then every message is read. (A query that touches no table is no step of the spec: the
    transaction begins in the engine at its writer.)"""

    def test(driver: sdk.Driver, seen: list[Any]) -> api.App:
        pool = sdk.QuerySessionPool(driver)

        def callee(tx: api.Tx) -> api.App:
            seen.append((yield tx.execute("SELECT 1")))
            writer = yield driver.topic_client.tx_writer(tx, "B")
            for _ in range(2):
                yield writer.write(sdk.TopicWriterMessage(data=b"1 MB"))
            yield writer.flush()
            seen.append(list(driver.engine.target[1]))  # the 60 s read before the commit: nothing
            seen.append((yield tx.execute("SELECT 2", commit_tx=True)))

        yield from pool.retry_tx_sync(callee, retry_settings=sdk.RetrySettings(max_retries=0), shape="write")

    sim, seen = run(test, "copy:workers=1,dst=1,batch=2,txns=1,shapes=write", tmp_path)
    assert seen == [[[1]], [], [[2]]] and sim.engine.told[1] == "COMMITTED"
    assert sim.engine.target[1] == [Msg(0, 0), Msg(0, 1)]


@pytest.mark.tlc
def test_reader_receive_batch_and_commit_with_ack_outside_a_transaction(tmp_path: Path) -> None:
    """The SDK's reader outside a transaction (tests/topics/test_topic_reader.py's reads and
    commits): receive_batch, commit_with_ack, and the next read, in a transaction, goes on from
    the committed offset."""

    def test(driver: sdk.Driver, seen: list[Any]) -> api.App:
        reader = driver.topic_client.reader("A", "c")
        batch = yield reader.receive_batch(max_messages=1)
        seen.append(offsets(batch))  # "123"
        yield reader.commit_with_ack(batch)
        seen.append((yield from first_message(driver, reader)))

    sim, seen = run(test, READER.replace("shapes=read", "shapes=read,commits=1"), tmp_path)
    assert seen == [[0], [1]] and sim.engine.committed[1] == 1
