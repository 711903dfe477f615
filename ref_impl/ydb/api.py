"""The client library applications use: the shape of YDB's SDK (the topic reader, a writer bound
to a transaction, ``tx.commit()`` and ``tx.rollback()``, a table upsert), over the engine.

Applications are coroutines, as with the SDK's asyncio API: each call returns a ``Call``, which
the application awaits by yielding it (``batch = yield reader.receive_batch_with_tx(tx, 2)``).
A call takes its steps of the table of actions (``actions``) when the scheduler picks them, so
that the steps of every worker, tablet and fault interleave as the spec allows; it then waits
until the engine has answered, and the application gets the answer or the error.

    ReadBatch   reader.receive_batch_with_tx(tx, max_messages): the transaction begins, reads
                a batch and adds the read range to the transaction (BeginTx, the read and
                UpdateOffsetsInTransaction, as the spec folds them)
    ReadOnlyBatch  the same for a transaction begun read-only
                (driver.begin_transaction(shape="read")): it commits the batch's offsets and
                writes nothing; KQP runs it as an immediate transaction on A's partition
    ReadMore    reader.receive_batch_with_tx(tx, n) again in the same transaction: the reader goes on
                from its position in the transaction's partition (up to MaxReads reads); a copy
                transaction writes the new batch after the one before
    UpdateOffsets  tx.update_offsets_in_transaction(begin, end): a read-only transaction names
                a range of its own (the Topic service's UpdateOffsetsInTransaction); BadRequest
                if it intersects the transaction's ranges (the transaction is then gone)
    BeginWrites driver.tx_writer(tx, "B") for a transaction begun write-only (shape="write"):
                the transaction begins and its writer writes new messages of the application's
                own (writer.next_message(): producer 0, SeqNo = offset + 1), up to BatchMax, with
                no read
    TxWrite     tx.writer("B").write(message); in a write-only transaction, driver.tx_writer(tx,
                "B") again opens its next writer, a producer of its own (up to TxWriters)
    TableWrite  tx.upsert("rows", row)
    Flush       writer.flush(), and tx.commit() first of all: every write acknowledged;
                TopicWriteError if a write was refused or lost
    CommitTx    tx.commit(): COMMITTED, or TransactionAborted once KQP answers ABORTED
    RollbackTx  tx.rollback(): after a writer failure, or whenever the application chooses before
                the commit when the engine's constants allow it (Rollbacks); the reader then
                reads again from the committed offset
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Callable, Generator
from typing import Any

import attrs

from .constants import producer
from .engine import Engine
from .state import CONSUMER, Msg


class YdbError(Exception):
    """A YDB status, as the SDK raises it."""

    status = "GENERIC_ERROR"


# What each of the trace's reasons means, as the text of YDB's ABORTED issue would say it.
ABORT_MEANINGS = {
    "Gap": "the consumer's committed offset is behind the range's begin: the messages in between would be lost",
    "Conflict": "the consumer's committed offset is past the range's begin: another transaction committed this range",
    "BehindEnd": "the range ends past the partition's end",
    "WriteIdDeleted": "the transaction's supportive partition was deleted (its lock was lost): its writes are gone",
    "WriteIdMissing": "a write of the transaction never reached its supportive partition",
    "Inactive": "a partition the transaction writes was split: it is inactive, and writing is not possible",
    "MinSeqNo": "the producer's SeqNo does not move forward: a later write of the same producer was published first",
    "LocksBroken": ("Transaction locks invalidated: another transaction's committed write broke the row's lock, "
                    "or the session's lock is gone"),
    "Expired": "the proposal was not planned before its deadline",
    "Ranges": ("Incorrect offset ranges in the transaction: the ranges named leave a hole, so KQP refuses the "
               "commit before asking any participant"),
}


class BadRequest(YdbError):
    """BAD_REQUEST: an offset range that intersects the transaction's ("offset ranges intersect",
    from KQP; the transaction is invalidated), or one past the partition's end ("incorrect offset
    range (commit to the future)", from the partition on KQP's immediate path)."""

    status = "BAD_REQUEST"


class TransactionAborted(YdbError):
    """ABORTED: the transaction did not commit (a participant refused it, its read range no
    longer starts at the committed offset, its proposal expired); the reader re-reads.
    ``reason`` is the trace's word for why (a key of ``ABORT_MEANINGS``), when a participant gave one."""

    status = "ABORTED"

    def __init__(self, message: str, reason: str | None = None) -> None:
        super().__init__(message)
        self.reason = reason


class TopicWriteError(YdbError):
    """A write of the transaction was refused or lost: it can never be acknowledged."""

    status = "SESSION_EXPIRED"


class IllegalStateError(YdbError):
    status = "PRECONDITION_FAILED"


class PartitionExpired(YdbError):
    """The SDK's TopicReaderPartitionExpiredError, from commit_with_ack: the group gave the
    partition to another reader, so this reader's partition session is gone and the partition
    refused the commit (WRONG_COOKIE, "set offset in already dead session"). The batch may be
    read and processed again by the partition's new reader: outside a transaction, at least once."""

    status = "BAD_SESSION"


def _nothing() -> Any:
    return None


@attrs.define
class Call:
    """One awaited call: the steps it takes, in order (an action of the table and a function
    giving its argument now), then what it waits for and what it returns."""

    steps: list[tuple[str, Callable[[], Any]]]
    done: Callable[[], bool] = lambda: True  # after its steps: has the engine answered?
    outcome: Callable[[], Any] = _nothing  # the answer (or raises the error)
    fails: Callable[[], YdbError | None] = lambda: None  # instead of its next step: the error
    taken: int = 0
    optional: frozenset[int] = frozenset()  # steps skipped when, their turn come, they are not enabled

    def next_step(self) -> tuple[str, Any] | None:
        if self.taken >= len(self.steps):
            return None
        name, arg = self.steps[self.taken]
        return name, arg()


@attrs.frozen
class Batch:
    """What a read returns: the transaction's read range of one partition of topic A (``tx_id``
    0: a batch read outside any transaction, receive_batch)."""

    tx_id: int
    partition: int
    messages: tuple[Msg, ...]


App = Generator[Call, Any, None]

_UPSERT = re.compile(r"^\s*(?:UPSERT|REPLACE)\s+INTO\s+`?(\w+)`?", re.I)
_SELECT_N = re.compile(r"^\s*SELECT\s+(\d{1,9})\s*;?\s*$", re.I)


class Driver:
    """One worker's connection (the SDK's ydb.Driver with its topic and query clients): its topic
    reader, its transactions and their writers."""

    def __init__(self, engine: Engine, worker: str) -> None:
        if worker not in engine.cl:
            raise IllegalStateError(f"no worker {worker!r} in this run's constants")
        self.engine = engine
        self.worker = worker
        self.producer_ids: dict[str, int] = {}  # the SDK's producer ids of plain writers, as the spec's producers

    def reader(self, topic: str = "A", consumer: str = CONSUMER) -> TopicReader:
        if (topic, consumer) != ("A", CONSUMER):
            raise IllegalStateError(f"this engine has one reader: consumer {CONSUMER!r} of topic 'A', not {consumer!r} of {topic!r}")
        return TopicReader(self)

    def begin_transaction(self, shape: str = "copy") -> Tx:
        """A transaction object; the transaction begins at its first read (the spec folds them),
        or, write-only, when its writer opens. The spec names the shape at the begin: "copy"
        (read a batch, write it to B), "read" (read-only: the batch's offsets commit, nothing is
        written), "write" (write-only: the application's own messages, no read)."""
        shapes = self.engine.k.shapes
        if shape not in shapes:
            raise IllegalStateError(f"begin_transaction: this run's TxShapes are {', '.join(shapes)}, not {shape!r}; "
                                    f"make the engine with Constants(shapes=...), or simulate with --workload "
                                    f"copy:shapes={'+'.join(sorted({*shapes, shape}))}")
        return Tx(self, shape)

    def write_outside_tx(self, tx: Tx) -> Call:
        """The same producer as write-only transaction ``tx`` writes a message with no
        transaction (the SDK's topic_client.writer(path, producer_id=...) beside its tx_writer):
        the SDK's automatic SeqNo continues from the producer's last SeqNo in the main partition,
        and the message is visible at once; the transaction, whose SeqNo it has now passed, will be
        ABORTED at its commit (YDB's WriteToTopic_Demo_3). Returns the message written."""
        e, w = self.engine, self.worker
        if tx.driver is not self or tx.shape != "write" or not tx.id:
            raise IllegalStateError("write_outside_tx: names an open write-only transaction of this worker, after its writer opened")
        if e.k.producers != "partition" or e.k.max_non_tx_writes < 1:
            raise IllegalStateError("write_outside_tx: this run has no writes outside transactions (MaxNonTxWrites is 0 "
                                    "or Producers is not 'partition'); simulate with --workload copy:producers=partition,nontx=1")
        before = {d: len(e.target[d]) for d in e.k.dst_parts}

        def outcome() -> Msg:
            return next(e.target[d][-1] for d in e.k.dst_parts if len(e.target[d]) > before[d])

        return Call([("NonTxWrite", lambda: w)], outcome=outcome)

    def write_plain(self, producer: int = 0, seqno: int | None = None) -> Call:
        """A write outside any transaction, at any time (the SDK's topic_client.writer(path,
        producer_id=...) and writer.write(TopicWriterMessage(data, seqno=...))): as producer 0
        (the application's), -1 (another) or a later writer's (-2, ...), with ``seqno`` as named
        (auto_seqno=False) or the SDK's automatic one (the producer's last plus one). It waits
        while a transaction of the producer is between its predicate and its commit. Returns
        "written", or "skipped" when the partition answers AlreadyWritten (a SeqNo at or below the
        producer's last: the SDK's Skipped)."""
        e = self.engine
        if producer not in e.k.plain_producers:
            raise IllegalStateError(f"write_plain: producer {producer} is not one of this run's "
                                    f"({', '.join(map(str, e.k.plain_producers))}: the writers' and the other producer)")
        if e.plain_sent >= e.k.max_plain_writes:
            raise IllegalStateError(f"write_plain: this run makes at most {e.k.max_plain_writes} writes outside a transaction "
                                    "(MaxPlainWrites); make the engine with Constants(max_plain_writes=...), "
                                    "or simulate with --workload copy:plain=N")
        o = e.plain_next(producer) if seqno is None else seqno - 1
        if o not in e.k.app_offsets:
            raise IllegalStateError(f"write_plain: SeqNo {o + 1} is past this run's messages "
                                    f"(1..{len(e.k.app_offsets)}: MaxTxns * BatchMax + the writes outside transactions)")
        repeat = [False]  # decided when the step is taken: the state it is listed in is the one it runs in

        def arg() -> tuple[int, int]:
            repeat[0] = e.plain_repeat(producer, o)
            return producer, o

        return Call([("PlainWrite", arg)], outcome=lambda: "skipped" if repeat[0] else "written")

    def write_by_other_producer(self, tx: Tx) -> Call:
        """Another producer (its own producer_id: topic_client.writer(path, producer_id=...))
        writes a message outside any transaction to the partition that ``tx`` wrote first: it is
        visible at once, and ``tx``'s messages land after it at the commit (YDB's
        WriteToTopic_Demo_2 and _7). Returns the message written, (-1, SeqNo - 1)."""
        e, w = self.engine, self.worker
        if tx.driver is not self or not tx.id or e.cl[w].tx != tx.id or e.cl[w].sent < 1:
            raise IllegalStateError("write_by_other_producer: names an open transaction of this worker, after its first write")
        if e.k.max_other_writes < 1:
            raise IllegalStateError("write_by_other_producer: this run has no other producer (MaxOtherWrites is 0); "
                                    "make the engine with Constants(max_other_writes=1), or simulate with --workload copy:others=1")
        c = e.cl[w]
        d = e.k.dest(c.src, c.b)
        return Call([("OtherProducerWrite", lambda: w)], outcome=lambda: e.target[d][-1])

    def tx_writer(self, tx: Tx, topic: str = "B") -> Call:
        """Open a write-only transaction's writer (the SDK's topic_client.tx_writer(tx, path));
        returns the writer, which writes messages of the application's own (``next_message()``).
        The first opens the transaction (BeginWrites); each later one is the transaction's next
        writer, with a producer id of its own (writer g writes as producer 0, -2, -3, ...; YDB's
        WriteToTopic_Demo_15 and _45), up to TxWriters; opening it takes no step."""
        if tx.driver is not self or tx.shape != "write":
            raise IllegalStateError("tx_writer: opens a writer of a write-only transaction "
                                    "(begin_transaction(shape='write')) of this worker")
        if topic != "B":
            raise IllegalStateError(f"this engine writes topic 'B', not {topic!r}")
        e, w = self.engine, self.worker
        if tx.id:
            tx._open("tx_writer")
            g = len(tx._writers)
            if g >= e.k.tx_writers:
                raise IllegalStateError(f"tx_writer: this run's transactions open at most {e.k.tx_writers} writers (TxWriters); "
                                        "make the engine with Constants(tx_writers=...), or simulate with --workload copy:writers=N")
            writer = TxWriter(tx, g)
            tx._writers.append(writer)
            return Call([], outcome=lambda: writer)

        def outcome() -> TxWriter:
            c = e.cl[w]
            tx.id, tx.base = c.tx, c.b
            return tx.writer(topic)

        return Call([("BeginWrites", lambda: w)], outcome=outcome)

    @property
    def has_table(self) -> bool:
        return self.engine.k.table


class TopicReader:
    """Consumer c's reader of topic A: it reads from its position in each partition the group
    gave its worker, or from the committed offset in a new partition session and after an abort."""

    def __init__(self, driver: Driver) -> None:
        self.driver = driver
        self.last = 0  # the partition read last: the reader takes its partitions in turn

    def _choice(self, max_messages: int) -> tuple[str, int, int] | None:
        e, w = self.driver.engine, self.driver.worker
        owned = [p for p in e.k.src_parts if e.owner[p] == w and e.read_begin(w, p) < e.k.msgs_per_src]
        if not owned:
            return None
        p = next((p for p in owned if p > self.last), owned[0])
        b = e.read_begin(w, p)
        return (w, p, min(b + max_messages, e.k.msgs_per_src))

    def receive_batch_with_tx(self, tx: Tx, max_messages: int) -> Call:
        if tx.driver is not self.driver or tx.shape == "write":
            raise IllegalStateError("receive_batch_with_tx: reads in a transaction of this worker "
                                    "(a write-only one does not read)")
        if not 1 <= max_messages <= self.driver.engine.k.batch_max:
            raise IllegalStateError(f"max_messages must be in 1..{self.driver.engine.k.batch_max} (BatchMax)")
        e, w = self.driver.engine, self.driver.worker
        if tx.id:
            return self._read_more(tx, max_messages)

        def outcome() -> Batch:
            c = e.cl[w]
            tx.id, self.last = c.tx, c.src
            return Batch(c.tx, c.src, tuple(Msg(c.src, o) for o in range(c.b, c.e)))

        step = "ReadOnlyBatch" if tx.shape == "read" else "ReadBatch"
        return Call([(step, lambda: self._choice(max_messages))], outcome=outcome)

    def has_messages(self) -> bool:
        """Whether a partition the group gave this reader has messages left to read."""
        return self._choice(1) is not None

    def receive_batch(self, max_messages: int) -> Call:
        """A batch read outside any transaction (PlainRead), to be committed with ``commit`` or
        ``commit_with_ack``. The worker holds it until then: this engine's reader has one such
        batch at a time, and begins no transaction meanwhile."""
        e, w = self.driver.engine, self.driver.worker
        if not 1 <= max_messages <= e.k.batch_max:
            raise IllegalStateError(f"max_messages must be in 1..{e.k.batch_max} (BatchMax)")
        if e.cl[w].phase != "idle":
            raise IllegalStateError("receive_batch: this worker is in a transaction or holds a batch it has not "
                                    "committed; this engine's reader reads outside a transaction from an idle worker")
        if e.plain_reads() >= e.k.max_plain_commits:
            raise IllegalStateError(f"receive_batch: this run reads at most {e.k.max_plain_commits} batches outside "
                                    "transactions (MaxPlainCommits); make the engine with Constants(max_plain_commits=...), "
                                    "or simulate with --workload copy:commits=N")

        def outcome() -> Batch:
            c = e.cl[w]
            self.last = c.src
            return Batch(0, c.src, tuple(Msg(c.src, o) for o in range(c.b, c.e)))

        return Call([("PlainRead", lambda: self._choice(max_messages))], outcome=outcome)

    def _commit(self, batch: Batch, raise_refused: bool) -> Call:
        e, w = self.driver.engine, self.driver.worker
        if batch.tx_id:
            # The C++ SDK throws here (TxUsage Offsets_Cannot_Be_Promoted_When_Reading_In_A_Transaction):
            # the transaction commits the batch's offsets, so the reader may not.
            raise IllegalStateError(f"commit: the batch was read in transaction {batch.tx_id}, which commits its "
                                    "offsets; offsets cannot be promoted when reading in a transaction")
        c = e.cl[w]
        if c.phase != "plain" or (c.src, c.b, c.e) != (batch.partition, batch.messages[0].off, batch.messages[-1].off + 1):
            raise IllegalStateError("commit: not the batch this reader holds (receive_batch's last, uncommitted)")
        before = set(e.plain_commits)

        def outcome() -> None:
            new = e.plain_commits - before
            if raise_refused and any(r[4] == "dead" for r in new):
                raise PartitionExpired(f"partition {batch.partition}: the partition session is closed (the group gave "
                                       "the partition to another reader); the commit was refused")

        return Call([("CommitOffset", lambda: w)], outcome=outcome)

    def commit(self, batch: Batch) -> Call:
        """reader.commit(batch): the batch's end offset is committed on the read stream, outside any
        transaction (CommitOffset); the SDK does not wait for the answer, so a refusal is silent."""
        return self._commit(batch, raise_refused=False)

    def commit_with_ack(self, batch: Batch) -> Call:
        """reader.commit_with_ack(batch): as commit, and waits for the partition's answer: a refused
        commit (a dead partition session) raises PartitionExpired; a stale one is OK."""
        return self._commit(batch, raise_refused=True)

    def _read_more(self, tx: Tx, max_messages: int) -> Call:
        """A further read in the transaction: the reader takes its partitions in turn, so with
        MaxPartsRead = 2 a batch of its next partition (ReadOther: a second range of the
        transaction), else from its position in the transaction's partition (ReadMore)."""
        e, w = self.driver.engine, self.driver.worker
        tx._open("receive_batch_with_tx")
        c = e.cl[w]
        if c.reads >= e.k.max_reads:
            raise IllegalStateError(f"receive_batch_with_tx: this run's transactions read at most {e.k.max_reads} "
                                    "batches (MaxReads); make the engine with Constants(max_reads=...), or simulate "
                                    "with --workload copy:reads=N")
        other = e.other_partitions(w)
        if e.k.max_parts_read >= 2 and not e.kqp[tx.id].src2 and not c.ranges and other:
            q = next((p for p in other if p > c.src), other[0])
            qb = e.read_begin(w, q)

            def other_outcome() -> Batch:
                self.last = q
                return Batch(tx.id, q, tuple(Msg(q, o) for o in range(qb, e.kqp[tx.id].e2)))

            return Call([("ReadOther", lambda: (w, q, min(qb + max_messages, e.k.msgs_per_src)))], outcome=other_outcome)
        if e.kqp[tx.id].src2:
            raise IllegalStateError("receive_batch_with_tx: the transaction read two partitions (MaxPartsRead is 2): "
                                    "it reads no more")
        p, b = c.src, c.e

        def outcome() -> Batch:
            return Batch(tx.id, p, tuple(Msg(p, o) for o in range(b, e.cl[w].e)))

        return Call([("ReadMore", lambda: (w, p, min(b + max_messages, e.k.msgs_per_src)))], outcome=outcome)


class Tx:
    """A transaction of the SDK: its topic writer, its table upsert, commit and rollback."""

    def __init__(self, driver: Driver, shape: str = "copy") -> None:
        self.driver = driver
        self.shape = shape
        self.id = 0  # KQP's TxId, also the WriteId; known once the transaction has read (or opened its writer)
        self.base = 0  # a write-only transaction's first message is (0, base): SeqNo base + 1
        self._writers: list[TxWriter] = []  # tx.writer() is the first; tx_writer opens more (write-only)

    def _open(self, what: str) -> None:
        c = self.driver.engine.cl[self.driver.worker]
        if not self.id or c.tx != self.id or c.phase not in ("open", "flushed"):
            raise IllegalStateError(f"{what}: the transaction is not open")

    def writer(self, topic: str = "B") -> TxWriter:
        if topic != "B":
            raise IllegalStateError(f"this engine writes topic 'B', not {topic!r}")
        if self.shape == "read":
            raise IllegalStateError("writer: a read-only transaction writes nothing (begin_transaction(shape='read'))")
        self._open("writer")
        if not self._writers:
            self._writers.append(TxWriter(self))
        return self._writers[0]

    def update_offsets_in_transaction(self, begin: int, end: int) -> Call:
        """The Topic service's UpdateOffsetsInTransaction for the partition this read-only
        transaction read: the application names [begin, end) as processed (it read those
        messages outside the transaction), and their offsets commit with the transaction.
        KQP keeps the ranges as an interval set: a range that intersects it raises BadRequest
        and ends the transaction; ranges that leave a hole make the commit ABORTED ("Incorrect
        offset ranges in the transaction"); a range past the partition's end makes it
        BAD_REQUEST on the immediate path, ABORTED on the distributed one."""
        if self.shape != "read":
            raise IllegalStateError("update_offsets_in_transaction: names ranges of a read-only transaction "
                                    "(begin_transaction(shape='read')), after its read")
        self._open("update_offsets_in_transaction")
        e, w, tx = self.driver.engine, self.driver.worker, self.id
        if e.cl[w].ranges >= e.k.max_ranges:
            raise IllegalStateError(f"update_offsets_in_transaction: this run's transactions name at most {e.k.max_ranges} "
                                    "ranges of their own (MaxRanges); make the engine with Constants(max_ranges=...)")
        if not (0 <= begin < end <= min(begin + e.k.batch_max, e.k.msgs_per_src + 1)):
            raise IllegalStateError(f"update_offsets_in_transaction: [{begin}, {end}) must be a non-empty range of at most "
                                    f"{e.k.batch_max} offsets (BatchMax) ending at most at {e.k.msgs_per_src + 1}")

        def outcome() -> None:
            if e.told[tx] == "BAD_REQUEST":
                raise BadRequest(f"transaction {tx}: offset ranges intersect ([{begin}, {end}) and the transaction's); "
                                 "the transaction is no longer valid (BAD_REQUEST)")

        return Call([("UpdateOffsets", lambda: (w, begin, end))], outcome=outcome)

    def execute(self, query: str, parameters: dict[str, Any] | None = None, commit_tx: bool = False) -> Call:
        """The SDK's tx.execute(query, parameters, commit_tx): an ``UPSERT`` of the table's one row (a
        read and an upsert under an optimistic lock: ``upsert``), or ``SELECT n``. With
        ``commit_tx=True`` the statement also commits the transaction, as ``commit()`` does (YDB's
        TxUsage WriteToTopic_Demo_43 and _44 commit through a query: the writes are flushed first);
        its outcome is the statement's result, or the commit's error."""
        if (n := _SELECT_N.match(query)) is not None:
            value = int(n.group(1))
            statement = Call([], outcome=lambda: [[value]])
        elif (m := _UPSERT.match(query)) is not None:
            statement = self.upsert(m.group(1), dict(parameters or {}))
        else:
            raise IllegalStateError(f"execute: {query.strip()[:60]!r} is not a statement of the spec, which has one "
                                    "table row: use one UPSERT INTO <table> (a read and an upsert of the row) or SELECT n")
        if not commit_tx:
            return statement
        commit = self.commit()

        def outcome() -> Any:
            commit.outcome()
            return statement.outcome()

        first = len(statement.steps)
        return Call(statement.steps + commit.steps, done=commit.done, outcome=outcome,
                    fails=commit.fails,
                    optional=frozenset(first + i for i in commit.optional))

    def upsert(self, table: str, row: dict[str, Any]) -> Call:
        """Read the table's row and upsert it (``SELECT`` then ``UPSERT`` in ``tx.execute``): the read
        takes an optimistic lock, which another transaction's committed write of the row breaks, and
        the commit is then ABORTED ("Transaction locks invalidated")."""
        if not self.driver.has_table:
            raise IllegalStateError("upsert: this run has no table (Table is false)")
        self._open("upsert")
        return Call([("TableWrite", lambda: self.driver.worker)])

    def _flush_failed(self) -> YdbError | None:
        """The writer failed: a write can never be acknowledged and the SDK has no reconnect left
        to send it again (while it has, it reconnects: Resend)."""
        e, w = self.driver.engine, self.driver.worker
        if e.writer_failed(w) and not e.resend_enabled(w):
            return TopicWriteError(f"transaction {self.id}: a write was refused or lost")
        return None

    def commit(self, rollback_meanwhile: bool = False) -> Call:
        """Flush the writers, then commit; COMMITTED, or raises TransactionAborted (BadRequest for a
        range past the partition's end on the immediate path; TopicWriteError for a failed writer). With
        ``rollback_meanwhile`` another task of the application calls ``tx.rollback()`` while the
        commit is under way (the SDK lets a second thread do so): YDB's session refuses it
        ("Pending previous query completion": SESSION_BUSY), so the commit's outcome stands."""
        self._open("commit")
        e, w, tx = self.driver.engine, self.driver.worker, self.id
        steps = [("Flush", lambda: w)] if e.cl[w].phase == "open" else []
        steps.append(("CommitTx", lambda: w))
        optional: frozenset[int] = frozenset()
        if rollback_meanwhile:
            optional = frozenset({len(steps)})
            steps.append(("RollbackTx", lambda: w))

        def outcome() -> str:
            if e.told[tx] == "BAD_REQUEST":
                raise BadRequest(f"transaction {tx}: incorrect offset range (commit to the future): the range ends "
                                 f"past the partition's end (BAD_REQUEST)")
            if e.told[tx] != "COMMITTED":
                reason = e.why_aborted.get(tx) or ("Expired" if e.expired[tx] else None)
                meaning = f": {ABORT_MEANINGS[reason]} ({reason})" if reason else ""
                raise TransactionAborted(f"transaction {tx} was aborted (ABORTED){meaning}", reason)
            return "COMMITTED"

        return Call(steps, done=lambda: e.told[tx] != "none", outcome=outcome, fails=self._flush_failed,
                    optional=optional)

    def rollback(self) -> Call:
        """Roll the transaction back: its writes are never published, its read range is read again."""
        self._open("rollback")
        e, w = self.driver.engine, self.driver.worker
        if not e.k.rollbacks and not e.writer_failed(w):
            raise IllegalStateError("rollback: this run's constants allow a rollback only after a write failed "
                                    "(Rollbacks is false); make the engine with Constants(rollbacks=True), "
                                    "or simulate with --workload copy:rollback=true")
        return Call([("RollbackTx", lambda: w)])


class TxWriter:
    """A topic writer bound to a transaction: its writes go to supportive partitions of B
    under the transaction's WriteId and become visible when the transaction commits. Writer
    ``g`` of a write-only transaction writes as producer 0 (g = 0), -2, -3, ...; a copy has one."""

    def __init__(self, tx: Tx, g: int = 0) -> None:
        self.tx = tx
        self.g = g

    def write(self, message: Msg) -> Call:
        self.tx._open("write")
        e, w, g = self.tx.driver.engine, self.tx.driver.worker, self.g
        if message != e.next_write(w, g):
            raise IllegalStateError(f"write: the writer sends its messages in SeqNo order; next is {e.next_write(w, g)}")
        return Call([("TxWrite", lambda: (w, g))])

    def next_message(self) -> Msg:
        """The message the writer sends next: the batch's next one, or (write-only) this
        writer's next own message (its producer, its next SeqNo)."""
        return self.tx.driver.engine.next_write(self.tx.driver.worker, self.g)

    def _mine(self) -> list[Msg]:
        e, w = self.tx.driver.engine, self.tx.driver.worker
        return [m for m in e.sent_writes(w) if self.tx.shape != "write" or m.src == producer(self.g)]

    def flush(self) -> Call:
        """Done when every write of the transaction is acknowledged; TopicWriteError if one never will be."""
        self.tx._open("flush")
        return Call([("Flush", lambda: self.tx.driver.worker)], fails=self.tx._flush_failed)

    def close(self, flush: bool = True) -> Call:
        """close(flush=True) waits until this writer's writes are acknowledged (the transaction's
        other writers may go on writing: WriteToTopic_Demo_15); with one writer it is a flush.
        close(flush=False) closes the writer by force (the C++ SDK's Close(0), YDB's
        WriteToTopic_Demo_41; ForceClose): with a write unacknowledged, the writer never flushes
        and the commit raises TopicWriteError (SESSION_EXPIRED) unsent."""
        e, w = self.tx.driver.engine, self.tx.driver.worker
        if flush and e.k.tx_writers > 1 and self.tx.shape == "write":
            self.tx._open("close")
            tx = self.tx.id

            def acked() -> bool:
                return all(m in e.wacked[tx] for m in self._mine())

            def outcome() -> None:
                if not acked():
                    raise TopicWriteError(f"transaction {tx}: a write of writer {self.g} was refused or lost")

            return Call([], done=lambda: acked() or self.tx._flush_failed() is not None, outcome=outcome)
        if flush:
            return self.flush()
        e, w = self.tx.driver.engine, self.tx.driver.worker
        if not e.unacked_writes(w):
            return Call([])  # nothing unacknowledged: a forced close loses nothing
        if not e.k.force_closes:
            raise IllegalStateError("close(flush=False): this run's writers are not closed by force "
                                    "(ForceCloses is false); make the engine with Constants(force_closes=True), "
                                    "or simulate with --workload copy:close=true")
        # skipped if every write is acknowledged by the time the step's turn comes
        return Call([("ForceClose", lambda: w)], optional=frozenset({0}))


def copy_app(driver: Driver, batch_sizes: Callable[[], int], rollback_here: Callable[[], bool] = lambda: False,
             shapes: Callable[[], str] = lambda: "copy", outside_here: Callable[[], bool] = lambda: False,
             write_counts: Callable[[], int] | None = None, table_here: Callable[[], bool] = lambda: True,
             range_here: Callable[[Batch], tuple[int, int] | None] = lambda batch: None,
             more_here: Callable[[Tx], bool] = lambda tx: False,
             other_here: Callable[[], bool] = lambda: False,
             close_here: Callable[[], bool] = lambda: False,
             writer_counts: Callable[[], int] = lambda: 1,
             plain_here: Callable[[], tuple[int, int | None] | None] = lambda: None,
             plain_read_here: Callable[[TopicReader], int | None] = lambda reader: None,
             first_writer: Callable[[int], int] = lambda writers: 0) -> App:
    """The workload: read a batch of topic A, write it to topic B (and a row to the table), and
    commit the read offsets, the writes and the row in one transaction; again and again. Where
    ``rollback_here()`` says so (after the read, after a write, before the commit), the
    application rolls the transaction back instead. ``shapes()`` picks each transaction's
    shape: a read-only one commits its batch's offsets with no writer; a write-only one writes
    messages of its own with no read (``write_counts()`` of them, default ``batch_sizes()``; none
    makes an empty transaction), and, where ``outside_here()`` says so after its first write,
    the same producer writes a message outside the transaction. With a table, the transaction
    reads and upserts its row where ``table_here()`` says so. After a read-only transaction's read,
    ``range_here(batch)`` may name a range of its own (UpdateOffsetsInTransaction): BAD_REQUEST
    ends the transaction, and the reader reads again. Where ``more_here(tx)`` says so, a copy or
    read-only transaction reads another batch after its writes so far (ReadMore). Where
    ``other_here()`` says so after a transaction's first write, another producer writes outside
    any transaction to the same partition. Where ``close_here()`` says so after its writes, the
    application closes its writer by force; the commit then fails and it rolls back. A write-only
    transaction opens ``writer_counts()`` writers (producers of their own) and writes with them in
    turn, ``first_writer(n)`` of its n writers first. Before each transaction, where
    ``plain_here()`` names a producer and a SeqNo (None: the automatic one), the application writes a message outside any transaction, and while
    ``plain_read_here(reader)`` names a batch size, it reads a batch outside any transaction and
    commits it with commit_with_ack (a refused commit, PartitionExpired, is left: the partition's
    new reader reads the batch again)."""
    reader = driver.reader("A", CONSUMER)
    while True:
        plain = plain_here()
        if plain is not None:
            yield driver.write_plain(*plain)
        while (size := plain_read_here(reader)) is not None:
            batch = yield reader.receive_batch(size)
            with contextlib.suppress(PartitionExpired):
                yield reader.commit_with_ack(batch)
        tx = driver.begin_transaction(shapes())
        writer: TxWriter | None
        partition = 0  # the partition of A read (none for a write-only transaction)
        start = 0  # which of a write-only transaction's writers writes first
        if tx.shape == "write":
            writer = yield driver.tx_writer(tx, "B")
            writers = [writer]
            for _ in range(writer_counts() - 1):
                writers.append((yield driver.tx_writer(tx, "B")))
            if len(writers) > 1:
                start = first_writer(len(writers))
            # placeholders: each write-only write is its writer's next own message
            to_write = tuple(Msg(0, tx.base + i) for i in range((write_counts or batch_sizes)()))
        else:
            batch = yield reader.receive_batch_with_tx(tx, batch_sizes())
            partition = batch.partition
            to_write = batch.messages if tx.shape == "copy" else ()
            named = range_here(batch) if tx.shape == "read" else None
            if named is not None:
                try:
                    yield tx.update_offsets_in_transaction(*named)
                except BadRequest:
                    continue  # the transaction is gone; the reader reads again
            if rollback_here():
                yield tx.rollback()
                continue
            writer = tx.writer("B") if tx.shape == "copy" else None
        rolled_back = False
        while True:
            for n, m in enumerate(to_write):
                assert writer is not None
                if tx.shape == "write":
                    by = writers[(start + n) % len(writers)]
                    yield by.write(by.next_message())
                else:
                    yield writer.write(m)
                if n == 0 and tx.shape == "write" and outside_here():
                    yield driver.write_outside_tx(tx)
                if n == 0 and other_here():
                    yield driver.write_by_other_producer(tx)
                if rollback_here():
                    yield tx.rollback()
                    rolled_back = True
                    break
            if rolled_back or tx.shape == "write" or not more_here(tx):
                break
            batch = yield reader.receive_batch_with_tx(tx, batch_sizes())  # reads after writes
            to_write = batch.messages if tx.shape == "copy" else ()
        if rolled_back:
            continue
        if writer is not None and to_write and close_here():
            yield writer.close(flush=False)
        if driver.has_table and table_here():
            yield tx.upsert("rows", {"tx": tx.id, "partition": partition})
        try:
            if rollback_here():
                if writer is not None:
                    yield writer.flush()
                yield tx.rollback()
                continue
            yield tx.commit(rollback_meanwhile=rollback_here())
        except TopicWriteError:
            yield tx.rollback()
        except (TransactionAborted, BadRequest):
            pass  # the reader re-reads the batch from the committed offset
