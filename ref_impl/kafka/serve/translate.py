"""The serving broker's translation of Kafka requests into the spec's terms (``BrokerCore``).

``ServeBroker.handle(request)`` takes one decoded request (``wire.Request``) and returns its
answer (a kafka-python response object), or None when none is due (Produce with acks=0). The
transaction machinery is the reference broker (``ref_impl.kafka``) run with open clients
(KafkaTxn: OpenClients): every request of the transaction protocol becomes a ``ClientSend`` step;
the brokers' own steps then run until none is enabled (``drive``), as the scheduler of one Kafka
node that does at once what it can; the answer is a ``ClientTake`` step. So every session is a
trace of the spec, written by ``trace()``.

What is translated, and how (the spec's header says the same under "Open clients"):
- topics: each (topic, partition) is one of the spec's data partitions 1, 2, ... in the order
  they are created; the consumer offsets partition is the spec's partition 0.
- producers: a transactional.id is one of the spec's TxnIds from its first FindCoordinator or
  InitProducerId; an InitProducerId without a producer epoch starts a new instance (the ghost
  ``gtx`` instance); the ghost transaction counts the EndTxn answers an instance was given.
  Kafka's 64-bit producer id of a transactional.id and generation comes from the engine.
- sequences: Kafka counts records, the spec batches. A batch's spec sequence is its ordinal among
  its producer epoch's batches on the partition, with a gap where the record sequences leave one
  (``Ordinals``): contiguity, gaps and repeats survive, which is all the leader's check reads.
- offsets: the spec's log entry i is a record batch (or a control batch for a marker) that
  starts at Kafka offset ``stored[p][i].base``; consumers get Kafka offsets and the batches'
  bytes (rebased), control batches included, and for read_committed the aborted transactions.
- consumer groups are outside the spec (``groups``); transactional offsets wait there until the
  spec's GcMarker on the offsets partition commits or drops them.

What is refused before the spec sees it (one line in ``refusals``): requests of a kind the spec
lacks (non-transactional produce to a topic that holds transactional data, a producer id this
broker never gave), with Kafka's error code for them.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from typing import Any

import attrs

from ..actions import ACTIONS, INSTANCE, MESSAGE, SCHEDULER, Action, arguments, never, run
from ..cluster import Cluster
from ..constants import SHORT_MAX, Constants
from ..messages import Msg
from . import wire
from .groups import Groups

# Kafka's error codes (clients/src/main/java/org/apache/kafka/common/protocol/Errors.java).
ERRORS: dict[str, int] = {
    "NONE": 0, "UNKNOWN_SERVER_ERROR": -1, "OFFSET_OUT_OF_RANGE": 1, "CORRUPT_MESSAGE": 2,
    "UNKNOWN_TOPIC_OR_PARTITION": 3, "COORDINATOR_NOT_AVAILABLE": 15, "NOT_COORDINATOR": 16,
    "NOT_ENOUGH_REPLICAS": 19, "ILLEGAL_GENERATION": 22, "UNKNOWN_MEMBER_ID": 25, "REBALANCE_IN_PROGRESS": 27,
    "UNSUPPORTED_VERSION": 35, "TOPIC_ALREADY_EXISTS": 36, "INVALID_PARTITIONS": 37, "INVALID_REQUEST": 42,
    "OUT_OF_ORDER_SEQUENCE_NUMBER": 45, "DUPLICATE_SEQUENCE_NUMBER": 46, "INVALID_PRODUCER_EPOCH": 47,
    "INVALID_TXN_STATE": 48, "INVALID_PRODUCER_ID_MAPPING": 49, "CONCURRENT_TRANSACTIONS": 51,
    "TRANSACTION_COORDINATOR_FENCED": 52, "OPERATION_NOT_ATTEMPTED": 55, "INVALID_RECORD": 87,
    "UNSTABLE_OFFSET_COMMIT": 88, "PRODUCER_FENCED": 90, "TRANSACTION_ABORTABLE": 120,
}
# PRODUCER_FENCED came with KIP-588 (Kafka 2.7); older request versions get INVALID_PRODUCER_EPOCH
# (TransactionCoordinator / KafkaApis map it by version). The first version that knows it:
FENCED_SINCE = {"InitProducerId": 4, "AddPartitionsToTxn": 2, "AddOffsetsToTxn": 2, "EndTxn": 2, "TxnOffsetCommit": 3}
NODE_ID = 0
CLUSTER_ID = "txconform-serve"
LOG_START = 0
# The brokers' own steps: every step the scheduler takes that is no fault and no client's.
BROKER_STEPS: tuple[Action, ...] = tuple(a for a in ACTIONS if a.by == SCHEDULER and a.fault is never and a.over != INSTANCE)
MAX_DRIVE_STEPS = 10_000


class ServeError(Exception):
    """A request the broker cannot serve at all (the connection is closed)."""


@attrs.define
class Stored:
    """A spec log entry as Kafka stores it: its offsets and the batch's bytes."""

    base: int
    last: int
    raw: bytes
    producer_id: int


@attrs.define
class Ordinals:
    """The spec sequences of one producer epoch's batches on one partition (see the module doc)."""

    known: dict[int, int] = attrs.field(factory=dict)  # Kafka base sequence -> spec sequence
    top: int = -1  # the highest spec sequence given
    top_base: int = -1
    top_last: int = -1  # the Kafka last sequence of that batch

    def of(self, base: int, last: int) -> int:
        if base in self.known:
            return self.known[base]
        if self.top == -1:
            o = 0 if base == 0 else 1
        elif base == self.top_last + 1:
            o = self.top + 1
        else:
            o = self.top + 2  # a gap, or a new batch below the highest: out of order either way
        if base > self.top_base:
            self.top, self.top_base, self.top_last = o, base, last
        self.known[base] = o
        return o


@attrs.define
class Producer:
    """What the broker knows of a producer instance (the ghost instance and transaction)."""

    txn_id: str
    inst: int
    txn: int = 1  # the ghost transaction its next requests belong to


class BrokerCore:
    """The broker's state and its translation to the spec's terms: topics to spec partitions,
    transactional.ids and producer ids to spec instances, the engine driven to quiescence after each
    request, the session's events. The requests are served by the classes that extend it."""

    def __init__(self, version: str = "TV1V", default_partitions: int = 1, bugs: Iterable[str] = (),
                 auto_create: bool = True, host: str = "127.0.0.1", port: int = 0,
                 clock: Callable[[], float] = time.time) -> None:
        k = Constants(txn_ids=(), num_instances=0, num_partitions=0, txns_per_instance=1, version=version,
                      open_clients=True, max_epoch=SHORT_MAX, bugs=tuple(bugs))
        self.events: list[dict[str, Any]] = []
        self.c = Cluster(k, self._emit)
        self.c.pid_stride = 1 << 20  # transactional.ids come and go: a fixed stride keeps ids stable
        self.bugs = tuple(bugs)
        self.default_partitions = default_partitions
        self.auto_create = auto_create
        self.host, self.port = host, port
        self.clock = clock
        self.topics: dict[str, list[int]] = {}  # topic -> spec partitions, by index
        self.topic_of: dict[int, tuple[str, int]] = {}  # spec partition -> (topic, index)
        self.stored: dict[int, list[Stored]] = {}
        self.plain: dict[int, bool] = {}  # a partition with non-transactional data (outside the spec)
        self.producers: dict[tuple[str, int, int], Producer] = {}  # (txn id, producer id, epoch) -> instance
        self.latest: dict[str, Producer] = {}
        self.ordinals: dict[tuple[str, int, int], Ordinals] = {}  # (txn id, generation, partition)
        self.copies: dict[tuple[Any, ...], int] = {}
        self.raw_of: dict[tuple[str, int, int, int], wire.Batch] = {}  # (txn id, generation, partition, seq)
        self.groups = Groups()
        self.offset_ids = 0
        self.refusals: list[str] = []
        self.requests = 0
        self.versions: dict[tuple[str, int], int] = {}  # requests served, by (API, version)
        self.restarts = 0
        self.max_txn = 1
        self._end_epoch = -1
        self.lose_answers = False  # set by the session for a request whose answers a fault loses
        self.last_fetch_empty = True
        self.conn = 0  # the connection of the request being handled
        self.initializing: dict[tuple[int, str], Producer] = {}  # (connection, txn id): an instance without an epoch yet

    # --- events and the trace ---

    def _emit(self, ev: dict[str, Any]) -> None:
        p = ev.get("partition")
        if isinstance(p, int) and p in self.topic_of:
            ev["topic"] = self.topic_of[p][0]
        if ev["action"] == "GcMarker" and ev.get("result") == "NONE":
            self.groups.decide(ev["txn_id"], bool(ev.get("commit")))
        self.events.append(ev)

    def constants(self) -> dict[str, Any]:
        """The spec's constants of the session so far (a trace's header)."""
        k = self.c.k
        batches = 1
        for p in self.c.parts:
            counts: dict[Any, int] = {}
            for e in self.c.plog[p].entries:
                if e.kind == "data":
                    counts[e.gtx] = counts.get(e.gtx, 0) + 1
            batches = max([batches, *counts.values()])
        spec = attrs.evolve(k, txn_ids=k.txn_ids or ("none",), num_instances=max(k.num_instances, 1),
                            num_partitions=max(k.num_partitions, 1), txns_per_instance=self.max_txn,
                            max_loss=self.c.losses, max_failovers=self.c.failovers,
                            leader_restarts=self.restarts > 0, batches=batches)
        return spec.to_spec(bugs=False)

    # --- topics ---

    def create_topic(self, name: str, partitions: int) -> None:
        parts = []
        for index in range(partitions):
            p = self.c.add_partition()
            parts.append(p)
            self.topic_of[p] = (name, index)
            self.stored[p] = []
        self.topics[name] = parts

    def partition(self, topic: str, index: int, create: bool = True) -> int | None:
        if topic not in self.topics and create and self.auto_create and valid_topic(topic):
            self.create_topic(topic, self.default_partitions)
        parts = self.topics.get(topic)
        if parts is None or not 0 <= index < len(parts):
            return None
        return parts[index]

    def next_offset(self, p: int) -> int:
        s = self.stored[p]
        return s[-1].last + 1 if s else LOG_START

    # --- the engine ---

    def step(self, name: str, arg: Any) -> bool:
        ok = run(self.c, name, arg)
        self.sync_logs()
        return ok

    def drive(self) -> None:
        """Take the brokers' own steps until none is enabled, in the table's order."""
        for _ in range(MAX_DRIVE_STEPS):
            for a in BROKER_STEPS:
                args = list(self.c.net) if a.over == MESSAGE else arguments(self.c, a.over)
                arg = next((x for x in args if (a.over != MESSAGE or a.takes_message(x)) and a.enabled(self.c, x)), None)
                if arg is not None:
                    a.apply(self.c, arg)
                    self.sync_logs()
                    break
            else:
                return
        raise ServeError(f"the brokers took {MAX_DRIVE_STEPS} steps without settling")

    def sync_logs(self) -> None:
        """Give every entry the engine appended its Kafka offsets and bytes (and drop what an
        unclean election truncated)."""
        for p in self.c.parts:
            if self.plain.get(p):  # non-transactional data: not in the spec's log
                continue
            entries = self.c.plog[p].entries
            stored = self.stored[p]
            del stored[len(entries):]
            for e in entries[len(stored):]:
                base = self.next_offset(p)
                if e.kind == "data":
                    b = self.raw_of[(e.pid, e.epoch, p, e.seq)]
                    raw = wire.rebase(b, base)
                    stored.append(Stored(base, base + b.last_offset_delta, raw, b.producer_id))
                else:
                    pid = self.c.producer_id(e.pid, e.epoch)
                    raw = wire.control_batch(pid, self.c.k.epoch_of(e.epoch), e.commit, e.cepoch, base, self._now_ms())
                    stored.append(Stored(base, base, raw, pid))

    def _now_ms(self) -> int:
        return int(self.clock() * 1000)

    def exchange(self, m: Msg) -> Msg:
        """Send request m for an open client, let the brokers settle, and deliver the answer."""
        if not self.step("ClientSend", m):
            raise ServeError(f"the spec refuses the request {m}")
        self.drive()
        for r in self.c.net:
            if (r.type == m.type + "Resp" and (r.tid, r.inst, r.gtx, r.part) == (m.tid, m.inst, m.gtx, m.part)
                    and (m.type != "Produce" or (r.seq, r.att) == (m.seq, m.att))):
                if self.lose_answers:  # a fault: the answer is lost with its connection
                    self.c.k = attrs.evolve(self.c.k, max_loss=self.c.losses + 1)
                    self.step("Drop", r)
                else:
                    self.step("ClientTake", r)
                return r
        raise ServeError(f"no answer to {m.type} of {m.tid}")

    def copy_of(self, *key: Any) -> int:
        """The send attempt of a request: copies of one request must differ (the network is a set)."""
        n = self.copies.get(key, 0)
        self.copies[key] = n + 1
        return n

    # --- producers ---

    def txn_id(self, t: str) -> bool:
        """Make t one of the spec's TxnIds; False for an id a trace cannot hold (printable ASCII only)."""
        if not (0 < len(t) <= 249 and all(32 <= ord(ch) < 127 for ch in t)):
            return False
        if t not in self.c.tc:
            self.c.add_txn_id(t)
        return True

    def generation(self, t: str, producer_id: int, epoch: int) -> int | None:
        """The engine's generation of Kafka's (producer id, epoch) for t; None if this broker
        never gave t that producer id, or it is not t's current one (see the spec's OpenMsg)."""
        if producer_id < 0 or epoch < 0:
            return -1
        base = self.c.producer_ids.get(t)
        if base is None or (producer_id - base) % self.c.pid_stride:
            return None
        index = (producer_id - base) // self.c.pid_stride
        current = self.c.k.pid_of(self.c.tc[t].epoch) if self.c.tc[t].epoch >= 0 else 0
        return index * self.c.k.span + epoch if index == current else None

    def producer(self, t: str, producer_id: int, epoch: int) -> Producer:
        p = self.producers.get((t, producer_id, epoch)) or self.latest.get(t)
        if p is None:  # a producer id and epoch from elsewhere: the latest instance's, or a first one
            p = self._new_instance(t)
        return p

    def _new_instance(self, t: str) -> Producer:
        used = max((q.inst for q in self.producers.values() if q.txn_id == t), default=0)
        used = max(used, self.latest[t].inst if t in self.latest else 0)
        if used + 1 > self.c.k.num_instances:
            self.c.add_instance(t)
        p = Producer(t, used + 1)
        self.latest[t] = p
        return p

    def _given(self, p: Producer, t: str, g: int) -> None:
        """Producer p now holds generation g."""
        self.producers[(t, self.c.producer_id(t, g), self.c.k.epoch_of(g))] = p

    def _error(self, api: str, version: int, err: str) -> int:
        if err == "PRODUCER_FENCED" and version < FENCED_SINCE.get(api, 0):
            err = "INVALID_PRODUCER_EPOCH"
        return ERRORS[err]

    def refuse(self, what: str) -> None:
        self.refusals.append(what)

    def txn_request(self, api: str, t: str | None, producer_id: int, epoch: int) -> tuple[str | None, Any, Any]:
        """(error, producer, generation) of a transactional request, before the spec sees it."""
        if not t or t not in self.c.tc:
            return "INVALID_PRODUCER_ID_MAPPING", None, None
        g = self.generation(t, producer_id, epoch)
        if g is None or g < 0:
            self.refuse(f"{api} of {t} with producer id {producer_id} epoch {epoch}, which this broker did not give it")
            return "INVALID_PRODUCER_ID_MAPPING", None, None
        return None, self.producer(t, producer_id, epoch), g

    # --- requests ---

    def handle(self, req: wire.Request, conn: int = 0) -> Any:
        self.requests += 1
        key = (req.name, req.api_version)
        self.versions[key] = self.versions.get(key, 0) + 1
        self.conn = conn
        handler = getattr(self, "on_" + snake_case(req.name), None)
        if handler is None:
            raise ServeError(f"{req.name} is not served")
        return handler(req, req.body)


def group_error_name(code: int) -> str:
    """The name of a group coordinator's error code."""
    return next(name for name, c in ERRORS.items() if c == code)


def snake_case(name: str) -> str:
    out: list[str] = []
    for ch in name:
        if ch.isupper() and out:
            out.append("_")
        out.append(ch.lower())
    return "".join(out)


def valid_topic(name: str) -> bool:
    """Kafka's legal topic names (Topic.validate): 1..249 of [a-zA-Z0-9._-], not . or .."""
    return 0 < len(name) <= 249 and name not in (".", "..") and all(ch.isalnum() or ch in "._-" for ch in name) \
        and name.isascii() and not name.startswith("__")
