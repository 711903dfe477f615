"""The spec's variables (YdbTopics: owner, cl, kqp, nextTx, net, sup, committed, target, rows,
urows, meta, pdur, ptx, plan, pending, nextStep, expired, the ghosts and the fault counters) and
the records they hold, each named as the spec's type alias.

A leaf of the engine: it imports only ``constants``. The components (``worker``, ``kqp``,
``tablet``, ``network``) extend ``State`` with their actions; ``engine.Engine`` combines them.
Sets of names are only ever iterated sorted, so that a run does not depend on Python's string
hashing: the same seed gives the same trace in every process.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

import attrs

from .constants import Constants

CONSUMER = "c"  # the one consumer of topic A (the spec's abstraction)
OTHER_PRODUCER = -1  # the spec's OtherProducer: writes outside transactions only (its messages are (-1, o))

NONE = "none"
COMMIT, ABORT = "commit", "abort"
# The spec's net message types.
WRITE, RS, RS_ACK = "Write", "RS", "RSAck"
# The spec's worker phases, session states and (volatile, durable) transaction states.
PHASES = ("idle", "open", "flushed", "committing", "plain")  # plain: a batch read outside a transaction
SESSION_STATES = ("none", "open", "proposing", "planned", "done")
TX_STATES = ("NONE", "PREPARED", "PLANNED", "WAIT_RS", "EXECUTING", "WAIT_RS_ACKS", "DELETED", "EXPIRED")
DURABLE_STATES = ("NONE", "PREPARED", "PLANNED", "WAIT_RS", "EXECUTED", "DELETED", "EXPIRED")
SUP_STATES = ("none", "open", "closed", "deleted", "done")
GONE_STATES = ("NONE", "DELETED", "EXPIRED")  # a participant holds nothing of the transaction


@attrs.frozen(order=True)
class Msg:
    """A message of topic A, identified by its partition and offset (the spec's $msg)."""

    src: int
    off: int


NO_MSG = Msg(0, 0)


@attrs.define
class Worker:
    """A worker's SDK state (the spec's $worker)."""

    pos: dict[int, int]  # the reader's position per partition of A (-1: read from the committed offset)
    phase: str = "idle"
    shape: str = "copy"
    tx: int = 0
    src: int = 0
    b: int = 0
    e: int = 0
    sent: int = 0
    row: bool = False
    hung: bool = False
    ranges: int = 0  # the ranges of its own the read-only transaction named (UpdateOffsets)
    reads: int = 0  # the batches the transaction read (ReadBatch or ReadOnlyBatch, then ReadMore)
    closed: bool = False  # the transactional writer was closed by force (ForceClose)
    gsent: dict[int, int] = attrs.field(factory=dict)  # writer g -> the writes it sent (a write-only transaction)


@attrs.define
class Session:
    """The KQP session's view of a transaction (the spec's $session)."""

    st: str = "none"
    shape: str = "copy"
    w: str = ""
    src: int = 0
    b: int = 0
    e: int = 0
    dsts: set[int] = attrs.field(factory=set)
    lock: str = "alive"
    prepared: set[str] = attrs.field(factory=set)
    refused: bool = False
    results: set[str] = attrs.field(factory=set)
    aborted: bool = False
    depth: int = 0
    pdepth: int = 0
    named: set[int] = attrs.field(factory=set)  # the offsets a read-only transaction named (ghost of ExactlyOnce)
    bad: bool = False  # the immediate path answered BAD_REQUEST ("commit to the future")
    prods: set[int] = attrs.field(factory=set)  # the producers a write-only transaction wrote as
    src2: int = 0  # a second partition of A the transaction read (0: none), and its range [b2, e2)
    b2: int = 0
    e2: int = 0


@attrs.define
class Sup:
    """A supportive partition of tablet B (the spec's $sup)."""

    st: str = "none"
    data: list[Msg] = attrs.field(factory=list)


@attrs.define
class Durable:
    """A participant's durable keys of a transaction (the spec's $durable)."""

    st: str = "NONE"
    step: int = 0
    dec: str = NONE
    done: set[int] = attrs.field(factory=set)
    depth: int = 0


@attrs.define
class Volatile:
    """A participant's volatile state of a transaction (the spec's $volatile)."""

    st: str = "NONE"
    step: int = 0
    own: str = NONE
    dec: str = NONE
    rs: set[str] = attrs.field(factory=set)
    abort_seen: bool = False
    acked: set[str] = attrs.field(factory=set)
    done: set[int] = attrs.field(factory=set)
    depth: int = 0
    rsdepth: int = 0


@attrs.frozen
class NetMsg:
    """A message in flight (the spec's $net): a write to tablet B, a read set, a read-set ack."""

    type: str
    tx: int
    frm: str = ""
    to: str = ""
    dst: int = 0
    m: Msg = NO_MSG
    dec: str = NONE
    depth: int = 0


def read_set(frm: str, to: str, tx: int, dec: str, depth: int) -> NetMsg:
    return NetMsg(RS, tx, frm, to, 0, NO_MSG, dec, depth)


def read_set_ack(frm: str, to: str, tx: int) -> NetMsg:
    return NetMsg(RS_ACK, tx, frm, to)


def write_msg(tx: int, d: int, m: Msg) -> NetMsg:
    return NetMsg(WRITE, tx, "", "B", d, m)


@attrs.frozen
class Act:
    """The spec's history variable ``action``: the last step's name, actor and arguments."""

    name: str
    actor: str
    args: tuple[tuple[str, int], ...] = ()


def less_eq(x: tuple[int, int], y: tuple[int, int]) -> bool:
    """The spec's LessEq on (step, txid) pairs."""
    return x <= y


class State:
    """The spec's variables; ``emit`` receives each step's trace event."""

    def __init__(self, k: Constants, owner: dict[int, str] | None = None,
                 emit: Callable[[dict[str, Any]], None] | None = None) -> None:
        self.k = k
        self.emit_event = emit or (lambda ev: None)
        ws = k.workers
        # Init leaves the assignment free; a run picks one (round robin unless given).
        self.owner: dict[int, str] = dict(owner) if owner else {p: ws[(p - 1) % len(ws)] for p in k.src_parts}
        self.cl: dict[str, Worker] = {w: self.idle_worker() for w in ws}
        self.kqp: dict[int, Session] = {tx: Session() for tx in k.txns}
        self.next_tx = 1
        self.net: list[NetMsg] = []  # a set, kept in insertion order so that runs are reproducible
        self.sup: dict[int, dict[int, Sup]] = {tx: {d: Sup() for d in k.dst_parts} for tx in k.txns}
        self.committed: dict[int, int] = {p: 0 for p in k.src_parts}
        self.target: dict[int, list[Msg]] = {d: [] for d in k.dst_parts}
        self.rows: list[int] = []
        self.urows: dict[int, int] = {tx: -1 for tx in k.txns}  # the row's version each read (-1: none)
        self.meta: dict[str, dict[int, tuple[int, int]]] = {t: {p: (0, 0) for p in k.part_ids} for t in k.tablets}
        self.sealed: dict[int, int] = {d: -1 for d in k.dst_parts}  # -1: active; else the log's length at its split
        self.pdur: dict[str, dict[int, Durable]] = {t: {tx: Durable() for tx in k.txns} for t in k.tablets}
        self.ptx: dict[str, dict[int, Volatile]] = {t: {tx: Volatile() for tx in k.txns} for t in k.tablets}
        self.plan: dict[int, int] = {tx: 0 for tx in k.txns}
        self.pending: dict[str, set[tuple[int, int]]] = {t: set() for t in k.tablets}
        self.next_step = 1
        self.expired: dict[int, bool] = {tx: False for tx in k.txns}
        # Ghosts.
        self.applied: dict[str, dict[int, str]] = {t: {tx: NONE for tx in k.txns} for t in k.tablets}
        self.votes: dict[str, dict[int, str]] = {t: {tx: NONE for tx in k.txns} for t in k.tablets}
        self.wacked: dict[int, set[Msg]] = {tx: set() for tx in k.txns}
        self.plain: set[Msg] = set()  # the messages written outside any transaction
        self.skipped: set[Msg] = set()  # the resent messages answered AlreadyWritten (the SDK's Skipped)
        # each commit outside a transaction: (worker, partition, b, e, "ok" | "stale" | "dead")
        self.plain_commits: set[tuple[str, int, int, int, str]] = set()
        # Not a spec variable: the first reason a participant gave for aborting each transaction
        # (the trace's reason), which the API puts in the error the SDK would raise.
        self.why_aborted: dict[int, str] = {}
        self.told: dict[int, str] = {tx: NONE for tx in k.txns}
        self.told_depth: dict[int, int] = {tx: 0 for tx in k.txns}
        self.range_bad = False
        self.order_bad = False
        # Faults so far.
        self.hangs = self.restarts = self.losses = self.lock_losses = self.deadlines = self.reconnects = 0
        self.plain_sent = 0  # the writes outside a transaction made so far (PlainWrite's budget)
        self.action = Act("Init", "")
        self.events = 0

    def idle_worker(self, pos: dict[int, int] | None = None) -> Worker:
        return Worker(pos=dict(pos) if pos is not None else {p: -1 for p in self.k.src_parts},
                      gsent={g: 0 for g in self.k.writers})

    # --- the network as a set ---

    def send(self, *msgs: NetMsg) -> None:
        for m in msgs:
            if m not in self.net:
                self.net.append(m)

    def take(self, m: NetMsg) -> None:
        self.net.remove(m)

    def take_with_stream(self, m: NetMsg) -> None:
        """Write m and StreamRest(m), the writes after it on its stream, lost with it when it breaks."""
        for n in [n for n in self.net
                  if n.type == WRITE and n.tx == m.tx and n.dst == m.dst and n.m.src == m.m.src and n.m.off >= m.m.off]:
            self.take(n)

    # --- what several components read ---

    def logged_producer(self, m: Msg) -> int | None:
        """The ``producer`` column of a write's event: logged where a transaction has several
        writers (TxWriters > 1), so that two writes with one SeqNo are told apart."""
        return m.src if self.k.tx_writers > 1 else None

    def tx_producers_of(self, tx: int) -> set[int]:
        """TxProducersOf(tx): the producers of a write-only transaction's writers, a copy's source partition."""
        s = self.kqp[tx]
        return set(s.prods) if s.shape == "write" else self.parts_of("A", tx)

    def parts_of(self, t: str, tx: int) -> set[int]:
        """PartsOf: the partitions of participant t that transaction tx touches."""
        if t == "A":
            s = self.kqp[tx]
            return {s.src, s.src2} if s.src2 else {s.src}
        if t == "B":
            return set(self.kqp[tx].dsts)
        return {1}

    def producer_last(self, d: int, p: int) -> int:
        """ProducerLast(d, p): producer p's last SeqNo on partition d of B, read off d's log."""
        return max((m.off + 1 for m in self.target[d] if m.src == p), default=0)

    def participants(self, tx: int) -> tuple[str, ...]:
        """Participants(tx): the tablets transaction tx touches, by its shape (a write-only one
        that wrote nothing touches no topic)."""
        s = self.kqp[tx]
        drop = {"read": {"B"}, "write": {"A"} if s.dsts else {"A", "B"}}.get(s.shape, set())
        if self.urows[tx] == -1:  # the table untouched
            drop.add("DS")
        return tuple(t for t in self.k.tablets if t not in drop)

    def peers_of(self, t: str, tx: int) -> tuple[str, ...]:
        """Peers(t, tx)."""
        return tuple(q for q in self.participants(tx) if q != t)

    def immediate(self, tx: int) -> bool:
        """Immediate(tx): one participant on one partition (kqp_data_executer.cpp ImmediateTx)."""
        ps = self.participants(tx)
        return len(ps) == 1 and len(self.parts_of(ps[0], tx)) == 1

    def ranges_split(self, tx: int) -> bool:
        """RangesSplit(tx): the offset ranges a read-only transaction named are not one interval."""
        s = self.kqp[tx]
        return s.shape == "read" and s.named != set(range(s.b, s.e))

    def kqp_refuses(self, tx: int) -> bool:
        """KqpRefuses(tx): KQP aborts the commit before it proposes (CheckTopicOperations)."""
        return self.ranges_split(tx) and not self.k.bug("range_gap_accepted")

    def kqp_participants(self, tx: int) -> tuple[str, ...]:
        """KqpParticipants(tx): none when KQP refuses the commit itself; with
        participants_from_offsets, a write-only transaction has none."""
        if self.kqp_refuses(tx) or (self.k.bug("participants_from_offsets") and self.kqp[tx].shape == "write"):
            return ()
        return self.participants(tx)

    def writes(self, w: str) -> int:
        """Writes(w): how many writes worker w's transaction makes: none for a read-only one, as
        many as it made for a write-only one, its batch for a copy."""
        c = self.cl[w]
        if c.shape == "read":
            return 0
        if c.shape == "write":
            return c.sent
        s = self.kqp[c.tx]
        return (c.e - c.b) + (s.e2 - s.b2)

    def range_on(self, tx: int, k: int) -> tuple[int, int]:
        """RangeOn(tx, k): the range [b, e) tx read on partition k of A (its first, or its second)."""
        s = self.kqp[tx]
        return (s.b2, s.e2) if k and k == s.src2 else (s.b, s.e)

    def reread(self, pos: dict[int, int], tx: int) -> dict[int, int]:
        """Reread(pos, tx): the reader reads again from the committed offset in every partition tx read."""
        parts = self.parts_of("A", tx)
        return {p: -1 if p in parts else x for p, x in pos.items()}

    def applied_at(self, t: str, k: int, tx: int) -> bool:
        """AppliedAt: partition k of t has applied tx (its (step, txid) is at or below the last applied)."""
        return less_eq((self.ptx[t][tx].step, tx), self.meta[t][k])

    def plain_reads(self) -> int:
        """The batches read outside a transaction so far, committed or held (MaxPlainCommits' budget)."""
        return len(self.plain_commits) + sum(1 for c in self.cl.values() if c.phase == "plain")

    def started(self) -> range:
        """The transactions begun so far: every other one has no state anywhere."""
        return range(1, self.next_tx)

    # --- events ---

    def emit(self, name: str, actor: str, args: Iterable[tuple[str, int]], **cols: Any) -> None:
        """Record the step as the spec's ``action`` does and emit its trace event (the columns
        that are None are not logged)."""
        self.action = Act(name, actor, tuple(args))
        ev: dict[str, Any] = {"action": name}
        ev.update({c: v for c, v in cols.items() if v is not None})
        self.events += 1
        self.emit_event(ev)
