"""The reference engine with open clients: what the YDB SDK's requests do to ``ref_impl/ydb``.

No gRPC here (``services`` decodes and encodes the wire); every method runs under the caller's
lock and either changes the engine by steps of its table of actions (``actions``), each emitting
one trace event, or raises ``FrontError`` with the YDB status and a message saying why, and then
has changed nothing the trace records.

The engine's model is consume-transform-produce: a transaction reads a batch ``[b, e)`` of a
partition of topic A as consumer ``c`` (the spec's ``ReadBatch``), writes the batch's messages to
topic B (``TxWrite``, one per message, in order), and commits (``Flush``, ``CommitTx``, then the
tablets' steps until ``KqpResult``). The SDK says these things in another order and on other
streams, so the front binds them together:

- the read: the SDK's reader gets batches on its StreamRead (the server sends them, at most
  BatchMax messages each) and says which it read in a transaction only at the commit, by
  ``UpdateOffsetsInTransaction`` (ydb-python-sdk ``ydb/_topic_reader/topic_reader_asyncio.py``,
  ``ReaderReconnector._commit_batches_with_tx``, a BEFORE_COMMIT callback of the transaction);
- the writes: its transactional writer sends them on StreamWrite with the transaction's identity,
  and waits for the first one's ack before the application goes on (``TxWriterAsyncIO.write``:
  the first write is ``write_with_ack``, ``ydb/_topic_writer/topic_writer_asyncio.py``).

So a transaction becomes the engine's at its first write: the read is then the oldest batch the
worker's reader was sent and no transaction took (``ReadBatch`` with it, then ``TxWrite``), or,
when the reader holds no such batch, the transaction only writes (``BeginWrites``: a write-only
transaction, the engine's shape "write", then ``TxWrite``). Or it becomes the engine's at
``UpdateOffsetsInTransaction`` if that comes first: the SDK sends it at the commit, so nothing was
written, and the transaction only reads (``ReadOnlyBatch`` with exactly the range it names: the
shape "read"). ``UpdateOffsetsInTransaction`` after writes must name the range the transaction
was bound to. A copy must write every message of its batch and name its range before the commit;
what else the SDK can send (a transaction that wrote part of its batch) is outside the model, and
the front says so instead of committing it.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from typing import Any

import attrs

from ..actions import ACTION, ACTIONS, SCHEDULER, arguments
from ..constants import Constants
from ..engine import Engine
from ..state import CONSUMER, RS
from .errors import FrontError
from .faults import Switch
from .sql import DeleteRow, SelectRow, Upsert
from .tables import Pending, Tables

SOURCE, TARGET = "A", "B"
SCHEDULED = tuple(a for a in ACTIONS if a.by == SCHEDULER and not a.fault)  # the engine's own steps (settle)
DATABASE = "/local"


@attrs.define
class Topic:
    name: str
    partitions: int
    consumers: list[str]


@attrs.define
class Tx:
    """A transaction of a query session (BeginTransaction); the engine's once bound (``engine_tx``)."""

    id: str
    session: str
    state: str = "open"  # open, committed, rolled_back, aborted, failed (a write refused), undetermined
    engine_tx: int = 0
    worker: str = ""
    partition: int = 0  # of A: the read's
    b: int = 0
    e: int = 0
    offsets_named: bool = False  # UpdateOffsetsInTransaction named the read range
    data: list[tuple[int, Stored]] = attrs.field(factory=list)  # (partition of B, the message)
    pending: Pending = attrs.field(factory=Pending)  # its table writes, applied at its commit (tables.py)
    table_version: int = -1  # the spec's row's version when it first touched a table (-1: never)
    table_step: bool = False  # the engine's TableWrite taken for it
    lock_broken: bool = False  # the row changed between its first table statement and its TableWrite


@attrs.define
class Stored:
    """A message of topic B's log, as readers get it: decoded (RAW), or as a writer encoded it with
    a custom codec (10000 and up), which readers get back with that codec to decode themselves."""

    data: bytes
    producer: str
    seq_no: int
    codec: int = 1  # Ydb.Topic.Codec: CODEC_RAW, or a custom one


@attrs.define
class ReaderStream:
    """One StreamRead: consumer c's reader of A (a worker's), or a reader of B (outside the spec: it only looks)."""

    id: int
    topic: str
    consumer: str
    worker: str = ""
    budget: int = 0  # bytes the client is ready for (ReadRequest)
    sessions: dict[int, int] = attrs.field(factory=dict)  # partition session id -> partition (1-based)
    started: set[int] = attrs.field(factory=set)  # sessions the client confirmed
    next_offset: dict[int, int] = attrs.field(factory=dict)  # partition -> next offset to send
    delivered: list[tuple[int, int, int]] = attrs.field(factory=list)  # (partition, b, e) sent, not yet taken by a transaction
    closed: bool = False


def normalize(path: str) -> str:
    """A topic path as the engine names it: ``/local/A`` and ``A`` are both ``A``."""
    p = path.strip()
    if p.startswith(DATABASE + "/"):
        p = p[len(DATABASE) + 1:]
    return p.strip("/")


def source_data(p: int, o: int) -> bytes:
    """The data of message ``o`` of partition ``p`` of A (the spec's Init holds MsgsPerSrc of each)."""
    return f"A/{p}/{o}".encode()


class Front:
    """The engine, the scheme (topics A and B once created), the query sessions and their
    transactions, and the topic streams."""

    look_at_all = False  # settle looks for each step among every transaction begun (the tests' yardstick)

    def __init__(self, k: Constants) -> None:
        if k.num_dst != 1:
            raise ValueError("the served engine has one partition of topic B (NumDst = 1): a writer session writes one partition")
        self.k = k
        self.events: list[dict[str, Any]] = []
        self.engine = Engine(k, emit=self.events.append)
        self.topics: dict[str, Topic] = {}
        self.dropped: set[str] = set()
        self.sessions: dict[str, set[str]] = {}  # query session -> its transactions
        self.txs: dict[str, Tx] = {}
        self.by_engine_tx: dict[int, Tx] = {}
        self.readers: dict[int, ReaderStream] = {}
        self.b_log: dict[int, list[Stored]] = {d: [] for d in k.dst_parts}
        self._ids = itertools.count(1)
        self._seen = 0  # events looked at for B's commits
        self.refusals: list[str] = []
        self.on_change: Callable[[], None] = lambda: None  # readers may have something to send
        self.on_session_lost: Callable[[str], None] = lambda sid: None  # its attach stream says BAD_SESSION and ends
        self.lost_sessions: set[str] = set()  # sessions a lose-session switch ended
        self.armed: tuple[Switch, str] | None = None  # a fault switch and its request's transaction id
        self.faults_taken: list[str] = []
        self.faults_missed: list[str] = []
        self.live: set[int] = set()  # the transactions a step touched since the engine was last quiet (settle)
        self.source: dict[tuple[int, int], Stored] = {}  # (partition, offset) of A -> the data a writer gave it (preload)
        self.source_read = False  # a reader of A was opened: A's data is fixed from then on
        self.plain_ids: dict[str, int] = {}  # a plain writer's producer id -> the spec's producer (PlainWrite)
        self.b_committed: dict[tuple[str, int], int] = {}  # (consumer, partition) of B -> its committed offset (outside the spec)
        self.tables = Tables()  # the tables' rows (outside the spec, whose one row stands for them all)

    # --- ids and errors ---

    def new_id(self, prefix: str) -> str:
        return f"{prefix}-{next(self._ids)}"

    def refuse(self, status: str, message: str) -> FrontError:
        self.refusals.append(message)
        return FrontError(status, message)

    # --- the scheme (Ydb.Topic.V1 CreateTopic, DescribeTopic, DropTopic) ---

    def _shape(self, name: str) -> int:
        if name == SOURCE:
            return self.k.num_src
        if name == TARGET:
            return self.k.num_dst
        raise self.refuse("SCHEME_ERROR", f"topic {name!r}: the reference engine has two topics, {SOURCE!r} (read by consumer "
                          f"{CONSUMER!r}, {self.k.num_src} partition(s), {self.k.msgs_per_src} messages each) and {TARGET!r} "
                          f"(written in transactions, {self.k.num_dst} partition(s))")

    def create_topic(self, path: str, partitions: int, consumers: list[str]) -> None:
        name = normalize(path)
        want = self._shape(name)
        if name in self.topics:
            raise self.refuse("ALREADY_EXISTS", f"topic {name!r} exists")
        if name in self.dropped:
            raise self.refuse("SCHEME_ERROR", f"topic {name!r} was dropped in this session: the engine's topics exist once "
                              "a session (start a new server for a new topic)")
        if partitions not in (0, want):
            raise self.refuse("BAD_REQUEST", f"topic {name!r} has {want} partition(s) in this engine's constants, not {partitions}")
        if name == SOURCE and CONSUMER not in consumers:
            raise self.refuse("BAD_REQUEST", f"topic {SOURCE!r} needs consumer {CONSUMER!r}: it is the consumer whose offsets "
                              "the engine's transactions commit")
        self.topics[name] = Topic(name, want, list(consumers))

    def topic(self, path: str) -> Topic:
        name = normalize(path)
        if name not in self.topics:
            # YDB's own answer to a path that is not there (the SDK's fixtures drop a topic before creating it):
            # not a refusal of the engine's
            raise FrontError("SCHEME_ERROR", f"path {path!r}: no such topic (create {SOURCE!r} and {TARGET!r} first)")
        return self.topics[name]

    def active(self, name: str, p: int) -> bool:
        """Whether partition ``p`` (from 0) of topic ``name`` takes writes: B's after a split does not."""
        return name != TARGET or self.engine.sealed[p + 1] == -1

    def alter_topic(self, path: str, add: list[str], drop: list[str], others: list[str]) -> None:
        """AlterTopic: consumers added and dropped (YDB's ``pq_schema_actor.cpp``: AddReadRuleToConfig,
        RemoveReadRuleFromConfig; a name twice is BAD_REQUEST, CheckConfig). A consumer of B reads
        outside the spec (its offsets are the server's, ``b_committed``) and may come and go at any
        time, in a transaction's middle too (YDB's WriteToTopic_Demo_39); A keeps its one consumer
        of the spec, ``c``. Any other setting is refused, named: the engine's topics keep the shape
        of its constants."""
        t = self.topic(path)
        if others:
            raise self.refuse("UNSUPPORTED", f"AlterTopic of {t.name!r}: {', '.join(others)} not served (the engine's topics "
                              "keep the shape of its constants; consumers may be added and dropped)")
        for c in add:
            if t.name == SOURCE:
                raise self.refuse("BAD_REQUEST", f"AlterTopic of {SOURCE!r}: consumer {c!r} cannot be added; the engine's "
                                  f"transactions read {SOURCE!r} as its one consumer {CONSUMER!r}")
            if c in t.consumers:
                raise self.refuse("BAD_REQUEST", f"AlterTopic of {t.name!r}: consumer {c!r} already exists")
            t.consumers.append(c)
        for c in drop:
            if c not in t.consumers:
                raise self.refuse("BAD_REQUEST", f"AlterTopic of {t.name!r}: no consumer {c!r} to drop (it has {t.consumers})")
            if t.name == SOURCE:
                raise self.refuse("BAD_REQUEST", f"AlterTopic of {SOURCE!r}: consumer {CONSUMER!r} is the one whose offsets "
                                  "the engine's transactions commit; it cannot be dropped")
            if any(not r.closed and r.topic == t.name and r.consumer == c for r in self.readers.values()):
                raise self.refuse("PRECONDITION_FAILED", f"AlterTopic of {t.name!r}: consumer {c!r} has a reader open")
            t.consumers.remove(c)
            self.b_committed = {k: v for k, v in self.b_committed.items() if k[0] != c}

    def drop_topic(self, path: str) -> None:
        t = self.topic(path)
        if any(not r.closed and r.topic == t.name for r in self.readers.values()):
            raise self.refuse("PRECONDITION_FAILED", f"topic {t.name!r} has readers")
        del self.topics[t.name]
        self.dropped.add(t.name)

    # --- query sessions and transactions (Ydb.Query.V1) ---

    def create_session(self) -> str:
        sid = self.new_id("session")
        self.sessions[sid] = set()
        return sid

    def session(self, sid: str) -> set[str]:
        if sid not in self.sessions:
            lost = " (lost underneath its client: the lose-session fault switch)" if sid in self.lost_sessions else ""
            raise self.refuse("BAD_SESSION", f"session {sid!r} does not exist or was deleted{lost}")
        return self.sessions[sid]

    def delete_session(self, sid: str) -> None:
        """The session ends: YDB rolls back its open transactions (they lose their locks)."""
        txs = self.sessions.pop(sid, set())
        for tid in sorted(txs):
            tx = self.txs[tid]
            if tx.state == "open":
                self._end_in_engine(tx)
                tx.state = "rolled_back"

    def begin(self, sid: str) -> str:
        txs = self.session(sid)
        tid = self.new_id("tx")
        self.txs[tid] = Tx(tid, sid)
        txs.add(tid)
        return tid

    def tx(self, tid: str, sid: str = "") -> Tx:
        tx = self.txs.get(tid)
        if tx is None or (sid and tx.session != sid):
            raise self.refuse("NOT_FOUND", f"transaction {tid!r} not found in session {sid!r}")
        if tx.session in self.lost_sessions:
            self.session(tx.session)  # BAD_SESSION, as YDB answers any request of a session it lost
        if tx.state == "failed":
            raise self.refuse("ABORTED", f"transaction {tid!r} was aborted: tablet {TARGET!r} refused its write")
        if tx.state != "open":
            raise self.refuse("NOT_FOUND", f"transaction {tid!r} is {tx.state.replace('_', ' ')}")
        return tx

    def commit(self, tid: str, sid: str) -> None:
        """COMMITTED, or FrontError(ABORTED) when the engine aborts it, or a refusal (the transaction
        is then rolled back in the engine)."""
        tx = self.tx(tid, sid)
        if not tx.engine_tx:
            if tx.data:
                raise self.refuse("BAD_REQUEST", "internal: writes without a bound transaction")
            if tx.table_version == -1:
                tx.state = "committed"  # nothing of it reached the engine: an empty transaction
                return
            # table statements only: the engine's write-only transaction with its row and nothing written to B
            self._bind(tx, self._idle_worker(), 0, 0, "BeginWrites")
        self._table_step(tx)
        if tx.lock_broken:
            self._end_in_engine(tx)
            tx.state = "aborted"
            raise self.refuse("ABORTED", f"Transaction locks invalidated: a table transaction {tid} read was written by "
                              "another transaction's commit before this one's")
        e, w = self.engine, tx.worker
        c = e.cl[w]
        shape = e.kqp[tx.engine_tx].shape
        problem = ""
        if shape != "copy":
            pass  # read-only: its range was named; write-only: it wrote at least once (its binding)
        elif not tx.offsets_named:
            problem = (f"transaction {tid} wrote to {TARGET!r} but read nothing of {SOURCE!r} in the transaction "
                       "(no UpdateOffsetsInTransaction): the engine's transaction reads a batch and writes it")
        elif c.sent != c.e - c.b:
            problem = (f"transaction {tid} read [{c.b}, {c.e}) of {SOURCE!r} partition {c.src - 1} and wrote {c.sent} of its "
                       f"{c.e - c.b} message(s) to {TARGET!r}: the engine's transaction writes every message it read")
        if problem:
            self._end_in_engine(tx)
            tx.state = "aborted"
            raise self.refuse("BAD_REQUEST", problem + "; it was rolled back")
        if c.phase == "open":
            self._step("Flush", w)
        self._step("CommitTx", w)
        self.settle()
        told = e.told[tx.engine_tx]
        if told == "none":  # the engine's own steps ran out before KQP answered (a fault left it waiting)
            tx.state = "undetermined"
            raise FrontError("UNDETERMINED", f"transaction {tid}: no answer from the participants (engine transaction "
                             f"{tx.engine_tx} is still being decided)")
        tx.state = "committed" if told == "COMMITTED" else "aborted"
        if told == "COMMITTED":
            self.tables.apply(tx.pending)
        else:
            raise FrontError("ABORTED", f"transaction {tid} was aborted by the participants (engine transaction {tx.engine_tx})")

    def rollback(self, tid: str, sid: str) -> None:
        tx = self.tx(tid, sid)
        self._end_in_engine(tx)
        tx.state = "rolled_back"

    def _end_in_engine(self, tx: Tx) -> None:
        if not tx.engine_tx:
            return
        c = self.engine.cl[tx.worker]
        if c.tx == tx.engine_tx and ACTION["RollbackTx"].enabled(self.engine, tx.worker):  # open, flushed, or its writer failed
            self._step("RollbackTx", tx.worker)
            self.settle()

    # --- fault switches (faults.py) ---

    def arm(self, switch: Switch, tid: str) -> None:
        """Take ``switch``'s fault at its first chance while the request on transaction ``tid`` is served."""
        self.armed = (switch, tid)
        self._fault()

    def disarm(self) -> None:
        """The request is served: a fault that never became enabled is reported, not taken later."""
        if self.armed is not None:
            switch, tid = self.armed
            self.faults_missed.append(f"{switch.describe()} (transaction {tid or '-'}): {switch.step} was never enabled "
                                      "while that request was served")
            self.armed = None

    def _fault(self) -> None:
        if self.armed is None:
            return
        switch, tid = self.armed
        action = ACTION[switch.step]
        tx = self.txs.get(tid)
        engine_tx = tx.engine_tx if tx is not None else 0
        args: list[Any]
        if switch.target in ("txn", "session"):
            args = [engine_tx] if engine_tx else []
        elif switch.target == "readset":
            args = sorted((m for m in self.engine.net if m.type == RS and m.tx == engine_tx), key=repr) if engine_tx else []
        elif switch.target == "partition":
            args = list(self.k.dst_parts)
        else:
            args = [switch.target]
        for arg in args:
            if action.run(self.engine, arg):
                self.armed = None
                shown = f"{arg.type} {arg.frm}->{arg.to} of {arg.tx}" if switch.target == "readset" else arg
                self.faults_taken.append(f"{switch.describe()}: {switch.step}({shown})")
                self._after()
                if switch.target == "session" and tx is not None:
                    self._lose_session(tx.session)
                return

    def _lose_session(self, sid: str) -> None:
        """The KQP session dies underneath its client (the ``lose-session`` switch): its attach
        stream says BAD_SESSION, its open transaction is rolled back in the engine, and the request
        being served is answered BAD_SESSION, as every later one on the session."""
        self.lost_sessions.add(sid)
        self.delete_session(sid)
        self.on_session_lost(sid)
        raise self.refuse("BAD_SESSION", f"session {sid!r} was lost underneath its transaction (the lose-session fault "
                          "switch): its transaction is rolled back")

    # --- the engine's steps ---

    def _step(self, name: str, arg: Any) -> None:
        self._fault()
        if not ACTION[name].run(self.engine, arg):
            raise self.refuse("INTERNAL_ERROR", f"internal: the engine's {name} is not enabled for {arg!r}")
        self._after()

    def settle(self) -> None:
        """Take the engine's own steps (tablets, coordinator, KQP, deliveries; never a fault: a
        fault is taken only by its switch, at its request) until none is enabled.

        Each step is looked for first among the transactions a step touched since the engine was
        last quiet (``live``), and only when none of theirs is enabled among every transaction
        begun: a session's old transactions are done, and looking through all of them before each
        step made a session quadratic in its transactions (4 a second at 370 with the SDK, against
        20 at 50). The last look is over every transaction, so the engine is quiet on return as
        before."""
        while True:
            self._fault()
            first = None if self.look_at_all else sorted(self.live)
            if not (self._take_one(first) or self._take_one(None)):
                break
        self.live.clear()

    def _take_one(self, txns: list[int] | None) -> bool:
        """Take the first enabled step of the engine's own, in the actions' order, over ``txns``
        (None: every transaction begun); whether one was."""
        for a in SCHEDULED:
            for arg in arguments(self.engine, a.over, txns):
                if a.run(self.engine, arg):
                    self._after()
                    return True
        return False

    def _after(self) -> None:
        """B's log grows at PartitionCommit of tablet B: its readers get the transaction's data.
        The transaction of every new event is live until the engine is quiet."""
        for ev in self.events[self._seen:]:
            if isinstance(ev.get("txn_id"), int):
                self.live.add(ev["txn_id"])
            published = ev["action"] == "PartitionCommit" or (ev["action"] == "PqImmediate" and ev.get("decision") == "commit")
            if published and ev.get("tablet") == TARGET:
                tx = self.by_engine_tx[ev["txn_id"]]
                d = ev["partition"]
                self.b_log[d].extend(s for dd, s in tx.data if dd == d)
                assert len(self.b_log[d]) == len(self.engine.target[d]), "B's stored data follows the engine's log"
        if len(self.events) > self._seen:
            self._seen = len(self.events)
            self.on_change()

    # --- binding a transaction to the engine's ReadBatch ---

    def _bind(self, tx: Tx, w: str, p: int, e: int, step: str = "ReadBatch") -> None:
        """Bind ``tx`` to the engine's transaction that ``step`` begins: ReadBatch or ReadOnlyBatch
        of [read_begin, e) of partition p by worker w, or BeginWrites by w (p and e unused)."""
        eng = self.engine
        if eng.next_tx > self.k.max_txns:
            raise self.refuse("OVERLOADED", f"the engine's {self.k.max_txns} transactions (MaxTxns) are used up: "
                              "start the server with more")
        c = eng.cl[w]
        if c.phase != "idle":
            raise self.refuse("PRECONDITION_FAILED", f"worker {w} (the reader) is in another transaction ({c.tx}) of the engine")
        self._step(step, w if step == "BeginWrites" else (w, p, e))
        tx.engine_tx, tx.worker, tx.partition = eng.cl[w].tx, w, p
        tx.b, tx.e = eng.cl[w].b, eng.cl[w].e
        self.by_engine_tx[tx.engine_tx] = tx
        self._table_step(tx)

    def _idle_worker(self) -> str:
        idle = [w for w in self.k.workers if self.engine.cl[w].phase == "idle"]
        if not idle:
            raise self.refuse("PRECONDITION_FAILED", "every worker of the engine is in another transaction")
        return idle[0]

    # --- table statements (sql.py; the rows in tables.py) ---

    def table_statement(self, tid: str, sid: str, stmt: Upsert | SelectRow | DeleteRow, params: dict[str, Any],
                        commit_now: bool) -> Any:
        """A single-row statement in transaction ``tid``: its result set (a SELECT) or None.

        The spec's table is one row under an optimistic lock, read and written by one step,
        ``TableWrite``, which takes the lock at the row's version [tli]; the row stands for every
        row of every table here. A transaction takes that step once it is the engine's (its
        binding: a read range, a write to B, or, with table statements only, at its commit as a
        write-only transaction that writes nothing to B); until then the row's version at its first
        table statement is kept, and if another transaction's commit moved it in between, the lock
        is broken: the commit is ABORTED ("Transaction locks invalidated"), and the engine's
        transaction rolled back. A SELECT in the request that commits a transaction with no table
        statement before it reads the committed rows and takes no lock: nothing can come between
        its read and its commit (YDB's single-statement read)."""
        tx = self.tx(tid, sid)
        if not self.k.table:
            raise self.refuse("UNSUPPORTED", "this server's engine has no table (its Table constant is off)")
        if not (isinstance(stmt, SelectRow) and commit_now and tx.table_version == -1):
            if tx.table_version == -1:
                tx.table_version = len(self.engine.rows)
            self._table_step(tx)
        if isinstance(stmt, Upsert):
            self.tables.upsert(stmt, params, tx.pending)
            return None
        if isinstance(stmt, DeleteRow):
            self.tables.delete(stmt, params, tx.pending)
            return None
        return self.tables.select(stmt, params, tx.pending)

    def _table_step(self, tx: Tx) -> None:
        """The spec's TableWrite for ``tx`` once it is the engine's and has touched a table."""
        if tx.table_version == -1 or tx.table_step or tx.lock_broken or not tx.engine_tx:
            return
        if len(self.engine.rows) != tx.table_version:
            tx.lock_broken = True  # a commit wrote the row after this transaction read it
            return
        if not ACTION["TableWrite"].enabled(self.engine, tx.worker):
            raise self.refuse("BAD_REQUEST", f"transaction {tx.id}: a table statement after its writes were flushed for "
                              "the commit is outside the engine's model")
        self._step("TableWrite", tx.worker)
        tx.table_step = True

    def _taken(self, w: str, p: int, e: int) -> None:
        """The batches worker w's reader was sent of partition p, up to offset e, are taken (by a
        transaction's range or a commit outside one): what is left of them starts at e."""
        r = self._worker_reader(w)
        if r is not None:
            r.delivered = [(q, max(x, e) if q == p else x, y) for (q, x, y) in r.delivered if q != p or y > e]

    def _worker_reader(self, w: str) -> ReaderStream | None:
        return next((r for r in self.readers.values() if not r.closed and r.worker == w), None)

    def write(self, tid: str, sid: str, path: str, data: bytes, producer: str, seq_no: int, codec: int = 1) -> None:
        """A write of the transactional writer: ``TxWrite`` (binding the transaction first), then
        the tablet's ``PqWrite``; the ack is "written in transaction"."""
        tx = self.tx(tid, sid)
        if normalize(path) != TARGET:
            raise self.refuse("BAD_REQUEST", f"the engine's transactions write topic {TARGET!r}, not {normalize(path)!r}")
        if not tx.engine_tx:
            cands = [(w, r) for w in self.k.workers if (r := self._worker_reader(w)) is not None and r.delivered
                     and self.engine.cl[w].phase == "idle"]
            if len(cands) > 1:
                raise self.refuse("PRECONDITION_FAILED", "a transaction of the engine writes the batch it read: several "
                                  "readers could have read it")
            if not cands:
                # no batch waits to be written: a write-only transaction (the engine's BeginWrites)
                self._bind(tx, self._idle_worker(), 0, 0, "BeginWrites")
            else:
                w, r = cands[0]
                p, b, e = r.delivered[0]
                if b != self.engine.read_begin(w, p):
                    raise self.refuse("PRECONDITION_FAILED", f"the batch [{b}, {e}) sent to the reader does not start where "
                                      f"the engine's reader reads ({self.engine.read_begin(w, p)})")
                self._bind(tx, w, p, e)
                r.delivered.pop(0)
        w = tx.worker
        if not ACTION["TxWrite"].enabled(self.engine, w):
            c = self.engine.cl[w]
            if c.shape == "write":
                raise self.refuse("BAD_REQUEST", f"transaction {tid} wrote {c.sent} message(s): a write-only transaction of "
                                  f"the engine writes at most {self.k.batch_max} (BatchMax)")
            raise self.refuse("BAD_REQUEST", f"transaction {tid} read {c.e - c.b} message(s) and writes them: a write "
                              "beyond them is outside the engine's model")
        d = self.engine.k.dest(self.engine.cl[w].src, self.engine.cl[w].b + self.engine.cl[w].sent)
        tx.data.append((d, Stored(data, producer, seq_no, codec)))
        seen = len(self.events)
        self._step("TxWrite", w)
        self.settle()
        if any(ev["action"] == "PqWriteRefused" and ev.get("txn_id") == tx.engine_tx for ev in self.events[seen:]):
            self._write_refused(tx, d)
        if not self.engine.wacked[tx.engine_tx] or len(self.engine.wacked[tx.engine_tx]) < self.engine.cl[w].sent:
            raise self.refuse("INTERNAL_ERROR", f"transaction {tid}: the write was not acknowledged by tablet {TARGET}")

    def _write_refused(self, tx: Tx, d: int) -> None:
        """Tablet B refused a write of ``tx`` (PqWriteRefused): its partition is inactive after a split
        (YDB answers OVERLOADED, "Write to inactive partition": partition_write.cpp replies
        WRITE_ERROR_PARTITION_INACTIVE, which ydb/services/persqueue_v1/actors/persqueue_utils.cpp
        ConvertPersQueueInternalCodeToStatus turns into OVERLOADED), or its supportive
        partition is gone with the transaction's lock (PRECONDITION_FAILED, as the C++ SDK's write
        session in YDB's WriteToTopic_Demo_12 and _14). The transaction can no longer commit, and the
        SDK cannot roll it back (its rollback first closes the failed writer, which raises the
        writer's error before anything is sent: ydb-python-sdk ``ydb/query/transaction.py``), so the
        engine rolls it back now (RollbackTx; the application's rollback, which the spec allows at
        any time before the commit); a later commit of it is ABORTED."""
        self._end_in_engine(tx)
        tx.state = "failed"
        if self.engine.sealed[d] != -1:
            raise self.refuse("OVERLOADED", f"Write to inactive partition {d - 1} (topic {TARGET!r} split: the partition "
                              f"takes no more writes; transaction {tx.id} is rolled back)")
        raise self.refuse("PRECONDITION_FAILED", f"transaction {tx.id}: its write to {TARGET!r} partition {d - 1} was refused "
                          "(its supportive partition is gone with the transaction's lock); it is rolled back")

    def update_offsets(self, tid: str, sid: str, consumer: str, topics: list[tuple[str, int, list[tuple[int, int]]]]) -> None:
        """UpdateOffsetsInTransaction: the read range joins the transaction (the spec folds it into ReadBatch)."""
        tx = self.tx(tid, sid)
        if consumer != CONSUMER:
            raise self.refuse("BAD_REQUEST", f"consumer {consumer!r}: the engine's transactions commit consumer {CONSUMER!r}'s offsets")
        if len(topics) != 1 or normalize(topics[0][0]) != SOURCE:
            raise self.refuse("BAD_REQUEST", f"the engine's transaction reads one partition of topic {SOURCE!r}, not "
                              f"{[normalize(t[0]) for t in topics]}")
        _, wire_partition, ranges = topics[0]
        p = wire_partition + 1
        ranges = sorted(ranges)
        # ydb-platform/ydb ydb/core/kqp/topics/kqp_topics.cpp, TConsumerOperations::AddOperationImpl: ranges of a
        # consumer's partition must not intersect ("offset ranges intersect"); the engine's ReadBatch is one interval
        if not ranges or any(x[1] != y[0] for x, y in itertools.pairwise(ranges)) or any(s >= t for s, t in ranges):
            raise self.refuse("BAD_REQUEST", f"offset ranges {ranges} are not one interval")
        b, e = ranges[0][0], ranges[-1][1]
        if tx.engine_tx:
            if self.engine.kqp[tx.engine_tx].shape == "write":
                raise self.refuse("BAD_REQUEST", f"transaction {tid} wrote before any batch of {SOURCE!r} was read, so the "
                                  "engine took it as write-only: read the batch first, then write it")
            if (p, b, e) != (tx.partition, tx.b, tx.e) or tx.offsets_named:
                raise self.refuse("BAD_REQUEST", f"the transaction was bound to the read [{tx.b}, {tx.e}) of partition "
                                  f"{tx.partition - 1} at its first write, not [{b}, {e}) of partition {wire_partition}: "
                                  "read one whole batch a transaction (receive_batch_with_tx with max_messages of at least "
                                  f"BatchMax = {self.k.batch_max})")
            tx.offsets_named = True
            return
        if p not in self.k.src_parts:
            raise self.refuse("BAD_REQUEST", f"partition {wire_partition} of {SOURCE!r} does not exist")
        w = self.engine.owner[p]
        begin = self.engine.read_begin(w, p)
        if b != begin or not ACTION["ReadOnlyBatch"].enabled(self.engine, (w, p, e)):
            raise self.refuse("BAD_REQUEST", f"the read [{b}, {e}) of partition {wire_partition} is not the engine's next read "
                              f"there: from {begin}, at most {self.k.batch_max} messages (BatchMax)")
        # the SDK names its offsets at the commit, after its writes: nothing written, a read-only transaction
        self._bind(tx, w, p, e, "ReadOnlyBatch")
        tx.offsets_named = True
        self._taken(w, p, e)

    # --- A's data, given by a writer before anyone reads A (preload) ---

    def preload(self, path: str, partition: int, data: bytes, producer: str, seq_no: int, codec: int = 1) -> int:
        """A write outside a transaction to topic A, before A is read: the data of the next of A's
        messages, which the spec's Init holds from the start (MsgsPerSrc a partition; the spec does
        not model data, so no step and no trace event). Its offset; refused once A was read, or when
        the partition's MsgsPerSrc messages all have their data."""
        if normalize(path) != SOURCE:
            raise self.refuse("UNSUPPORTED", f"a write outside a transaction to {normalize(path)!r}: the engine's writes to "
                              f"{TARGET!r} are transactional (use topic_client.tx_writer(tx, path)); only {SOURCE!r}'s "
                              "messages may be given their data before it is read")
        p = partition + 1
        if p not in self.k.src_parts:
            raise self.refuse("BAD_REQUEST", f"partition {partition} of {SOURCE!r} does not exist")
        if self.source_read:
            raise self.refuse("UNSUPPORTED", f"a write to {SOURCE!r} after it was read: its {self.k.msgs_per_src} messages "
                              "(MsgsPerSrc) are fixed from its first reader on (write them before reading)")
        o = sum(1 for q, _ in self.source if q == p)
        if o >= self.k.msgs_per_src:
            raise self.refuse("UNSUPPORTED", f"partition {partition} of {SOURCE!r} holds {self.k.msgs_per_src} messages "
                              "(MsgsPerSrc, --workload copy:msgs=N): every one has its data")
        self.source[(p, o)] = Stored(data, producer, seq_no, codec)
        return o

    # --- writes outside a transaction to topic B (the spec's PlainWrite) ---

    def plain_producer(self, producer: str) -> int:
        """The spec's producer for a plain writer's producer id: each new id takes the next of the
        engine's producers that write only outside transactions (Others)."""
        if producer not in self.plain_ids:
            free = self.k.free_plain_producer(self.plain_ids.values())
            if free is None:
                raise self.refuse("UNSUPPORTED", f"producer {producer!r}: this server has {len(self.plain_ids)} producers "
                                  "for writes outside a transaction (the spec's Others); start it with --workload "
                                  "copy:others=N")
            self.plain_ids[producer] = free
        return self.plain_ids[producer]

    def plain_write(self, data: bytes, producer: str, seq_no: int, codec: int = 1) -> int | None:
        """A write outside any transaction to topic B: the spec's PlainWrite. Its offset in B, or
        None when the partition answers AlreadyWritten (the SDK's Skipped)."""
        q, o = self.plain_producer(producer), seq_no - 1
        if o not in self.k.app_offsets:
            raise self.refuse("UNSUPPORTED", f"SeqNo {seq_no}: this server's messages have SeqNos 1..{len(self.k.app_offsets)} "
                              "(the spec's AppOffsets); start it with a larger --workload copy:plain=N")
        if not ACTION["PlainWrite"].enabled(self.engine, (q, o)):
            if self.engine.plain_sent >= self.k.max_plain_writes:
                raise self.refuse("UNSUPPORTED", f"this server takes {self.k.max_plain_writes} writes outside a transaction "
                                  "(MaxPlainWrites); start it with --workload copy:plain=N")
            raise self.refuse("OVERLOADED", f"producer {producer!r}: a transaction of the producer is being committed "
                              "(the partition answers Blocked); write again")
        d = self.k.dest(q, o)
        repeat = self.engine.plain_repeat(q, o)
        if not repeat:
            self.b_log[d].append(Stored(data, producer, seq_no, codec))
        self._step("PlainWrite", (q, o))
        assert len(self.b_log[d]) == len(self.engine.target[d]), "B's stored data follows the engine's log"
        self.settle()
        return None if repeat else len(self.b_log[d]) - 1

    def source_last_seq_no(self, producer: str) -> int:
        return max((s.seq_no for s in self.source.values() if s.producer == producer), default=0)

    # --- topic readers (StreamRead) ---

    def open_reader(self, consumer: str, paths: list[str]) -> ReaderStream:
        names = [normalize(p) for p in paths]
        if len(names) != 1:
            raise self.refuse("BAD_REQUEST", f"a reader reads one topic here, not {names}")
        t = self.topic(names[0])
        if consumer not in t.consumers:
            raise self.refuse("SCHEME_ERROR", f"topic {t.name!r} has no consumer {consumer!r} (it has {t.consumers})")
        r = ReaderStream(next(self._ids), t.name, consumer)
        if t.name == SOURCE:
            if consumer != CONSUMER:
                raise self.refuse("BAD_REQUEST", f"topic {SOURCE!r} is read by consumer {CONSUMER!r} in this engine")
            self.source_read = True
            free = [w for w in self.k.workers if self._worker_reader(w) is None]
            if not free:
                # the newest reader of a worker replaces the old one (the SDK reconnects after a rollback)
                w = min(self.k.workers, key=lambda w: self._worker_reader(w).id)  # type: ignore[union-attr]
                old = self._worker_reader(w)
                assert old is not None
                self.close_reader(old)
                free = [w]
            r.worker = free[0]
            parts = [p for p in self.k.src_parts if self.engine.owner[p] == r.worker]
        else:
            parts = list(self.k.dst_parts)
        for p in parts:
            r.sessions[next(self._ids)] = p
        self.readers[r.id] = r
        return r

    def committed_offset(self, r: ReaderStream, p: int) -> int:
        return self.engine.committed[p] if r.topic == SOURCE else self.b_committed.get((r.consumer, p), 0)

    # --- commits outside a transaction (the read stream's CommitOffsetRequest, the CommitOffset call) ---

    def commit_offset(self, r: ReaderStream, psid: int, ends: list[tuple[int, int]]) -> int:
        """A commit outside any transaction of the batches [start, end) of partition session ``psid``:
        for A, the engine reads from where its reader is up to the last end, a batch of at most
        BatchMax at a time (PlainRead), and commits each (CommitOffset); an end at or below that is
        stale and moves nothing (partition.cpp CommitUserAct). A reader of B is outside the spec: its
        consumer's offset is kept here. Returns the committed offset the answer names."""
        if r.closed:
            raise self.refuse("BAD_SESSION", "a commit on a read stream the server closed (its worker's newer reader replaced "
                              "it): the read session is dead (YDB's WRONG_COOKIE)")
        if psid not in r.sessions:
            raise self.refuse("BAD_REQUEST", f"commit: unknown partition session {psid}")
        if not ends or any(s >= t or s < 0 for s, t in ends):
            raise self.refuse("BAD_REQUEST", f"commit: offset ranges {ends} are not [start, end) with start < end")
        p = r.sessions[psid]
        if r.topic != SOURCE:
            key = (r.consumer, p)
            self.b_committed[key] = max(self.b_committed.get(key, 0), min(max(t for _, t in ends), len(self.b_log[p])))
            return self.b_committed[key]
        return self._commit_source(r.worker, p, max(t for _, t in ends))

    def _commit_source(self, w: str, p: int, end: int) -> int:
        eng = self.engine
        end = min(end, self.k.msgs_per_src)  # a commit to the future moves the offset to the partition's end
        if eng.read_begin(w, p) < end and eng.cl[w].phase != "idle":
            raise self.refuse("PRECONDITION_FAILED", f"commit outside a transaction while worker {w} (the reader) is in "
                              f"transaction {eng.cl[w].tx} of the engine: commit the batches read outside it first")
        while (b := eng.read_begin(w, p)) < end:
            e = min(end, b + self.k.batch_max)
            if not ACTION["PlainRead"].enabled(eng, (w, p, e)):
                raise self.refuse("OVERLOADED", f"the engine's {self.k.max_plain_commits} batches committed outside "
                                  "transactions (MaxPlainCommits) are used up: start the server with --workload copy:commits=N")
            self._step("PlainRead", (w, p, e))
            self._step("CommitOffset", w)
        self._taken(w, p, eng.committed[p])
        return eng.committed[p]

    def commit_offset_call(self, path: str, partition: int, consumer: str, offset: int, read_session_id: str) -> None:
        """The CommitOffset call (topic_client.commit_offset): in the named read session, or with
        none, where the partition's reader is; a forward move only (YDB moves a session-less commit
        backwards too, a rewind the spec does not model)."""
        name = normalize(path)
        t = self.topic(name)
        if consumer not in t.consumers:
            raise self.refuse("SCHEME_ERROR", f"topic {name!r} has no consumer {consumer!r} (it has {t.consumers})")
        if name != SOURCE:
            raise self.refuse("UNSUPPORTED", f"CommitOffset of {name!r}: the engine's consumer offsets are those of {SOURCE!r}")
        p = partition + 1
        if p not in self.k.src_parts:
            raise self.refuse("BAD_REQUEST", f"partition {partition} of {SOURCE!r} does not exist")
        w = self.engine.owner[p]
        if read_session_id:
            r = next((x for x in self.readers.values() if f"read-{x.id}" == read_session_id), None)
            if r is None or r.closed or r.worker != w:
                raise self.refuse("BAD_SESSION", f"read session {read_session_id!r} is not partition {partition}'s live "
                                  "session (YDB's WRONG_COOKIE: set offset in already dead session)")
        if offset < self.engine.committed[p]:
            raise self.refuse("UNSUPPORTED", f"CommitOffset to {offset}, behind the committed offset "
                              f"{self.engine.committed[p]}: a rewind, which the spec does not model")
        self._commit_source(w, p, offset)

    def end_offset(self, r: ReaderStream, p: int) -> int:
        return self.k.msgs_per_src if r.topic == SOURCE else len(self.b_log[p])

    def start_session(self, r: ReaderStream, psid: int, read_offset: int | None) -> None:
        if psid not in r.sessions:
            raise self.refuse("BAD_REQUEST", f"unknown partition session {psid}")
        p = r.sessions[psid]
        start = self.engine.read_begin(r.worker, p) if r.topic == SOURCE else self.b_committed.get((r.consumer, p), 0)
        if read_offset is not None and read_offset != start:
            raise self.refuse("BAD_REQUEST", f"read_offset {read_offset}: the engine's reader reads partition {p - 1} from {start}")
        r.started.add(psid)
        r.next_offset[p] = start

    def take_batches(self, r: ReaderStream) -> list[tuple[int, int, list[tuple[int, bytes, Stored | None]]]]:
        """What the reader is sent now: (session, partition, [(offset, data, stored)]), a batch of at most BatchMax a partition of A."""
        out: list[tuple[int, int, list[tuple[int, bytes, Stored | None]]]] = []
        if r.closed:
            return out
        for psid in sorted(r.started):
            p = r.sessions[psid]
            x, end = r.next_offset[p], self.end_offset(r, p)
            if x >= end or r.budget <= 0:
                continue
            y = min(end, x + self.k.batch_max) if r.topic == SOURCE else end
            msgs: list[tuple[int, bytes, Stored | None]] = []
            for o in range(x, y):
                if r.topic == SOURCE:
                    given = self.source.get((p, o))
                    msgs.append((o, given.data if given else source_data(p, o), given))
                else:
                    s = self.b_log[p][o]
                    msgs.append((o, s.data, s))
            r.budget -= sum(len(m[1]) for m in msgs)
            r.next_offset[p] = y
            if r.topic == SOURCE:
                r.delivered.append((p, x, y))
            out.append((psid, p, msgs))
        return out

    def close_reader(self, r: ReaderStream) -> None:
        r.closed = True
        r.delivered.clear()
