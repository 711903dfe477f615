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
  and an upsert under an optimistic lock) and ``SELECT 1``.

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


class TopicClient:
    """driver.topic_client: the reader and the transactional writer."""

    def __init__(self, driver: api.Driver) -> None:
        self._driver = driver

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
