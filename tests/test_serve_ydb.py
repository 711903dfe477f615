"""``txconform serve --protocol ydb``: the real ``ydb`` SDK (sync) runs topic transactions against
the YDB reference engine behind YDB's gRPC API (ref_impl/ydb/serve), and each session's trace is a
behaviour of the spec.

Every test starts its own server on a free loopback port and stops it; every SDK call has a timeout,
and each test body runs in a thread joined with a deadline, so that nothing can hang.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import threading
import traceback
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

ydb = pytest.importorskip("ydb")

from ref_impl.ydb.serve.run import Options, Running  # noqa: E402
from trace_check.testing import txconform_check  # noqa: E402
from trace_check.traces.verdicts import verdict_lines  # noqa: E402

T = 5.0  # every SDK wait
DEADLINE_S = 30.0  # a whole test body
RETRY = ydb.RetrySettings(max_retries=0)  # a refusal surfaces at once, not after backoff
ROOT = Path(__file__).resolve().parents[1]


def bounded(body: Callable[[], Any], seconds: float = DEADLINE_S) -> Any:
    """Run ``body`` in a thread; fail the test if it does not end in time (the server's stop then frees it)."""
    result: dict[str, Any] = {}

    def run() -> None:
        try:
            result["value"] = body()
        except BaseException as e:  # noqa: BLE001 - handed to the test's thread
            result["error"] = e

    t = threading.Thread(target=run, daemon=True)
    t.start()
    t.join(seconds)
    if t.is_alive():
        frames = sys._current_frames().get(t.ident or 0)
        where = "".join(traceback.format_stack(frames)[-8:]) if frames else ""
        pytest.fail(f"the SDK did not finish within {seconds} s; it was at:\n{where}", pytrace=False)
    if "error" in result:
        raise result["error"]
    return result.get("value")


@contextmanager
def sdk(server: Running | Any, endpoint: str | None = None) -> Iterator[Any]:
    """A connected driver with topics A (consumer c) and B (consumer check) created."""
    driver = ydb.Driver(endpoint=endpoint or f"grpc://{server.bootstrap}", database="/local")
    try:
        driver.wait(timeout=T, fail_fast=True)
        driver.topic_client.create_topic("A", consumers=["c"])
        driver.topic_client.create_topic("/local/B", consumers=["check"])
        yield driver
    finally:
        driver.stop(timeout=T)


@pytest.fixture
def server(request: Any, tmp_path: Path) -> Iterator[Running]:
    """A server on a free port (options of its own by indirect parametrization); in the ``checked`` run
    of a test (marked tlc), its session's trace must be accepted."""
    running = Running(Options(port=0, trace=tmp_path / "session.jsonl", **getattr(request, "param", {}))).start()
    try:
        yield running
    finally:
        path = running.stop()
    if request.node.get_closest_marker("tlc") and path is not None:
        v = txconform_check(path)
        assert v.ok, "\n".join(verdict_lines(v, path))


# Each session test runs twice: fast (make quick), and with its session's trace checked by TLC.
CHECKED = pytest.mark.parametrize("checked", ["fast", pytest.param("checked", marks=pytest.mark.tlc)])


def copy(driver: Any, reader: Any, tx: Any, write: int | None = None, most: int | None = 2, writers: list[Any] | None = None) -> list[bytes]:
    """The engine's transaction: read a batch of A in ``tx``, write its messages (or the first ``write``) to B."""
    batch = reader.receive_batch_with_tx(tx, max_messages=most, timeout=T)
    data = [m.data for m in batch.messages]
    if write == 0:
        return data  # no writer at all: a transaction that only reads
    writer = driver.topic_client.tx_writer(tx, "B")
    if writers is not None:
        writers.append(writer)
    for d in data[:write]:
        writer.write(ydb.TopicWriterMessage(d), timeout=T)
    return data


def read_all(driver: Any, topic: str, consumer: str, most: int = 10, wait: float = 1.0) -> list[bytes]:
    out = []
    with driver.topic_client.reader(topic, consumer=consumer) as r:
        for _ in range(most):
            try:
                out.append(r.receive_message(timeout=wait).data)
            except TimeoutError:
                break
    return out


def copy_session(server: Running | Any, endpoint: str | None = None) -> tuple[list[bytes], list[bytes], list[bytes]]:
    """Commit a copy, roll one back, commit again: what each read, then what B holds."""

    def body() -> tuple[list[bytes], list[bytes], list[bytes]]:
        got: dict[str, list[bytes]] = {}
        with sdk(server, endpoint) as driver, ydb.QuerySessionPool(driver) as pool, \
                driver.topic_client.reader("A", consumer="c") as reader:
            pool.retry_tx_sync(lambda tx: got.setdefault("first", copy(driver, reader, tx)), retry_settings=RETRY)

            def rolled_back(tx: Any) -> None:
                got["rolled"] = copy(driver, reader, tx)
                tx.rollback()

            pool.retry_tx_sync(rolled_back, retry_settings=RETRY)
            pool.retry_tx_sync(lambda tx: got.setdefault("again", copy(driver, reader, tx)), retry_settings=RETRY)
            return got["first"], got["rolled"] + got["again"], read_all(driver, "B", "check")

    return bounded(body)  # type: ignore[no-any-return]


def test_the_sdk_connects_runs_select_1_and_hears_what_else_is_not_served(server: Running) -> None:
    def body() -> None:
        with sdk(server) as driver, ydb.QuerySessionPool(driver) as pool:
            rows = pool.execute_with_retries("select 1", retry_settings=RETRY)
            assert rows[0].rows[0]["column0"] == 1
            assert pool.execute_with_retries("SELECT 2;", retry_settings=RETRY)[0].rows[0]["column0"] == 2
            # the SDK's topic example's query (examples/topic/topic_transactions_example.py)
            assert pool.execute_with_retries("select 3 as res;", retry_settings=RETRY)[0].rows[0]["res"] == 3
            with pytest.raises(ydb.BadRequest, match=r"not served; this server runs select n \[as name\]; CREATE TABLE"):
                pool.execute_with_retries("SELECT * FROM t", retry_settings=RETRY)
            d = driver.topic_client.describe_topic("A")
            assert [p.partition_id for p in d.partitions] == [0] and [c.name for c in d.consumers] == ["c"]
            with pytest.raises(ydb.SchemeError, match="two topics"):
                driver.topic_client.create_topic("C")
            with pytest.raises(ydb.AlreadyExists):
                driver.topic_client.create_topic("A", consumers=["c"])

    bounded(body)
    assert server.front.events == []  # none of it is a step of the engine


@CHECKED
def test_a_committed_copy_publishes_its_writes_and_commits_the_read_offsets(server: Running, checked: str) -> None:
    first, later, b = copy_session(server)
    assert first == [b"A/1/0", b"A/1/1"]
    # the rolled-back batch is read again from the committed offset, and published once
    assert later == [b"A/1/2", b"A/1/3", b"A/1/2", b"A/1/3"]
    assert b == [b"A/1/0", b"A/1/1", b"A/1/2", b"A/1/3"]
    # consumer c's committed offset is 4: a new reader of A starts there
    assert bounded(lambda: _read_a_after(server)) == b"A/1/4"
    e = server.front.engine
    assert e.committed[1] == 4 and [e.told[t] for t in (1, 2, 3)] == ["COMMITTED", "ABORTED", "COMMITTED"]
    assert [ev["action"] for ev in server.front.events if ev["action"] in ("ReadBatch", "RollbackTx", "KqpResult")] == [
        "ReadBatch", "KqpResult", "ReadBatch", "RollbackTx", "ReadBatch", "KqpResult"]


def _read_a_after(server: Running) -> bytes:
    driver = ydb.Driver(endpoint=f"grpc://{server.bootstrap}", database="/local")
    try:
        driver.wait(timeout=T, fail_fast=True)
        with driver.topic_client.reader("A", consumer="c") as r:
            return r.receive_message(timeout=T).data  # type: ignore[no-any-return]
    finally:
        driver.stop(timeout=T)


@CHECKED
def test_a_writer_in_gzip_publishes_its_messages_and_bad_gzip_is_a_bad_request(server: Running, checked: str) -> None:
    """The SDK's writer compresses with the codec asked for (GZIP here): the server takes it, the
    engine keeps the data decoded, and a reader gets it as written. Data that is not gzip in a GZIP
    write is BAD_REQUEST, not a crash (a raw frame of the SDK's own stream)."""

    def body() -> list[bytes]:
        with sdk(server) as driver, ydb.QuerySessionPool(driver) as pool, driver.topic_client.reader("A", consumer="c") as reader:
            def gzipped(tx: Any) -> None:
                batch = reader.receive_batch_with_tx(tx, max_messages=2, timeout=T)
                writer = driver.topic_client.tx_writer(tx, "B", codec=ydb.TopicCodec.GZIP)
                for m in batch.messages:
                    writer.write(ydb.TopicWriterMessage(m.data), timeout=T)

            pool.retry_tx_sync(gzipped, retry_settings=RETRY)
            return read_all(driver, "B", "check")

    assert bounded(body) == [b"A/1/0", b"A/1/1"]
    assert server.front.engine.told[1] == "COMMITTED"
    import grpc
    from ydb._grpc.v4.protos import ydb_status_codes_pb2, ydb_topic_pb2

    from ref_impl.ydb.serve.services import GZIP, RAW

    W = ydb_topic_pb2.StreamWriteMessage
    frames = [W.FromClient(init_request=W.InitRequest(path="B", producer_id="p", partition_id=0)),
              W.FromClient(write_request=W.WriteRequest(codec=GZIP, messages=[W.WriteRequest.MessageData(seq_no=1, data=b"not gzip")]))]
    with grpc.insecure_channel(server.bootstrap) as channel:
        stream = channel.stream_stream("/Ydb.Topic.V1.TopicService/StreamWrite", request_serializer=W.FromClient.SerializeToString,
                                       response_deserializer=W.FromServer.FromString)
        answers = list(stream(iter(frames), timeout=T))
    assert answers[0].HasField("init_response") and set(answers[0].init_response.supported_codecs.codecs) == {RAW, GZIP}
    assert answers[-1].status == ydb_status_codes_pb2.StatusIds.BAD_REQUEST, answers[-1]
    assert any("not codec 2 (GZIP)" in i.message for i in answers[-1].issues), answers[-1]


@CHECKED
def test_a_custom_codec_is_kept_as_written_and_read_back_with_its_codec(server: Running, checked: str) -> None:
    """A custom codec (10000 and up) is the application's: the server keeps the data as it came,
    and a reader with the decoder gets the message; one without it gets the SDK's
    TopicReaderUnexpectedCodecError (ydb-python-sdk tests/topics/test_topic_reader.py,
    test_read_custom_encoded and test_error_unknown_codec)."""
    codec = 10001

    def body() -> bytes:
        with sdk(server) as driver, ydb.QuerySessionPool(driver) as pool:
            def custom(tx: Any) -> None:
                writer = driver.topic_client.tx_writer(tx, "B", codec=codec, encoders={codec: lambda b: bytes(reversed(b))})
                writer.write(ydb.TopicWriterMessage(b"123"), timeout=T)

            pool.retry_tx_sync(custom, retry_settings=RETRY)
            with driver.topic_client.reader("B", consumer="check", decoders={codec: lambda b: bytes(reversed(b))}) as r:
                got = r.receive_message(timeout=T).data
            with driver.topic_client.reader("B", consumer="check") as r, pytest.raises(ydb.TopicReaderUnexpectedCodecError):
                r.receive_batch(timeout=T)
            return got  # type: ignore[no-any-return]

    assert bounded(body) == b"123"
    assert server.front.b_log[1][0].data == b"321" and server.front.b_log[1][0].codec == codec


@CHECKED
def test_what_the_engine_cannot_express_is_refused_with_a_clear_status(server: Running, checked: str) -> None:
    def body() -> None:
        with sdk(server) as driver, ydb.QuerySessionPool(driver) as pool:
            # a transaction that reads and writes only half of its batch: refused at the commit, rolled back
            with driver.topic_client.reader("A", consumer="c") as reader, pytest.raises(ydb.BadRequest, match="wrote 1 of its 2"):
                pool.retry_tx_sync(lambda tx: copy(driver, reader, tx, write=1), retry_settings=RETRY)

            assert read_all(driver, "B", "check", wait=0.5) == []

    bounded(body)
    assert server.front.engine.committed[1] == 0
    # the refused transaction was rolled back in the engine; tablet B then drops its writes
    acts = [ev["action"] for ev in server.front.events]
    assert acts.count("ReadBatch") == acts.count("RollbackTx") == 1 and "KqpResult" not in acts


@CHECKED
def test_the_sdks_read_only_and_write_only_transactions_commit(server: Running, checked: str) -> None:
    """The SDK's own tests' shapes: a transaction that only reads a batch and commits its offsets
    (the engine's ReadOnlyBatch, immediate on A's partition), and one that only writes (BeginWrites,
    immediate on B's one partition)."""

    def body() -> tuple[list[bytes], list[bytes], list[bytes]]:
        got: dict[str, list[bytes]] = {}
        with sdk(server) as driver, ydb.QuerySessionPool(driver) as pool:
            with driver.topic_client.reader("A", consumer="c") as reader:
                pool.retry_tx_sync(lambda tx: got.setdefault("read", copy(driver, reader, tx, write=0)), retry_settings=RETRY)

            def write_only(tx: Any) -> None:
                with driver.topic_client.tx_writer(tx, "B") as w:
                    for d in (b"own-1", b"own-2"):
                        w.write(ydb.TopicWriterMessage(d), timeout=T)

            pool.retry_tx_sync(write_only, retry_settings=RETRY)
            with driver.topic_client.reader("A", consumer="c") as reader:
                after = reader.receive_batch(max_messages=1, timeout=T)
            return got["read"], [m.data for m in after.messages], read_all(driver, "B", "check")

    read, after, b = bounded(body)
    assert read == [b"A/1/0", b"A/1/1"]
    assert after == [b"A/1/2"], "the read-only commit moved consumer c's offset past its batch"
    assert b == [b"own-1", b"own-2"], "the write-only transaction's messages are published, nothing of the read-only one"
    e = server.front.engine
    assert e.committed[1] == 2 and [e.told[t] for t in (1, 2)] == ["COMMITTED", "COMMITTED"]
    assert [(ev["action"], ev.get("tablet")) for ev in server.front.events
            if ev["action"] in ("ReadOnlyBatch", "BeginWrites", "PqImmediate")] == [
        ("ReadOnlyBatch", None), ("PqImmediate", "A"), ("BeginWrites", None), ("PqImmediate", "B")]


I64 = ydb.PrimitiveType.Int64
UPSERT = "DECLARE $k AS Int64; DECLARE $v AS Utf8; UPSERT INTO t (k, v) VALUES ($k, $v);"


def rows(result_sets: Any) -> list[dict[str, Any]]:
    return [dict(row.items()) for rs in result_sets for row in rs.rows]


def execute(tx: Any, query: str, params: dict[str, Any] | None = None) -> list[dict[str, Any]]:
    with tx.execute(query, params) as results:
        return rows(results)


@CHECKED
def test_a_transaction_copies_a_batch_of_a_into_a_table_and_rollbacks_leave_no_row(server: Running, checked: str) -> None:
    """Topic to table, exactly once: a transaction reads a batch of A and upserts a row per message
    (single-row statements with parameters, sql.py); the rows and the offsets commit together. A
    rolled-back transaction's upsert and a failed statement leave nothing; what is not served is
    BAD_REQUEST naming what is; a missing table is SCHEME_ERROR."""

    def body() -> tuple[Any, ...]:
        errors: list[str] = []
        with sdk(server) as driver, ydb.QuerySessionPool(driver) as pool:
            pool.execute_with_retries("CREATE TABLE t (k Int64, v Utf8, PRIMARY KEY (k))")
            with driver.topic_client.reader("A", consumer="c") as reader:
                def copy_to_table(tx: Any) -> list[int]:
                    batch = reader.receive_batch_with_tx(tx, max_messages=2, timeout=T)
                    for m in batch.messages:
                        execute(tx, UPSERT, {"$k": (m.offset, I64), "$v": m.data.decode()})
                    return [m.offset for m in batch.messages]

                copied = pool.retry_tx_sync(copy_to_table, retry_settings=RETRY)

            def upsert_then_roll_back(tx: Any) -> None:
                execute(tx, UPSERT, {"$k": (9, I64), "$v": "rolled back"})
                seen = execute(tx, "SELECT v FROM t WHERE k = $k", {"$k": (9, I64)})  # its own write
                assert seen == [{"v": "rolled back"}]
                tx.rollback()

            pool.retry_tx_sync(upsert_then_roll_back, retry_settings=RETRY)
            pool.execute_with_retries("DELETE FROM t WHERE k = 0")
            for query in ("UPDATE t SET v = 'x' WHERE k = 1", "SELECT * FROM missing WHERE k = 1",
                          "SELECT * FROM t WHERE v = 'A/1/1'"):
                try:
                    pool.execute_with_retries(query, retry_settings=RETRY)
                except ydb.Error as e:
                    errors.append(f"{type(e).__name__}: {e.issues[0].message}")
            got = {k: rows(pool.execute_with_retries("SELECT * FROM t WHERE k = $k", {"$k": (k, I64)})) for k in (0, 1, 9)}
            return copied, got, errors

    copied, got, errors = bounded(body)
    assert copied == [0, 1]
    assert got == {0: [], 1: [{"k": 1, "v": "A/1/1"}], 9: []}  # row 0 deleted, row 9 rolled back
    assert errors[0].startswith("BadRequest: query <UPDATE t SET v = 'x' WHERE k = 1>: not served; this server runs select n")
    assert errors[1:] == ["SchemeError: table 'missing' does not exist (CREATE TABLE it first)",
                          "BadRequest: table 't': a row is named by its key 'k', not 'v' (single rows by key are served)"]
    e = server.front.engine
    # the copy and the DELETE take the lock step; the rolled-back transaction never reached the engine, and a
    # SELECT that commits at once reads without a lock
    assert e.committed[1] == 2 and [ev["action"] for ev in server.front.events].count("TableWrite") == 2


@CHECKED
@pytest.mark.parametrize("server", [{"workers": 2}], indirect=True)
@pytest.mark.parametrize("bound_first", [False, True])
def test_a_row_written_by_another_commit_after_a_transaction_read_it_aborts_that_transaction(
        server: Running, checked: str, bound_first: bool) -> None:
    """YDB's optimistic locks [tli]: transaction 1 reads row k, transaction 2 upserts it and
    commits, transaction 1 upserts it and commits: ABORTED, "Transaction locks invalidated", and
    its write is lost, not the other's. Transaction 1 is the engine's before the read when it
    wrote to B first (``bound_first``: the spec's TablePredicate fails), or only at its commit (the
    lock broken before its TableWrite: the server rolls it back)."""

    def body() -> tuple[str, list[dict[str, Any]]]:
        with sdk(server) as driver, ydb.QuerySessionPool(driver) as pool:
            pool.execute_with_retries("CREATE TABLE t (k Int64, v Utf8, PRIMARY KEY (k))")
            pool.execute_with_retries(UPSERT, {"$k": (1, I64), "$v": "first"})
            session = pool.acquire()
            try:
                tx = session.transaction().begin()
                if bound_first:
                    with driver.topic_client.tx_writer(tx, "B") as w:
                        w.write(ydb.TopicWriterMessage(b"own"), timeout=T)
                assert execute(tx, "SELECT v FROM t WHERE k = 1") == [{"v": "first"}]
                pool.execute_with_retries(UPSERT, {"$k": (1, I64), "$v": "second"})  # another session, committed
                execute(tx, UPSERT, {"$k": (1, I64), "$v": "third"})
                try:
                    tx.commit()
                    outcome = "committed"
                except ydb.Aborted as e:
                    outcome = f"Aborted: {e.issues[0].message}"
            finally:
                pool.release(session)
            return outcome, rows(pool.execute_with_retries("SELECT v FROM t WHERE k = 1"))

    outcome, after = bounded(body)
    assert outcome.startswith("Aborted"), outcome
    assert after == [{"v": "second"}]
    actions = [ev["action"] for ev in server.front.events]
    assert ("KqpResult" in actions) and (("RollbackTx" in actions) != bound_first)


@CHECKED
def test_a_consumer_added_to_b_in_a_transactions_middle_reads_its_messages(server: Running, checked: str) -> None:
    """YDB's WriteToTopic_Demo_39: a transaction writes two messages, a consumer is added to the
    topic (AlterTopic) while it is open, the commit is SUCCESS and the new consumer reads exactly
    the two. A consumer of B reads outside the spec; other settings of AlterTopic are refused by name."""

    def body() -> tuple[list[bytes], list[str], list[str]]:
        errors: list[str] = []
        with sdk(server) as driver, ydb.QuerySessionPool(driver) as pool:
            def write_two(tx: Any) -> None:
                with driver.topic_client.tx_writer(tx, "B") as w:
                    for d in (b"own-1", b"own-2"):
                        w.write(ydb.TopicWriterMessage(d), timeout=T)
                    driver.topic_client.alter_topic("B", add_consumers=["consumer"])

            pool.retry_tx_sync(write_two, retry_settings=RETRY)
            names = [c.name for c in driver.topic_client.describe_topic("B").consumers]
            for alter in (lambda: driver.topic_client.alter_topic("B", add_consumers=["consumer"]),
                          lambda: driver.topic_client.alter_topic("A", drop_consumers=["c"]),
                          lambda: driver.topic_client.alter_topic("B", set_min_active_partitions=2)):
                try:
                    alter()
                except ydb.Error as e:
                    errors.append(f"{type(e).__name__}: {e.issues[0].message}")
            return read_all(driver, "B", "consumer"), names, errors

    b, names, errors = bounded(body)
    assert b == [b"own-1", b"own-2"] and names == ["check", "consumer"]
    assert errors == ["BadRequest: AlterTopic of 'B': consumer 'consumer' already exists",
                      "BadRequest: AlterTopic of 'A': consumer 'c' is the one whose offsets the engine's transactions "
                      "commit; it cannot be dropped",
                      "Unsupported: AlterTopic of 'B': alter_partitioning_settings not served (the engine's topics keep "
                      "the shape of its constants; consumers may be added and dropped)"]


@CHECKED
@pytest.mark.parametrize("server", [{"messages": 2}], indirect=True)
def test_a_writer_outside_a_transaction_gives_a_its_data_before_it_is_read(server: Running, checked: str) -> None:
    """The SDK's tests fill their source topic with a plain writer (``topic_with_messages``): those
    writes give the messages the spec's A holds from the start their data, until A is read; a
    missing topic is YDB's SCHEME_ERROR (the SDK's fixtures drop a topic before creating it), not a
    refusal."""

    def body() -> tuple[list[bytes], list[bytes]]:
        got: dict[str, list[bytes]] = {}
        with sdk(server) as driver, ydb.QuerySessionPool(driver) as pool:
            with pytest.raises(ydb.SchemeError, match="no such topic"):
                driver.topic_client.drop_topic("/local/test-topic")
            with driver.topic_client.writer("A", producer_id="fixture") as w:
                w.write_with_ack([ydb.TopicWriterMessage(b"123"), ydb.TopicWriterMessage(b"456")], timeout=T)
            with pytest.raises(ydb.Unsupported, match="every one has its data"), \
                    driver.topic_client.writer("A", producer_id="more") as w:
                w.write_with_ack(ydb.TopicWriterMessage(b"789"), timeout=T)
            with driver.topic_client.reader("A", consumer="c") as reader:
                pool.retry_tx_sync(lambda tx: got.setdefault("copied", copy(driver, reader, tx)), retry_settings=RETRY)
            with pytest.raises(ydb.Unsupported, match="after it was read"), \
                    driver.topic_client.writer("A", producer_id="late") as w:
                w.write_with_ack(ydb.TopicWriterMessage(b"0"), timeout=T)
            return got["copied"], read_all(driver, "B", "check")

    copied, b = bounded(body)
    assert copied == b == [b"123", b"456"]
    assert not any("no such topic" in r for r in server.front.refusals)
    assert [ev["action"] for ev in server.front.events][:2] == ["ReadBatch", "TxWrite"], "the writes to A are no steps"


@CHECKED
def test_writes_outside_a_transaction_to_b_are_plain_writes_deduplicated_by_seqno(server: Running, checked: str) -> None:
    """The SDK's plain writer on B (its writer tests: test_send_message, test_wait_last_seqno): each
    write is the spec's PlainWrite, published at once, and a writer's init learns its producer's
    last SeqNo, a named one with a gap too. (The SDK refuses a SeqNo at or below the last it knows
    itself, "Message seqno is duplicated", so the partition's AlreadyWritten is reached only by a
    resend; the engine's tests take it.)"""

    def body() -> tuple[list[Any], int, int, list[bytes]]:
        with sdk(server) as driver:
            with driver.topic_client.writer("B", producer_id="test") as w:
                w.write_with_ack([ydb.TopicWriterMessage(b"one"), ydb.TopicWriterMessage(b"two")], timeout=T)
            with driver.topic_client.writer("B", producer_id="test", auto_seqno=False) as w:
                last = w.wait_init(timeout=T).last_seqno
                acks = w.write_with_ack([ydb.TopicWriterMessage(b"five", seqno=5)], timeout=T)
            with driver.topic_client.writer("B", producer_id="test") as w:
                after = w.wait_init(timeout=T).last_seqno
            with driver.topic_client.writer("B") as w:  # another producer: a random id
                w.write_with_ack(ydb.TopicWriterMessage(b"other"), timeout=T)
            return [type(a).__name__ for a in acks], last, after, read_all(driver, "B", "check")

    acks, last, after, b = bounded(body)
    assert (last, after) == (2, 5) and acks == ["Written"]
    assert b == [b"one", b"two", b"five", b"other"]
    acts = [ev["action"] for ev in server.front.events]
    assert acts == ["PlainWrite"] * 4
    assert sorted({ev["producer"] for ev in server.front.events}) == [-3, -1], "two producer ids, two of the spec's others"


@CHECKED
def test_the_sdk_reader_commits_outside_a_transaction_and_a_transaction_reads_on(server: Running, checked: str) -> None:
    """reader.commit_with_ack(batch) outside any transaction is the engine's PlainRead and CommitOffset
    (partition.cpp CommitUserAct); a new reader starts at the committed offset, a transaction then
    reads the next batch, and topic_client.commit_offset moves the offset on in the reader's session."""

    def body() -> tuple[list[bytes], list[bytes], int]:
        with sdk(server) as driver, ydb.QuerySessionPool(driver) as pool:
            with driver.topic_client.reader("A", consumer="c") as reader:
                batch = reader.receive_batch(max_messages=2, timeout=T)
                plain = [m.data for m in batch.messages]
                reader.commit_with_ack(batch)
            with driver.topic_client.reader("A", consumer="c") as reader:
                got: dict[str, list[bytes]] = {}
                pool.retry_tx_sync(lambda tx: got.setdefault("tx", copy(driver, reader, tx)), retry_settings=RETRY)
            driver.topic_client.commit_offset("A", "c", 0, 6)
            # a reader of B is outside the spec: its consumer's offset is the server's own
            with driver.topic_client.reader("B", consumer="check") as reader:
                first = reader.receive_message(timeout=T)
                reader.commit_with_ack(first)
            assert read_all(driver, "B", "check") == [b"A/1/3"]
            return plain, got["tx"], server.front.engine.committed[1]

    plain, in_tx, committed = bounded(body)
    assert (plain, in_tx, committed) == ([b"A/1/0", b"A/1/1"], [b"A/1/2", b"A/1/3"], 6)
    acts = [ev["action"] for ev in server.front.events]
    assert acts.count("PlainRead") == acts.count("CommitOffset") == 2  # [0, 2) by the reader, [4, 6) by commit_offset
    with pytest.raises(Exception, match="a rewind"):
        bounded(lambda: _commit_offset(server, 1))


@CHECKED
@pytest.mark.parametrize("server", [{"workers": 20, "txns": 20}], indirect=True)
def test_twenty_sdk_writers_commit_their_transactions_at_once(server: Running, checked: str) -> None:
    """20 threads of the SDK, each in a transaction of its own, write two messages each, wait
    until all 20 are open (a barrier), and commit: the engine's 20 workers each hold one, every
    commit is SUCCESS, and B holds the 40 messages once each."""
    n = 20
    barrier = threading.Barrier(n, timeout=DEADLINE_S)

    def body() -> list[bytes]:
        with sdk(server) as driver, ydb.QuerySessionPool(driver, size=n) as pool:
            errors: list[BaseException] = []

            def one(i: int) -> None:
                def callee(tx: Any) -> None:
                    writer = driver.topic_client.tx_writer(tx, "B")
                    for j in range(2):
                        writer.write(ydb.TopicWriterMessage(f"{i}/{j}".encode()), timeout=T)
                    barrier.wait()

                try:
                    pool.retry_tx_sync(callee, retry_settings=RETRY)
                except BaseException as e:  # noqa: BLE001 - reported by the test's thread
                    errors.append(e)

            threads = [threading.Thread(target=one, args=(i,), daemon=True) for i in range(n)]
            for t in threads:
                t.start()
            for t in threads:
                t.join(DEADLINE_S)
            assert not errors, errors[:3]
            return read_all(driver, "B", "check", most=2 * n + 1)

    got = bounded(body, seconds=2 * DEADLINE_S)
    assert sorted(got) == sorted(f"{i}/{j}".encode() for i in range(n) for j in range(2))
    assert [server.front.engine.told[t] for t in range(1, n + 1)] == ["COMMITTED"] * n


def _commit_offset(server: Running, offset: int) -> None:
    driver = ydb.Driver(endpoint=f"grpc://{server.bootstrap}", database="/local")
    try:
        driver.wait(timeout=T, fail_fast=True)
        driver.topic_client.commit_offset("A", "c", 0, offset)
    finally:
        driver.stop(timeout=T)


@CHECKED
def test_the_asyncio_sdk_commits_and_rolls_back_the_same_way(server: Running, checked: str) -> None:
    import asyncio

    import ydb.aio

    async def session() -> list[list[bytes]]:
        async with ydb.aio.Driver(endpoint=f"grpc://{server.bootstrap}", database="/local") as driver:
            await driver.wait(timeout=T, fail_fast=True)
            await driver.topic_client.create_topic("A", consumers=["c"])
            await driver.topic_client.create_topic("B", consumers=["check"])
            async with ydb.aio.QuerySessionPool(driver) as pool, driver.topic_client.reader("A", consumer="c") as reader:
                async def copy_async(tx: Any, rollback: bool = False) -> list[bytes]:
                    batch = await asyncio.wait_for(reader.receive_batch_with_tx(tx, max_messages=2), T)
                    writer = driver.topic_client.tx_writer(tx, "B")
                    for m in batch.messages:
                        await asyncio.wait_for(writer.write(ydb.TopicWriterMessage(m.data)), T)
                    if rollback:
                        await tx.rollback()
                    return [m.data for m in batch.messages]

                return [await pool.retry_tx_async(copy_async, retry_settings=RETRY),
                        await pool.retry_tx_async(lambda tx: copy_async(tx, rollback=True), retry_settings=RETRY),
                        await pool.retry_tx_async(copy_async, retry_settings=RETRY)]

    reads = bounded(lambda: asyncio.run(asyncio.wait_for(session(), DEADLINE_S)))
    assert reads == [[b"A/1/0", b"A/1/1"], [b"A/1/2", b"A/1/3"], [b"A/1/2", b"A/1/3"]]
    e = server.front.engine
    assert e.committed[1] == 4 and [e.told[t] for t in (1, 2, 3)] == ["COMMITTED", "ABORTED", "COMMITTED"]


@CHECKED
def test_a_client_gone_mid_transaction_has_it_rolled_back_and_the_server_serves_on(server: Running, checked: str) -> None:
    def gone() -> None:
        driver = ydb.Driver(endpoint=f"grpc://{server.bootstrap}", database="/local")
        driver.wait(timeout=T, fail_fast=True)
        driver.topic_client.create_topic("A", consumers=["c"])
        driver.topic_client.create_topic("B", consumers=["check"])
        session = ydb.QuerySession(driver).create()
        tx = session.transaction().begin()
        reader = driver.topic_client.reader("A", consumer="c")
        writers: list[Any] = []
        copy(driver, reader, tx, writers=writers)
        # the reader and the writer go first: left open under a stopped driver, the SDK's topic objects kept its
        # shared event loop busy, and later SDK calls in the process hung (seen under make quick's load)
        writers[0].close(flush=False, timeout=T)
        reader.close(timeout=T)
        driver.stop(timeout=T)  # no commit, no rollback, no DeleteSession: the attach stream just ends

    bounded(gone)
    e = server.front.engine
    for _ in range(50):  # the server sees the attach stream end a little later
        if e.told[1] != "none":
            break
        threading.Event().wait(0.1)
    assert e.told[1] == "ABORTED" and e.committed[1] == 0

    def again() -> list[bytes]:
        driver = ydb.Driver(endpoint=f"grpc://{server.bootstrap}", database="/local")
        try:
            driver.wait(timeout=T, fail_fast=True)
            with ydb.QuerySessionPool(driver) as pool, driver.topic_client.reader("A", consumer="c") as reader:
                return pool.retry_tx_sync(lambda tx: copy(driver, reader, tx), retry_settings=RETRY)  # type: ignore[no-any-return]
        finally:
            driver.stop(timeout=T)

    assert bounded(again) == [b"A/1/0", b"A/1/1"]
    assert server.front.engine.committed[1] == 2


def test_malformed_requests_get_a_grpc_error_and_the_server_serves_on(server: Running) -> None:
    import grpc

    with grpc.insecure_channel(server.bootstrap) as channel:
        call = channel.unary_unary("/Ydb.Query.V1.QueryService/CreateSession")
        with pytest.raises(grpc.RpcError) as bad:
            call(b"\xff\xff\xff not a protobuf", timeout=T)
        assert bad.value.code() in (grpc.StatusCode.INTERNAL, grpc.StatusCode.INVALID_ARGUMENT)  # type: ignore[attr-defined]
        stream = channel.stream_stream("/Ydb.Topic.V1.TopicService/StreamWrite")
        with pytest.raises(grpc.RpcError):
            list(stream(iter([b"\x0a\x05garbage"]), timeout=T))

    def select_1() -> Any:
        with sdk(server) as driver, ydb.QuerySessionPool(driver) as pool:
            return pool.execute_with_retries("select 1", retry_settings=RETRY)[0].rows[0]["column0"]

    assert bounded(select_1) == 1


@pytest.mark.tlc
@pytest.mark.txconform_serve(protocol="ydb")
def test_the_txconform_broker_fixture_serves_ydb_and_checks_the_session(txconform_broker: Any) -> None:
    first, _, b = copy_session(txconform_broker)
    assert first == [b"A/1/0", b"A/1/1"] and len(b) == 4  # the fixture checks the trace at teardown


@pytest.mark.tlc
def test_the_cli_serves_ydb_until_sigterm_and_its_trace_is_accepted(tmp_path: Path) -> None:
    trace = tmp_path / "cli.jsonl"
    proc = subprocess.Popen([sys.executable, "-m", "trace_check.cli.main", "serve", "--protocol", "ydb", "--port", "0",
                             "--trace", str(trace)], stdout=subprocess.PIPE, text=True, cwd=ROOT,
                            env={**os.environ, "GRPC_VERBOSITY": "NONE"})
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        m = re.search(r"grpc://127\.0\.0\.1:(\d+)", line)
        assert m, line
        _, _, b = copy_session(None, m.group(0))
        assert b == [b"A/1/0", b"A/1/1", b"A/1/2", b"A/1/3"]
        proc.send_signal(signal.SIGTERM)
        out, _ = proc.communicate(timeout=15)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(5)
    assert proc.returncode == 0 and "trace written" in out
    r = subprocess.run([sys.executable, "-m", "trace_check.cli.main", "check", str(trace)], capture_output=True, text=True,
                       timeout=120, cwd=ROOT)
    assert r.returncode == 0, r.stdout + r.stderr


def test_bad_options_are_one_line_errors() -> None:
    r = subprocess.run([sys.executable, "-m", "trace_check.cli.main", "serve", "--protocol", "ydb", "--version", "v9"],
                       capture_output=True, text=True, timeout=60, cwd=ROOT)
    assert r.returncode == 2 and "Traceback" not in r.stderr
    assert r.stderr.strip().splitlines() == ["txconform: error: --version: 'v9' is not one of v25, v26 (the spec's Version)"]


@pytest.mark.parametrize(("workload", "message"), [
    ("copy:msgs=x", "--workload: msgs=x: msgs needs a whole number"),
    ("copy:table=2", "--workload: unknown workload setting of the served engine 'table'; use msgs=N, batch=N, txns=N"),
    ("copy:workers=33", "--workload: workers=33: workers must be between 1 and 32"),
    ("transfer", "--workload: unknown workload 'transfer'"),
])
def test_bad_workloads_are_one_line_errors(workload: str, message: str) -> None:
    from ref_impl.ydb.serve.plugin import serve
    from trace_check.traces.protocol import ProtocolInputError, ServeOptions

    with pytest.raises(ProtocolInputError) as e:
        serve(ServeOptions(workload=workload))
    assert str(e.value).startswith(message) and "\n" not in str(e.value)


def test_the_workload_sets_the_served_engines_shape(tmp_path: Path) -> None:
    from ref_impl.ydb.serve.plugin import serve
    from trace_check.traces.protocol import ServeOptions

    running = serve(ServeOptions(workload="copy:msgs=3,batch=3,txns=2", trace=tmp_path / "s.jsonl")).start()

    def body() -> tuple[list[bytes], list[bytes]]:
        with sdk(running) as driver, ydb.QuerySessionPool(driver) as pool, \
                driver.topic_client.reader("A", consumer="c") as reader:
            read = pool.retry_tx_sync(lambda tx: copy(driver, reader, tx, most=None), retry_settings=RETRY)
            return read, read_all(driver, "B", "check", wait=0.5)

    try:
        read, b = bounded(body)
    finally:
        path = running.stop()
    assert read == b == [b"A/1/0", b"A/1/1", b"A/1/2"]
    assert path is not None
    head = json.loads(path.read_text().splitlines()[0])
    assert (head["constants"]["MsgsPerSrc"], head["constants"]["BatchMax"], head["constants"]["MaxTxns"]) == (3, 3, 1)



# --- fault switches and bugs (ref_impl/ydb/serve/faults.py) ---


# the SDK's retries, up to 3, with short backoffs (OVERLOADED's slow backoff would wait seconds)
FAULT_RETRY = ydb.RetrySettings(max_retries=3, fast_backoff_settings=ydb.BackoffSettings(ceiling=0, slot_duration=0.01),
                                slow_backoff_settings=ydb.BackoffSettings(ceiling=0, slot_duration=0.01))


def faulty_session(tmp_path: Path, faults: str = "", bugs: str = "") -> tuple[Any, int, Running, Path]:
    """One copy with the SDK's own retries (retry_tx_sync, up to 3) on a server with ``faults`` and
    ``bugs``: what the application got, the attempts it took, the stopped server and its trace."""
    from ref_impl.ydb.serve.plugin import serve
    from trace_check.traces.protocol import ServeOptions

    tmp_path.mkdir(parents=True, exist_ok=True)
    trace = tmp_path / "faulty.jsonl"
    running = serve(ServeOptions(faults=faults, bugs=bugs, trace=trace)).start()
    attempts: list[int] = []

    def body() -> tuple[list[bytes], list[bytes]]:
        with sdk(running) as driver, ydb.QuerySessionPool(driver) as pool, \
                driver.topic_client.reader("A", consumer="c") as reader:
            def attempt(tx: Any) -> list[bytes]:
                attempts.append(1)
                return copy(driver, reader, tx)

            try:
                read = pool.retry_tx_sync(attempt, retry_settings=FAULT_RETRY)
            except ydb.Error as e:
                read = [type(e).__name__.encode()]  # what the application got in the end
            return read, read_all(driver, "B", "check", wait=0.5)

    try:
        got = bounded(body)
    finally:
        running.stop()
    return got, len(attempts), running, trace  # type: ignore[return-value]


@pytest.mark.parametrize(("faults", "attempts", "taken"), [
    ("restart-B@CommitTransaction:1", 1, "TabletRestart(B)"),  # the tablet reads its record back: the commit goes on
    ("restart-A@CommitTransaction:1", 1, "TabletRestart(A)"),
    ("deadline@CommitTransaction:1", 2, "PlanDeadline(1)"),  # ABORTED: the SDK retries, the reader reads the batch again
    ("lose-lock@UpdateOffsetsInTransaction:1", 2, "LockLost(1)"),
    ("drop-readset@CommitTransaction:1", 1, "Lose(RS A->B of 1)"),  # tablet A sends it again: the commit goes on
    ("lose-session@CommitTransaction:1", 2, "LockLost(1)"),  # BAD_SESSION: the SDK retries on a new session
    ("lose-session@Write:1", 2, "LockLost(1)"),
])
def test_a_fault_switch_fails_ydb_underneath_the_sdk_which_retries_to_exactly_once(
        tmp_path: Path, faults: str, attempts: int, taken: str) -> None:
    (read, b), tries, running, trace = faulty_session(tmp_path, faults)
    assert read == b == [b"A/1/0", b"A/1/1"]  # exactly once in B, whatever the attempts
    assert tries == attempts
    assert running.front.faults_taken == [f"{faults}: {taken}"] and running.front.faults_missed == []
    head = json.loads(trace.read_text().splitlines()[0])
    assert head["faults"] == faults
    assert any(json.loads(line)["action"] == taken.split("(")[0] for line in trace.read_text().splitlines()[1:])


def test_a_lost_session_ends_its_attach_stream_and_the_sdk_goes_on_in_a_new_one(tmp_path: Path) -> None:
    (read, b), tries, running, trace = faulty_session(tmp_path, "lose-session@Write:1")
    assert read == b == [b"A/1/0", b"A/1/1"] and tries == 2
    assert len(running.front.lost_sessions) == 1 and running.shared.requests["CreateSession"] >= 2
    lost = next(iter(running.front.lost_sessions))
    assert any(f"session {lost!r} was lost underneath its transaction" in r for r in running.front.refusals)
    actions = [json.loads(line)["action"] for line in trace.read_text().splitlines()[1:]]
    assert actions[actions.index("LockLost"):].index("RollbackTx") > 0  # the engine's transaction ends with its session


@pytest.mark.parametrize("request_n", ["CommitTransaction:1", "Write:1"])
def test_a_split_of_b_stops_its_writes_and_the_sdk_gives_up_after_its_retries(tmp_path: Path, request_n: str) -> None:
    (read, b), tries, running, trace = faulty_session(tmp_path, f"split-B@{request_n}")
    # no child partition in the spec: every later write is refused (OVERLOADED, "Write to inactive partition 0",
    # which a tx writer does not retry), and retry_tx_sync gives up after its 3 retries
    assert read == [b"Overloaded"] and b == [] and tries == 4
    assert running.front.faults_taken == [f"split-B@{request_n}: Split(1)"]
    assert not running.front.active("B", 0) and running.front.active("A", 0)  # as DescribeTopic says
    assert sum("Write to inactive partition 0" in r for r in running.front.refusals) == 4 - (request_n == "CommitTransaction:1")
    actions = [json.loads(line)["action"] for line in trace.read_text().splitlines()[1:]]
    assert actions.count("PqWriteRefused") == actions.count("RollbackTx") >= 3 and "PartitionCommit" not in actions


def test_a_switch_whose_fault_is_never_enabled_is_reported_not_taken_later(tmp_path: Path) -> None:
    (read, b), tries, running, _ = faulty_session(tmp_path, "deadline@Write:1")  # nothing is proposed during a write
    assert read == b and tries == 1 and running.front.faults_taken == []
    assert running.front.faults_missed == ["deadline@Write:1 (transaction tx-4): PlanDeadline was never enabled while "
                                           "that request was served"]
    assert any("fault not taken: deadline@Write:1" in line for line in running.summary())


@pytest.mark.tlc
def test_sessions_with_faults_are_accepted_and_a_planted_bug_is_rejected(tmp_path: Path) -> None:
    for faults in ("restart-B@CommitTransaction:1", "lose-lock@CommitTransaction:1", "drop-readset@CommitTransaction:1",
                   "lose-session@Write:1", "split-B@CommitTransaction:1"):
        _, _, _, trace = faulty_session(tmp_path / faults.split("@")[0], faults)
        v = txconform_check(trace)
        assert v.ok, "\n".join(verdict_lines(v, trace))
    _, _, _, trace = faulty_session(tmp_path / "bug", bugs="visible_before_commit")  # B's log grows at the write
    v = txconform_check(trace)
    assert v.status.value == "rejected" and v.event is not None and v.event["action"] == "PqWrite", "\n".join(verdict_lines(v, trace))


@pytest.mark.parametrize(("option", "text", "message"), [
    ("faults", "restart-C@CommitTransaction:1",
     "--faults: 'restart-C@CommitTransaction:1': no fault kind 'restart-C'; the kinds are restart-A, restart-B, deadline, "
     "lose-lock, lose-session, drop-readset, split-B"),
    ("faults", "deadline@Produce:1", "--faults: 'deadline@Produce:1': no request 'Produce' takes a fault"),
    ("faults", "deadline@Write:0", "--faults: 'deadline@Write:0': N counts requests from 1"),
    ("faults", "deadline", "--faults: 'deadline' is not KIND@REQUEST:N"),
    ("faults", "deadline@Write:1,lose-lock@Write:1", "--faults: 'lose-lock@Write:1': request Write:1 already has a fault"),
    ("bugs", "no_such_bug", "--bugs: unknown bug 'no_such_bug'; the spec's Bugs are"),
])
def test_bad_fault_switches_and_bugs_are_one_line_errors(option: str, text: str, message: str) -> None:
    from ref_impl.ydb.serve.plugin import serve
    from trace_check.traces.protocol import ProtocolInputError, ServeOptions

    with pytest.raises(ProtocolInputError) as e:
        serve(ServeOptions(**{option: text}))
    assert str(e.value).startswith(message) and "\n" not in str(e.value)


def test_settling_among_the_live_transactions_takes_the_steps_looking_at_all_would(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Front.settle looks for the engine's next step among the transactions touched since it was
    last quiet before it looks at every one (a session's cost no longer grows with its age): the
    same sessions, with and without, give the same events."""
    from ref_impl.ydb.serve.front import Front

    def sessions() -> list[list[dict[str, Any]]]:
        runs = []
        running = Running(Options(port=0, messages=24, txns=12)).start()

        def twelve() -> None:
            with sdk(running) as driver, ydb.QuerySessionPool(driver) as pool, \
                    driver.topic_client.reader("A", consumer="c") as reader:
                for _ in range(12):
                    pool.retry_tx_sync(lambda tx: copy(driver, reader, tx), retry_settings=RETRY)

        try:
            bounded(twelve)
        finally:
            running.stop()
        runs.append(running.front.events)
        # at CommitTransaction the SDK has flushed its writes: a lost lock at UpdateOffsetsInTransaction
        # races the writer's stream, and two sessions may then differ before any settling
        for faults in ("restart-B@CommitTransaction:1", "lose-lock@CommitTransaction:1"):
            runs.append(faulty_session(tmp_path / faults.split("@")[0] / str(Front.look_at_all), faults)[2].front.events)
        return runs

    live = sessions()
    monkeypatch.setattr(Front, "look_at_all", True)
    assert sessions() == live and len(live[0]) == 12 * 27
