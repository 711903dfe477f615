"""The ``ydb`` SDK's names and call shapes over the engine's API (``api``), so that a test written
for the SDK ports line by line.

    pool = sdk.QuerySessionPool(driver)
    reader = driver.topic_client.reader("A", "c")

    def callee(tx):                                   # ydb.QueryTxContext
        batch = yield reader.receive_batch_with_tx(tx, max_messages=1)
        writer = yield driver.topic_client.tx_writer(tx, "B")
        for m in batch.messages:
            yield writer.write(sdk.TopicWriterMessage(data=m))
        yield tx.execute("UPSERT INTO rows (id, n) VALUES ($id, $n)")

    yield from pool.retry_tx_sync(callee, retry_settings=sdk.RetrySettings(max_retries=1))

The differences from the SDK are the engine's, each said where it is made:
- every call is a step of the spec, so the application awaits it by yielding it (as with the
  SDK's asyncio API, ``await`` becomes ``yield``), ``tx_writer`` of a write-only transaction too
  (it is the spec's ``BeginWrites``), and a callee is a generator run with ``yield from``;
- the spec names a transaction's shape when it begins (copy, read-only, write-only), so
  ``retry_tx_sync`` takes it (``shape=``);
- a message is the spec's: a message read from topic A (its ``Msg``), or, written by a write-only
  transaction, the application's next own message; ``TopicWriterMessage(seqno=...)`` must give
  the SeqNo the spec numbers it with;
- ``tx.execute`` (``api.Tx.execute``) takes one ``UPSERT`` of the table's one row (the spec's ``TableWrite``: a read
  and an upsert under an optimistic lock) and ``SELECT n``; ``commit_tx=True`` commits the transaction too;
- ``reader.receive_batch``, ``commit`` and ``commit_with_ack`` read and commit outside any transaction (the
  spec's ``PlainRead`` and ``CommitOffset``), one batch at a time;
- ``topic_client.writer(path, producer_id=...)`` writes outside any transaction (the spec's
  ``PlainWrite``); the driver gives each producer id the next of the spec's producers (0, -1,
  -2, ...), and a write is acknowledged (or Skipped) as it is taken, so ``flush`` waits for nothing.

``retry_tx_sync`` retries on what the SDK retries for a transaction (ABORTED, and a writer's
SESSION_EXPIRED after it rolls back), at most ``max_retries`` more times; it rolls the
transaction back when the callee raises, and lets anything else through.
"""

from __future__ import annotations

from collections.abc import Callable, Generator
from typing import Any

import attrs

from . import api
from .state import CONSUMER, Msg


@attrs.frozen
class RetrySettings:
    """ydb.RetrySettings: how many times a transaction is tried again."""

    max_retries: int = 10


@attrs.frozen
class TopicWriterMessage:
    """ydb.TopicWriterMessage: the data (a message read from topic A, or anything for the
    application's own message) and, optionally, its SeqNo."""

    data: Any = b""
    seqno: int | None = None


class TxWriter:
    """The SDK's transactional topic writer: ``write``, ``flush``, ``close``."""

    def __init__(self, writer: api.TxWriter) -> None:
        self._w = writer
        self.closed = False

    def write(self, message: TopicWriterMessage | Msg) -> api.Call:
        if self.closed:
            raise api.IllegalStateError("write: the writer is closed")
        m = message.data if isinstance(message, TopicWriterMessage) else message
        nxt = self._w.next_message()
        if not isinstance(m, Msg):  # the application's own message: the spec numbers it
            if self._w.tx.shape != "write":
                raise api.IllegalStateError("write: a copy transaction writes the messages it read (batch.messages); "
                                            "messages of the application's own are a write-only transaction's")
            m = nxt
        seqno = message.seqno if isinstance(message, TopicWriterMessage) else None
        if seqno is not None and seqno != m.off + 1:
            raise api.IllegalStateError(f"write: SeqNo {seqno} is not this message's: the spec numbers a producer's "
                                        f"messages by offset, and this one's SeqNo is {m.off + 1}")
        return self._w.write(m)

    def flush(self) -> api.Call:
        return self._w.flush()

    def close(self, flush: bool = True) -> api.Call:
        """close(flush=True): every write acknowledged, then the writer is closed. close(flush=False)
        closes it by force (the C++ SDK's Close(0), YDB's WriteToTopic_Demo_41): with a write
        unacknowledged, the commit then raises SESSION_EXPIRED without being sent (ForceClose)."""
        self.closed = True
        return self._w.close(flush)


@attrs.frozen
class InitInfo:
    """What writer.wait_init() returns: the producer's last SeqNo in the topic."""

    last_seqno: int


class PlainWriter:
    """topic_client.writer(path, producer_id=..., auto_seqno=...): a writer outside any transaction.
    ``write`` and ``write_with_ack`` answer "written", or "skipped" for a SeqNo the producer
    already wrote (the SDK's Skipped)."""

    def __init__(self, driver: api.Driver, producer: int, auto_seqno: bool) -> None:
        self._driver = driver
        self.producer = producer
        self.auto_seqno = auto_seqno
        self.closed = False

    def write(self, message: TopicWriterMessage) -> api.Call:
        if self.closed:
            raise api.IllegalStateError("write: the writer is closed")
        if self.auto_seqno and message.seqno is not None:
            raise api.IllegalStateError("write: this writer numbers its messages itself (auto_seqno=True); "
                                        "open it with auto_seqno=False to name SeqNos")
        if not self.auto_seqno and message.seqno is None:
            raise api.IllegalStateError("write: a writer with auto_seqno=False needs TopicWriterMessage(seqno=...)")
        return self._driver.write_plain(self.producer, message.seqno)

    write_with_ack = write

    def wait_init(self) -> api.Call:
        """writer.wait_init(): the producer's last SeqNo (0: none), as the partition reports it."""
        e = self._driver.engine
        return api.Call([], outcome=lambda: InitInfo(last_seqno=e.plain_next(self.producer)))

    def flush(self) -> api.Call:
        return api.Call([])

    def close(self, flush: bool = True) -> api.Call:
        self.closed = True
        return api.Call([])


class TopicClient:
    """driver.topic_client: the reader, the transactional writer and the plain writer."""

    def __init__(self, driver: api.Driver) -> None:
        self._driver = driver

    def writer(self, topic: str, producer_id: str | None = None, auto_seqno: bool = True) -> PlainWriter:
        """A writer outside any transaction; each producer id is one of the spec's producers, in the
        order they first appear (no producer id: a new one, as the SDK's random id is)."""
        if topic != "B":
            raise api.IllegalStateError(f"this engine writes topic 'B', not {topic!r}")
        producers = self._driver.producer_ids
        key = producer_id if producer_id is not None else f"random-{len(producers)}"
        if key not in producers:
            free = self._driver.engine.k.free_plain_producer(producers.values())
            if free is None:
                raise api.IllegalStateError(f"writer: this run has {len(producers)} producers (PlainProducers: the writers' "
                                            "and the other producer, only the other with Producers 'none'); make the engine "
                                            "with Constants(producers='partition', tx_writers=...)")
            producers[key] = free
        return PlainWriter(self._driver, producers[key], auto_seqno)

    def reader(self, topic: str, consumer: str = CONSUMER) -> api.TopicReader:
        return self._driver.reader(topic, consumer)

    def tx_writer(self, tx: api.Tx, topic: str) -> api.Call:
        """The writer bound to ``tx``: a write-only transaction's opens now (the spec's
        BeginWrites), a copy transaction's is the writer of what it read."""
        if tx.shape == "write":
            call = self._driver.tx_writer(tx, topic)
            opened = call.outcome
            call.outcome = lambda: TxWriter(opened())
            return call
        writer = TxWriter(tx.writer(topic))
        return api.Call([], outcome=lambda: writer)


class Driver(api.Driver):
    """ydb.Driver with its topic client."""

    @property
    def topic_client(self) -> TopicClient:
        return TopicClient(self)


Callee = Callable[[api.Tx], Generator[api.Call, Any, Any]]


class QuerySessionPool:
    """ydb.QuerySessionPool: ``retry_tx_sync`` begins a transaction, runs the callee, commits it,
    and tries again on a retryable error."""

    def __init__(self, driver: api.Driver) -> None:
        self._driver = driver

    def retry_tx_sync(self, callee: Callee, retry_settings: RetrySettings | None = None,
                      shape: str = "copy") -> Generator[api.Call, Any, Any]:
        e, w = self._driver.engine, self._driver.worker
        tries = (retry_settings or RetrySettings()).max_retries + 1
        for attempt in range(tries):
            tx = self._driver.begin_transaction(shape)
            try:
                result = yield from callee(tx)
                if _open(tx):
                    yield tx.commit()
                return result
            except (api.TransactionAborted, api.TopicWriteError) as err:
                if isinstance(err, api.TopicWriteError) and _open(tx):
                    yield tx.rollback()
                if attempt == tries - 1:
                    raise
            except BaseException as err:
                if _open(tx):
                    if not (e.k.rollbacks or e.writer_failed(w)):
                        raise api.IllegalStateError(
                            f"retry_tx_sync: the callee raised {type(err).__name__}, and the transaction cannot be "
                            "rolled back in this run (Rollbacks is false); make the engine with "
                            "Constants(rollbacks=True)") from err
                    yield tx.rollback()
                raise
        raise AssertionError("unreachable")


def _open(tx: api.Tx) -> bool:
    """The transaction began in the engine and is still open there (not committed, not rolled back)."""
    if not tx.id:
        return False
    c = tx.driver.engine.cl[tx.driver.worker]
    return c.tx == tx.id and c.phase in ("open", "flushed")
