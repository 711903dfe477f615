"""The spec's variables (KafkaTxn: net, cl, tc, tlog, cepoch, plog, pst, held, gc, and the fault
counters), the records they hold, and what every component reads of them.

A leaf of the broker: it imports only ``messages``, ``constants``, ``log`` and ``states``. The
components (``client``, ``coordinator``, ``leader``, ``group``, ``network``) extend
``ClusterState`` with their actions; ``cluster.Cluster`` combines them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

import attrs

from .constants import Constants
from .log import PartitionLog
from .messages import NO_GTX, Gtx, Msg, is_fence

Inst = tuple[str, int]
NO_INST: Inst = ("", 0)
OFFSETS_PART = 0  # the consumer-offsets partition of the application's group
# Kafka's producer ids are 64-bit. The reference broker hands them out from above 2**32, so that
# a reader that truncates them to 32 bits gets other numbers (1000, 1001, ...) and shows it.
PRODUCER_ID_BASE = 2**32 + 1000


@attrs.define
class Client:
    """A producer client (the spec's $client), plus what its application asked for."""

    st: str = "down"  # down, init, ready, intxn, fenced, failed, done
    epoch: int = -1
    txn: int = 0
    pc: int = 0
    out: bool = False
    req: Msg = Msg(type="")  # noqa: RUF009 (Msg is frozen: one shared default is safe)
    seq: dict[int, int] = attrs.field(factory=dict)
    hung: bool = False
    commit: bool = True
    pos: int = -1
    gen: int = -1
    # Pipelining: batches sent and not yet answered, and the send stamp of the next request.
    fly: list[Msg] = attrs.field(factory=list)
    sent: int = 0
    # KIP-360: an abortable error asks for an epoch bump once the transaction is aborted
    bump: bool = False
    # Not spec state: the application's decision for EndTxn (None: not yet decided).
    decision: bool | None = None


@attrs.frozen
class TxnEntry:
    """One record of __transaction_state (the spec's $tentry)."""

    st: str
    epoch: int
    parts: frozenset[int]
    gtx: Gtx = NO_GTX
    end_by: Gtx = NO_GTX
    # lastProducerEpoch: the epoch before a KIP-360 bump (-1: none), to recognise its retry
    last: int = -1


@attrs.define
class Pending:
    entry: TxnEntry
    replies: list[Msg]


@attrs.define
class Coord:
    """The coordinator's in-memory state of one transactional.id (the spec's $coord)."""

    st: str = "Empty"
    epoch: int = -1
    parts: frozenset[int] = frozenset()
    gtx: Gtx = NO_GTX
    end_by: Gtx = NO_GTX
    todo: set[int] = attrs.field(factory=set)
    pending: list[Pending] = attrs.field(factory=list)
    last: int = -1  # lastProducerEpoch, as in TxnEntry


@attrs.define
class ProducerState:
    """A leader's state of one producer (the spec's $pstate)."""

    epoch: int = -1
    last_seq: int = -1
    seqs: frozenset[int] = frozenset()
    open: bool = False
    cepoch: int = -1
    start: int = 0  # the spec's `from`: the log length when this producer's state last expired
    # The verification state (VerificationStateEntry): the newest epoch and lowest sequence of
    # the batches under verification; -1: none. Memory only.
    vepoch: int = -1
    vseq: int = -1


@attrs.define
class Held:
    """TV1V, TV2: a batch a leader holds until the coordinator verified it (at OFFSETS_PART: a
    TxnOffsetCommit the group coordinator holds so)."""

    m: Msg
    void: bool = False


@attrs.define
class Group:
    gen: int = 0
    owner: Inst = NO_INST
    committed: int = 0
    pending: dict[str, int] = attrs.field(factory=dict)  # -1: none
    # Standalone consumers' groups: group -> partition -> committed offset.
    groups: dict[str, dict[int, int]] = attrs.field(factory=dict)


class ClusterState:
    """The spec's variables, the network as a set, and the columns of the trace events."""

    def __init__(self, k: Constants, emit: Callable[[dict[str, Any]], None] | None = None) -> None:
        self.k = k
        self.emit_event = emit or (lambda ev: None)
        self.parts = list(range(1, k.num_partitions + 1))
        self.instances: list[Inst] = [(t, n) for t in k.txn_ids for n in range(1, k.num_instances + 1)]
        # The spec's variables.
        self.net: list[Msg] = []  # a set, kept in insertion order so that runs are reproducible
        # The same messages by transactional.id (send and take keep them): a request's copies,
        # answers and verifications share its id (Msg.same_request), so in_flight and
        # on_connection, asked for every client at every step, read one id's messages, not all.
        self._net_of: dict[str, list[Msg]] = {}
        self.cl: dict[Inst, Client] = {i: Client(seq={p: 0 for p in self.parts}) for i in self.instances}
        self.tc: dict[str, Coord] = {t: Coord() for t in k.txn_ids}
        self.tlog: dict[str, list[TxnEntry]] = {t: [] for t in k.txn_ids}
        # latest_instance's last answer for each id: (that tlog list, its length then, the answer)
        self._latest: dict[str, tuple[list[TxnEntry], int, int]] = {}
        self.cepoch = 0
        self.plog: dict[int, PartitionLog] = {p: PartitionLog() for p in self.parts}
        self.pst: dict[int, dict[str, ProducerState]] = {
            p: {t: ProducerState() for t in k.txn_ids} for p in [OFFSETS_PART, *self.parts]
        }
        self.held: dict[int, list[Held]] = {p: [] for p in [OFFSETS_PART, *self.parts]}
        # Replication (KafkaTxn: lag): -1 while the follower is in sync, else the log length it
        # has; -2 once an unclean election made it the leader.
        self.lag: dict[int, int] = {p: -1 for p in self.parts}
        self.gc = Group(pending={t: -1 for t in k.txn_ids})
        self.hangs = self.retries = self.losses = self.failovers = self.append_fails = 0
        self.events = 0
        # Not spec state: the payloads applications sent, by (transactional.id, instance, txn, partition).
        self.batches: dict[tuple[str, int, int, int], list[Any]] = {}
        # Not spec state: which of its partition's batches (0-based) a produce of
        # (transactional.id, instance, txn, partition, sequence) carries; batch b carries the
        # records b, b + Batches, b + 2 * Batches, ...
        self.batch_of: dict[tuple[str, int, int, int, int], int] = {}
        # Kafka's producer ids are 64-bit numbers; the spec names a producer by its transactional.id.
        # A transactional.id's next producer id (after an exhausted epoch) is pid_stride further on.
        self.producer_ids = {t: PRODUCER_ID_BASE + n for n, t in enumerate(k.txn_ids)}
        self.pid_stride = len(k.txn_ids)

    # --- open clients: the constants grow as real clients name transactional.ids and topics ---

    def add_txn_id(self, t: str) -> None:
        """A transactional.id the run did not know (txconform serve): its coordinator, log and
        producer state start as Init has them, and its producer ids come after every other's."""
        if t in self.tc:
            return
        self.k = attrs.evolve(self.k, txn_ids=(*self.k.txn_ids, t))
        self.tc[t], self.tlog[t], self.gc.pending[t] = Coord(), [], -1
        for states in self.pst.values():
            states[t] = ProducerState()
        self.producer_ids[t] = PRODUCER_ID_BASE + len(self.producer_ids)
        for n in range(1, self.k.num_instances + 1):
            self._add_client((t, n))

    def add_instance(self, t: str) -> int:
        """One more instance for every transactional.id (NumInstances + 1); returns its number."""
        n = self.k.num_instances + 1
        self.k = attrs.evolve(self.k, num_instances=n)
        for u in self.k.txn_ids:
            self._add_client((u, n))
        return n

    def add_partition(self) -> int:
        """One more data partition (NumPartitions + 1); returns its number."""
        p = self.k.num_partitions + 1
        self.k = attrs.evolve(self.k, num_partitions=p)
        self.parts.append(p)
        self.plog[p], self.held[p], self.lag[p] = PartitionLog(), [], -1
        self.pst[p] = {t: ProducerState() for t in self.k.txn_ids}
        for c in self.cl.values():
            c.seq[p] = 0
        return p

    def _add_client(self, i: Inst) -> None:
        self.instances.append(i)
        self.cl[i] = Client(seq={p: 0 for p in self.parts})

    # --- the network as a set ---

    def send(self, *msgs: Msg) -> None:
        for m in msgs:
            same_id = self._net_of.setdefault(m.tid, [])
            if m not in same_id:
                self.net.append(m)
                same_id.append(m)

    def take(self, m: Msg) -> None:
        self.net.remove(m)
        self._net_of[m.tid].remove(m)

    def in_net(self, m: Msg) -> bool:
        """Is ``m`` in flight? (``m in net``, through the messages of its transactional.id)"""
        return m in self._net_of.get(m.tid, ())

    def in_flight(self, m: Msg) -> bool:
        """Is anything of request ``m`` still under way? (InFlight)"""
        if any(m.same_request(n) for n in self._net_of.get(m.tid, ())):
            return True
        for c in self.tc.values():
            if any(m.same_request(n) for pe in c.pending for n in pe.replies):
                return True
        return any(m.same_request(h.m) for hs in self.held.values() for h in hs)

    def hold(self, p: int, m: Msg) -> None:
        """Hold request ``m`` at partition ``p`` and ask the coordinator to verify it. held is a set
        in the spec: a request sent again the same way (the same attempt number, after a retriable
        error) while its first copy still waits merges with it."""
        if Held(m) not in self.held[p]:
            self.held[p].append(Held(m))
        self.send(attrs.evolve(m, type="Verify"))

    def void_held(self, p: int, t: str) -> None:
        """A marker for producer ``t`` reached ``p``: the verifications held there for ``t`` are void
        (Kafka's VerificationGuard). A set, as held is in the spec: voiding may make two the same."""
        voided: list[Held] = []
        for h in self.held[p]:
            if h.m.tid == t:
                h.void = True
            if h not in voided:
                voided.append(h)
        self.held[p] = voided

    def on_connection(self, f: Msg) -> bool:
        """Pipelining: is batch ``f`` unread, held for verification, or answered? (OnConnection)"""
        if any(n.type in ("Produce", "ProduceResp") and f.same_request(n) and n.att == f.att for n in self._net_of.get(f.tid, ())):
            return True
        return any(f.same_request(h.m) and h.m.att == f.att for h in self.held[f.part])

    def answered_batch(self, i: Inst, m: Msg) -> Msg | None:
        """Pipelining: the batch in client ``i``'s fly that response ``m`` answers (AnsweredBatch)."""
        if m.type != "ProduceResp" or (m.tid, m.inst) != i:
            return None
        for f in self.cl[i].fly:
            if (m.gtx, m.part, m.seq, m.att) == (f.gtx, f.part, f.seq, f.att):
                return f
        return None

    def answers(self, i: Inst, m: Msg) -> bool:
        """Is ``m`` an answer client ``i`` waits for? (Answers)"""
        c = self.cl[i]
        return (
            c.out
            and m.type == c.req.type + "Resp"
            and (m.tid, m.inst) == i
            and m.gtx == c.req.gtx
            and m.part == c.req.part
        ) or self.answered_batch(i, m) is not None

    def latest_instance(self, t: str) -> int:
        """Ghost: the instance of ``t`` holding the newest epoch, from __transaction_state: that of
        its newest Empty entry or fence. Only the entries appended since the last answer are read
        (a tlog only grows at its end; a new list for a new id starts the reading again): an id running thousands of
        transactions without a fence was read back to its start at every produce."""
        log = self.tlog[t]
        start, answer = 0, 0
        known = self._latest.get(t)
        if known is not None and known[0] is log and known[1] <= len(log):
            start, answer = known[1], known[2]
        for k in range(len(log) - 1, start - 1, -1):
            e = log[k]
            if e.st == "Empty":
                answer = e.gtx[1]
                break
            if is_fence(e.end_by):  # a fence by instance end_by[1]
                answer = e.end_by[1]
                break
        self._latest[t] = (log, len(log), answer)
        return answer

    def quiescent(self) -> bool:
        return not any(m.type in ("WriteTxnMarkers", "WriteTxnMarkersResp") for m in self.net) and all(
            not c.pending and c.st not in ("PrepareCommit", "PrepareAbort") for c in self.tc.values()
        )

    def all_instances(self) -> Iterable[Inst]:
        return self.instances

    # --- events ---

    def event(self, action: str, actor: str, **cols: Any) -> dict[str, Any]:
        ev: dict[str, Any] = {"action": action, "actor": actor}
        ev.update({k: v for k, v in cols.items() if v is not None})
        return ev

    def with_msg(self, ev: dict[str, Any], m: Msg) -> dict[str, Any]:
        """The message columns of an event: the message it consumed or sent."""
        ev.update(
            type=m.type,
            txn_id=m.tid,
            instance=m.inst,
            txn=m.gtx[2],
            partition=m.part,
            producer_epoch=self.k.epoch_of(m.epoch),
            seq=m.seq,
            att=m.att,
            commit=m.commit,
            coordinator_epoch=m.cepoch,
            error=m.err,
            offset=m.val,
            generation=m.gen,
        )
        if m.tid in self.producer_ids:
            ev["producer_id"] = self.producer_id(m.tid, m.epoch)
        return ev

    def producer_id(self, t: str, g: int) -> int:
        """Kafka's 64-bit producer id of transactional.id t at generation g (a new one per rotation)."""
        return self.producer_ids[t] + self.pid_stride * max(self.k.pid_of(g), 0)

    def with_client(self, ev: dict[str, Any], i: Inst) -> dict[str, Any]:
        c = self.cl[i]
        ev.setdefault("txn_id", i[0])
        ev.setdefault("instance", i[1])
        ev["producer_id"] = self.producer_id(i[0], c.epoch)
        ev.update(client_state=c.st, client_epoch=self.k.epoch_of(c.epoch), client_txn=c.txn)
        return ev

    def with_coord(self, ev: dict[str, Any], t: str) -> dict[str, Any]:
        c = self.tc[t]
        ev.setdefault("txn_id", t)
        ev["producer_id"] = self.producer_id(t, c.epoch)
        ev.update(txn_state=c.st, txn_epoch=self.k.epoch_of(c.epoch), pending=len(c.pending))
        return ev

    def emit(self, ev: dict[str, Any]) -> None:
        self.events += 1
        self.emit_event(ev)
