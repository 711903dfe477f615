"""The serving broker: real clients' Kafka requests, served by the reference broker as open clients.

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
from kafka.protocol.admin import DescribeGroupsResponse
from kafka.protocol.admin.topics import CreateTopicsResponse
from kafka.protocol.consumer.fetch import FetchResponse
from kafka.protocol.consumer.group import (
    HeartbeatResponse,
    JoinGroupResponse,
    LeaveGroupResponse,
    OffsetCommitResponse,
    OffsetFetchResponse,
    SyncGroupResponse,
)
from kafka.protocol.consumer.offsets import ListOffsetsResponse
from kafka.protocol.metadata.find_coordinator import FindCoordinatorResponse
from kafka.protocol.metadata.metadata import MetadataResponse
from kafka.protocol.producer.produce import ProduceResponse
from kafka.protocol.producer.transaction import (
    AddOffsetsToTxnResponse,
    AddPartitionsToTxnResponse,
    EndTxnResponse,
    InitProducerIdResponse,
    TxnOffsetCommitResponse,
)

from ..actions import ACTIONS, INSTANCE, MESSAGE, SCHEDULER, Action, arguments, never, run
from ..cluster import Cluster
from ..constants import SHORT_MAX, Constants
from ..messages import Msg
from ..state import OFFSETS_PART
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


class ServeBroker:
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
        if topic not in self.topics and create and self.auto_create and _valid_topic(topic):
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

    # --- requests ---

    def handle(self, req: wire.Request, conn: int = 0) -> Any:
        self.requests += 1
        key = (req.name, req.api_version)
        self.versions[key] = self.versions.get(key, 0) + 1
        self.conn = conn
        handler = getattr(self, "on_" + _snake(req.name), None)
        if handler is None:
            raise ServeError(f"{req.name} is not served")
        return handler(req, req.body)

    def on_api_versions(self, req: wire.Request, body: Any) -> Any:
        # a Kafka 4 broker finalizes transaction.version 2 when TV2 is on: clients then use it
        return wire.api_versions_response(req, features={"transaction.version": 2} if self.c.k.tv2 else None)

    def on_metadata(self, req: wire.Request, body: Any) -> Any:
        names = None if body.topics is None else [t.name for t in body.topics]
        allow = req.api_version < 4 or bool(body.allow_auto_topic_creation)
        R = MetadataResponse
        topics = []
        for name in (sorted(self.topics) if names is None else names):
            if name not in self.topics and allow:
                self.partition(name, 0)
            parts = self.topics.get(name)
            if parts is None:
                topics.append(R.MetadataResponseTopic(error_code=ERRORS["UNKNOWN_TOPIC_OR_PARTITION"], name=name,
                                                       is_internal=False, partitions=[]))
                continue
            topics.append(R.MetadataResponseTopic(
                error_code=0, name=name, is_internal=False,
                partitions=[R.MetadataResponseTopic.MetadataResponsePartition(
                    error_code=0, partition_index=i, leader_id=NODE_ID, leader_epoch=0, replica_nodes=[NODE_ID],
                    isr_nodes=[NODE_ID], offline_replicas=[]) for i in range(len(parts))]))
        return R(throttle_time_ms=0, brokers=[R.MetadataResponseBroker(node_id=NODE_ID, host=self.host, port=self.port, rack=None)],
                 cluster_id=CLUSTER_ID, controller_id=NODE_ID, topics=topics)

    def on_create_topics(self, req: wire.Request, body: Any) -> Any:
        R = CreateTopicsResponse
        out = []
        for t in body.topics:
            n = self.default_partitions if t.num_partitions == -1 else t.num_partitions
            if t.name in self.topics:
                err, msg = ERRORS["TOPIC_ALREADY_EXISTS"], f"Topic '{t.name}' already exists."
            elif n < 1 or not _valid_topic(t.name):
                err, msg = ERRORS["INVALID_PARTITIONS" if n < 1 else "INVALID_REQUEST"], "invalid topic"
            else:
                if not body.validate_only:
                    self.create_topic(t.name, n)
                err, msg = 0, None
            out.append(R.CreatableTopicResult(name=t.name, error_code=err, error_message=msg, num_partitions=n,
                                              replication_factor=1, configs=[]))
        return R(throttle_time_ms=0, topics=out)

    def on_find_coordinator(self, req: wire.Request, body: Any) -> Any:
        keys = list(body.coordinator_keys) if req.api_version >= 4 else [body.key]
        if body.key_type == 1:
            for key in keys:
                if key:
                    self.txn_id(key)
        R = FindCoordinatorResponse
        if req.api_version >= 4:
            return R(throttle_time_ms=0, coordinators=[
                R.Coordinator(key=key, node_id=NODE_ID, host=self.host, port=self.port, error_code=0, error_message=None)
                for key in keys])
        return R(throttle_time_ms=0, error_code=0, error_message=None, node_id=NODE_ID, host=self.host, port=self.port)

    def on_init_producer_id(self, req: wire.Request, body: Any) -> Any:
        R = InitProducerIdResponse
        t = body.transactional_id
        if not t:
            self.refuse("InitProducerId without a transactional.id (idempotent-only producers are not served)")
            return R(throttle_time_ms=0, error_code=ERRORS["INVALID_REQUEST"], producer_id=-1, producer_epoch=-1)
        if not self.txn_id(t):
            self.refuse(f"InitProducerId of transactional.id {t!r}: a trace holds printable ASCII ids of 1 to 249 characters")
            return R(throttle_time_ms=0, error_code=ERRORS["INVALID_REQUEST"], producer_id=-1, producer_epoch=-1)
        given_pid = body.producer_id if req.api_version >= 3 else -1
        given_epoch = body.producer_epoch if req.api_version >= 3 else -1
        if given_pid < 0:
            # a retry on the same connection (after CONCURRENT_TRANSACTIONS) is the same instance
            p = self.initializing.get((self.conn, t)) or self._new_instance(t)
            self.initializing[(self.conn, t)] = p
            g = -1
        else:
            p = self.producer(t, given_pid, given_epoch)
            gen = self.generation(t, given_pid, given_epoch)
            if gen is None:
                self.refuse(f"InitProducerId of {t} with producer id {given_pid}, which is not its current one")
                return R(throttle_time_ms=0, error_code=ERRORS["INVALID_PRODUCER_ID_MAPPING"], producer_id=-1, producer_epoch=-1)
            g = gen
        m = Msg("InitProducerId", tid=t, inst=p.inst, epoch=g, part=OFFSETS_PART, gtx=(t, p.inst, 0),
                att=self.copy_of("InitProducerId", t, p.inst, g))
        r = self.exchange(m)
        if r.err == "NONE":
            self.initializing.pop((self.conn, t), None)
            self._given(p, t, r.epoch)
            return R(throttle_time_ms=0, error_code=0, producer_id=self.c.producer_id(t, r.epoch),
                     producer_epoch=self.c.k.epoch_of(r.epoch))
        return R(throttle_time_ms=0, error_code=self._error("InitProducerId", req.api_version, r.err), producer_id=-1,
                 producer_epoch=-1)

    def _txn_request(self, api: str, t: str | None, producer_id: int, epoch: int) -> tuple[str | None, Any, Any]:
        """(error, producer, generation) of a transactional request, before the spec sees it."""
        if not t or t not in self.c.tc:
            return "INVALID_PRODUCER_ID_MAPPING", None, None
        g = self.generation(t, producer_id, epoch)
        if g is None or g < 0:
            self.refuse(f"{api} of {t} with producer id {producer_id} epoch {epoch}, which this broker did not give it")
            return "INVALID_PRODUCER_ID_MAPPING", None, None
        return None, self.producer(t, producer_id, epoch), g

    def on_add_partitions_to_txn(self, req: wire.Request, body: Any) -> Any:
        R = AddPartitionsToTxnResponse
        TR = R.AddPartitionsToTxnTopicResult
        PR = TR.AddPartitionsToTxnPartitionResult
        if req.api_version >= 4:
            self.refuse("AddPartitionsToTxn v4+ (broker to broker, KIP-890) from a client")
            return R(throttle_time_ms=0, error_code=ERRORS["UNSUPPORTED_VERSION"], results_by_transaction=[])
        t = body.v3_and_below_transactional_id
        err0, prod, g = self._txn_request("AddPartitionsToTxn", t, body.v3_and_below_producer_id,
                                          body.v3_and_below_producer_epoch)
        failed: str | None = err0
        results = []
        for topic in body.v3_and_below_topics:
            out = []
            for index in topic.partitions:
                p = self.partition(topic.name, index)
                if failed is not None:
                    code = ERRORS[failed] if failed == err0 else ERRORS["OPERATION_NOT_ATTEMPTED"]
                elif p is None:
                    code = ERRORS["UNKNOWN_TOPIC_OR_PARTITION"]
                else:
                    assert t is not None and prod is not None
                    m = Msg("AddPartitionsToTxn", tid=t, inst=prod.inst, epoch=g, part=p, gtx=(t, prod.inst, prod.txn),
                            att=self.copy_of("AddPartitionsToTxn", t, prod.inst, prod.txn, p, g))
                    r = self.exchange(m)
                    if r.err != "NONE":
                        failed = r.err
                    code = self._error("AddPartitionsToTxn", req.api_version, r.err)
                out.append(PR(partition_index=index, partition_error_code=code))
            results.append(TR(name=topic.name, results_by_partition=out))
        return R(throttle_time_ms=0, results_by_topic_v3_and_below=results)

    def _simple_txn(self, api: str, req: wire.Request, t: str, producer_id: int, epoch: int, **fields: Any) -> str:
        err, prod, g = self._txn_request(api, t, producer_id, epoch)
        if err is not None:
            return err
        self.max_txn = max(self.max_txn, prod.txn)
        m = Msg(api, tid=t, inst=prod.inst, epoch=g, part=OFFSETS_PART, gtx=(t, prod.inst, prod.txn),
                att=self.copy_of(api, t, prod.inst, prod.txn, g, tuple(sorted(fields.items()))), **fields)
        r = self.exchange(m)
        if api == "EndTxn" and r.err == "NONE":
            prod.txn += 1
            self._given(prod, t, r.epoch)
            self._end_epoch = r.epoch
        return r.err

    def on_add_offsets_to_txn(self, req: wire.Request, body: Any) -> Any:
        err = self._simple_txn("AddOffsetsToTxn", req, body.transactional_id, body.producer_id, body.producer_epoch)
        return AddOffsetsToTxnResponse(throttle_time_ms=0, error_code=self._error("AddOffsetsToTxn", req.api_version, err))

    def on_end_txn(self, req: wire.Request, body: Any) -> Any:
        self._end_epoch = -1
        if self.c.k.tv2 and req.api_version < 5:
            # a TV1 client (EndTxn before v5 cannot carry the epoch TV2 bumps): Kafka 4 serves it with
            # TV1, which this session's spec constants do not; it is told, not served wrongly
            self.refuse(f"EndTxn v{req.api_version} (a TV1 client) in a TV2 session: serve it with --version TV1V")
            return EndTxnResponse(throttle_time_ms=0, error_code=ERRORS["UNSUPPORTED_VERSION"], producer_id=-1, producer_epoch=-1)
        err = self._simple_txn("EndTxn", req, body.transactional_id, body.producer_id, body.producer_epoch,
                               commit=bool(body.committed))
        R = EndTxnResponse
        code = self._error("EndTxn", req.api_version, err)
        if err == "NONE" and self._end_epoch >= 0:
            t = body.transactional_id
            return R(throttle_time_ms=0, error_code=code, producer_id=self.c.producer_id(t, self._end_epoch),
                     producer_epoch=self.c.k.epoch_of(self._end_epoch))
        return R(throttle_time_ms=0, error_code=code, producer_id=-1, producer_epoch=-1)

    def on_txn_offset_commit(self, req: wire.Request, body: Any) -> Any:
        R = TxnOffsetCommitResponse
        TR = R.TxnOffsetCommitResponseTopic
        PR = TR.TxnOffsetCommitResponsePartition

        def answer(code: int) -> Any:
            return R(throttle_time_ms=0, topics=[
                TR(name=tp.name, partitions=[PR(partition_index=p.partition_index, error_code=code) for p in tp.partitions])
                for tp in body.topics])

        if self.c.k.tv2 and req.api_version < 5:
            # a TV1 client: Kafka only checks that its AddOffsetsToTxn put the offsets partition in the
            # transaction (TxnOffsetCommit v4 and earlier verify; v5, TV2, adds it:
            # AddPartitionsToTxnManager.txnOffsetCommitRequestVersionToTransactionSupportedOperation),
            # which this session's spec constants do not describe; it is told, not served wrongly
            self.refuse(f"TxnOffsetCommit v{req.api_version} (a TV1 client) in a TV2 session: serve it with --version TV1V")
            return answer(ERRORS["UNSUPPORTED_VERSION"])
        # TV1V and TV2: the spec's group coordinator verifies the commit with the transaction
        # coordinator (TV2: adds the offsets partition) before it writes it (GcTxnOffsetCommit, GcVerified)
        offsets = {(tp.name, p.partition_index): p.committed_offset for tp in body.topics for p in tp.partitions}
        generation = body.generation_id if req.api_version >= 3 else -1
        member = body.member_id if req.api_version >= 3 else ""
        err = _group_error(self.groups.check(body.group_id, generation, member or ""))
        if err == "NONE":
            self.offset_ids += 1
            err = self._simple_txn("TxnOffsetCommit", req, body.transactional_id, body.producer_id, body.producer_epoch,
                                   val=self.offset_ids)
            if err == "NONE":
                self.groups.add_pending(body.transactional_id, body.group_id, offsets)
        return answer(self._error("TxnOffsetCommit", req.api_version, err))

    def on_produce(self, req: wire.Request, body: Any) -> Any:
        R = ProduceResponse
        TR = R.TopicProduceResponse
        PR = TR.PartitionProduceResponse
        topics = []
        for td in body.topic_data:
            out = []
            for pd in td.partition_data:
                code, base, msg = self._produce_one(body.transactional_id, td.name, pd.index, pd.records)
                out.append(PR(index=pd.index, error_code=code, base_offset=base, log_append_time_ms=-1,
                              log_start_offset=LOG_START, record_errors=[], error_message=msg))
            topics.append(TR(name=td.name, partition_responses=out))
        if body.acks == 0:
            return None
        return R(responses=topics, throttle_time_ms=0)

    def _produce_one(self, t: str | None, topic: str, index: int, records: bytes | None) -> tuple[int, int, str | None]:
        p = self.partition(topic, index)
        if p is None:
            return ERRORS["UNKNOWN_TOPIC_OR_PARTITION"], -1, None
        try:
            batches = wire.parse_batches(records)
        except wire.WireError as e:
            return ERRORS["CORRUPT_MESSAGE"], -1, str(e)
        if len(batches) != 1:
            self.refuse(f"Produce to {topic}-{index} with {len(batches)} batches (clients send one per partition)")
            return ERRORS["INVALID_RECORD"], -1, "one record batch per partition"
        b = batches[0]
        if not b.is_transactional or b.is_control:
            return self._produce_plain(p, topic, index, b)
        if not t:
            t = next((q.txn_id for (u, pid, _), q in self.producers.items() if pid == b.producer_id), None)
        err, prod, g = self._txn_request("Produce", t, b.producer_id, b.producer_epoch)
        if err is not None or t is None:
            return ERRORS[err or "INVALID_PRODUCER_ID_MAPPING"], -1, None
        if any(s.producer_id < 0 for s in self.stored[p]) or self.plain.get(p):
            self.refuse(f"transactional Produce to {topic}-{index}, which holds non-transactional data")
            return ERRORS["INVALID_RECORD"], -1, "a partition holds transactional or plain data, not both"
        last_seq = b.base_sequence + b.record_count - 1
        seq = self.ordinals.setdefault((t, g, p), Ordinals()).of(b.base_sequence, last_seq)
        self.raw_of.setdefault((t, g, p, seq), b)
        m = Msg("Produce", tid=t, inst=prod.inst, epoch=g, part=p, seq=seq, gtx=(t, prod.inst, prod.txn),
                att=self.copy_of("Produce", t, prod.inst, prod.txn, g, p, seq))
        self.max_txn = max(self.max_txn, prod.txn)
        r = self.exchange(m)
        if r.err != "NONE":
            return ERRORS[r.err], -1, None
        for entry, stored in zip(self.c.plog[p].entries, self.stored[p], strict=True):
            if entry.kind == "data" and (entry.pid, entry.epoch, entry.seq) == (t, g, seq):
                return 0, stored.base, None
        return 0, -1, None  # a duplicate of a batch no longer in the log

    def _produce_plain(self, p: int, topic: str, index: int, b: wire.Batch) -> tuple[int, int, str | None]:
        """Non-transactional data: outside the spec, so only to partitions without transactional data."""
        if any(s.producer_id >= 0 for s in self.stored[p]) or self.c.plog[p].entries:
            self.refuse(f"non-transactional Produce to {topic}-{index}, which holds transactional data")
            return ERRORS["INVALID_RECORD"], -1, "a partition holds transactional or plain data, not both"
        self.plain[p] = True
        base = self.next_offset(p)
        self.stored[p].append(Stored(base, base + b.last_offset_delta, wire.rebase(b, base), -1))
        return 0, base, None

    def on_list_offsets(self, req: wire.Request, body: Any) -> Any:
        R = ListOffsetsResponse
        TR = R.ListOffsetsTopicResponse
        PR = TR.ListOffsetsPartitionResponse
        committed = req.api_version >= 2 and body.isolation_level == 1
        topics = []
        for t in body.topics:
            out = []
            for q in t.partitions:
                p = self.partition(t.name, q.partition_index, create=False)
                if p is None:
                    out.append(PR(partition_index=q.partition_index, error_code=ERRORS["UNKNOWN_TOPIC_OR_PARTITION"],
                                  timestamp=-1, offset=-1, leader_epoch=-1, old_style_offsets=[]))
                    continue
                if q.timestamp == -2:  # EARLIEST  # noqa: SIM108 (a nested conditional reads worse)
                    off = LOG_START
                else:  # LATEST, and any timestamp: the end (timestamps are not indexed)
                    off = self.lso_offset(p) if committed else self.next_offset(p)
                out.append(PR(partition_index=q.partition_index, error_code=0, timestamp=-1, offset=off, leader_epoch=0,
                              old_style_offsets=[off]))
            topics.append(TR(name=t.name, partitions=out))
        return R(throttle_time_ms=0, topics=topics)

    def lso_offset(self, p: int) -> int:
        lso = self.c.plog[p].lso()
        s = self.stored[p]
        return s[lso].base if lso < len(s) else self.next_offset(p)

    def on_fetch(self, req: wire.Request, body: Any) -> Any:
        R = FetchResponse
        TR = R.FetchableTopicResponse
        PR = TR.PartitionData
        AT = PR.AbortedTransaction
        committed = req.api_version >= 4 and body.isolation_level == 1
        budget = body.max_bytes if req.api_version >= 3 else 50 * 1024 * 1024
        topics = []
        self.last_fetch_empty = True
        for t in body.topics:
            out = []
            for q in t.partitions:
                p = self.partition(t.topic, q.partition, create=False)
                if p is None:
                    out.append(PR(partition_index=q.partition, error_code=ERRORS["UNKNOWN_TOPIC_OR_PARTITION"], high_watermark=-1,
                                  last_stable_offset=-1, log_start_offset=-1, aborted_transactions=None, preferred_read_replica=-1,
                                  records=b""))
                    continue
                end = self.next_offset(p)
                if not LOG_START <= q.fetch_offset <= end:
                    out.append(PR(partition_index=q.partition, error_code=ERRORS["OFFSET_OUT_OF_RANGE"], high_watermark=end,
                                  last_stable_offset=self.lso_offset(p), log_start_offset=LOG_START,
                                  aborted_transactions=None, preferred_read_replica=-1, records=b""))
                    continue
                raw, aborted = self._read(p, q.fetch_offset, committed, min(q.partition_max_bytes, max(budget, 1)))
                budget -= len(raw)
                out.append(PR(partition_index=q.partition, error_code=0, high_watermark=end, last_stable_offset=self.lso_offset(p),
                              log_start_offset=LOG_START,
                              aborted_transactions=[AT(producer_id=pid, first_offset=first) for pid, first in aborted] if committed else None,
                              preferred_read_replica=-1, records=raw))
            topics.append(TR(topic=t.topic, partitions=out))
        return R(throttle_time_ms=0, error_code=0, session_id=0, responses=topics)

    def _read(self, p: int, offset: int, committed: bool, max_bytes: int) -> tuple[bytes, list[tuple[int, int]]]:
        """The batches from Kafka offset ``offset`` a consumer is sent (up to the LSO for
        read_committed, the high watermark otherwise), and the aborted transactions among them.
        A read of transactional data is the spec's Fetch step."""
        stored = self.stored[p]
        start = next((i for i, s in enumerate(stored) if s.last >= offset), len(stored))
        if self.plain.get(p):
            upper = len(stored)
        else:
            log = self.c.plog[p]
            lso = log.lso()
            inclusive = self.c.k.bug("lso_inclusive") and lso < len(stored)
            upper = (lso + 1 if inclusive else lso) if committed else len(stored)
        chosen: list[int] = []
        size = 0
        for i in range(start, upper):
            if chosen and size + len(stored[i].raw) > max_bytes:
                break
            chosen.append(i)
            size += len(stored[i].raw)
        if not chosen:
            return b"", []
        self.last_fetch_empty = False
        aborted: list[tuple[int, int]] = []
        if not self.plain.get(p):
            isolation = "read_committed" if committed else "read_uncommitted"
            self.step("Fetch", (p, isolation, start))
            if committed:
                last = chosen[-1]
                for _pid, first, marker in self.c.plog[p].aborted_index():
                    if first <= last and marker >= start:
                        aborted.append((stored[first].producer_id, stored[first].base))
        return b"".join(stored[i].raw for i in chosen), aborted

    # --- consumer groups (outside the spec) ---

    def on_join_group(self, req: wire.Request, body: Any) -> Any:
        R = JoinGroupResponse
        protocols = [(pr.name, bytes(pr.metadata)) for pr in body.protocols]
        err, g, member = self.groups.join(body.group_id, body.member_id or "", body.protocol_type, protocols)
        members = []
        if err == 0 and member == g.leader:
            members = [R.JoinGroupResponseMember(member_id=m, group_instance_id=None, metadata=md) for m, md in g.members.items()]
        return R(throttle_time_ms=0, error_code=err, generation_id=g.generation if err == 0 else -1,
                 protocol_type=g.protocol_type, protocol_name=g.protocol, leader=g.leader or "", skip_assignment=False,
                 member_id=member, members=members)

    def on_sync_group(self, req: wire.Request, body: Any) -> Any:
        assignments = {a.member_id: bytes(a.assignment) for a in body.assignments}
        err, assignment = self.groups.sync(body.group_id, body.generation_id, body.member_id, assignments)
        g = self.groups.group(body.group_id)
        return SyncGroupResponse(throttle_time_ms=0, error_code=err, protocol_type=g.protocol_type, protocol_name=g.protocol,
                                 assignment=assignment)

    def on_heartbeat(self, req: wire.Request, body: Any) -> Any:
        return HeartbeatResponse(throttle_time_ms=0, error_code=self.groups.heartbeat(body.group_id, body.generation_id, body.member_id))

    def on_leave_group(self, req: wire.Request, body: Any) -> Any:
        R = LeaveGroupResponse
        if req.api_version >= 3:
            results = [R.MemberResponse(member_id=m.member_id, group_instance_id=m.group_instance_id,
                                        error_code=self.groups.leave(body.group_id, m.member_id)) for m in body.members]
            return R(throttle_time_ms=0, error_code=0, members=results)
        return R(throttle_time_ms=0, error_code=self.groups.leave(body.group_id, body.member_id))

    def on_describe_groups(self, req: wire.Request, body: Any) -> Any:
        R = DescribeGroupsResponse
        G = R.DescribedGroup
        out = []
        for group_id in body.groups:
            g = self.groups.groups.get(group_id)
            if g is None:
                out.append(G(error_code=0, error_message=None, group_id=group_id, group_state="Dead", protocol_type="",
                             protocol_data="", members=[], authorized_operations=None))
                continue
            state = "Stable" if g.synced else "CompletingRebalance" if g.members else "Empty"
            members = [G.DescribedGroupMember(member_id=m, group_instance_id=None, client_id="", client_host="",
                                              member_metadata=md, member_assignment=g.assignments.get(m, b""))
                       for m, md in g.members.items()]
            out.append(G(error_code=0, error_message=None, group_id=group_id, group_state=state, protocol_type=g.protocol_type,
                         protocol_data=g.protocol or "", members=members, authorized_operations=None))
        return R(throttle_time_ms=0, groups=out)

    def on_offset_commit(self, req: wire.Request, body: Any) -> Any:
        R = OffsetCommitResponse
        TR = R.OffsetCommitResponseTopic
        PR = TR.OffsetCommitResponsePartition
        err = self.groups.check(body.group_id, body.generation_id_or_member_epoch, body.member_id or "")
        topics = []
        for t in body.topics:
            out = []
            for q in t.partitions:
                code = err
                if code == 0 and self.partition(t.name, q.partition_index, create=False) is None:
                    code = ERRORS["UNKNOWN_TOPIC_OR_PARTITION"]
                if code == 0:
                    self.groups.commit(body.group_id, {(t.name, q.partition_index): q.committed_offset})
                out.append(PR(partition_index=q.partition_index, error_code=code))
            topics.append(TR(name=t.name, partitions=out))
        return R(throttle_time_ms=0, topics=topics)

    def on_offset_fetch(self, req: wire.Request, body: Any) -> Any:
        R = OffsetFetchResponse
        stable = req.api_version >= 7 and bool(body.require_stable)
        if req.api_version >= 8:
            groups = []
            for rg in body.groups:
                topics = self._fetched_offsets(rg.group_id, rg.topics, stable, R.OffsetFetchResponseGroup.OffsetFetchResponseTopics)
                groups.append(R.OffsetFetchResponseGroup(group_id=rg.group_id, topics=topics, error_code=0))
            return R(throttle_time_ms=0, groups=groups)
        topics = self._fetched_offsets(body.group_id, body.topics, stable, R.OffsetFetchResponseTopic)
        return R(throttle_time_ms=0, topics=topics, error_code=0)

    def _fetched_offsets(self, group_id: str, wanted: Any, stable: bool, TR: Any) -> list[Any]:
        PR = TR.OffsetFetchResponsePartitions if hasattr(TR, "OffsetFetchResponsePartitions") else TR.OffsetFetchResponsePartition
        g = self.groups.group(group_id)
        if wanted is None:  # every partition the group committed
            by_topic: dict[str, list[int]] = {}
            for (name, index) in sorted(g.committed):
                by_topic.setdefault(name, []).append(index)
            pairs = list(by_topic.items())
        else:
            pairs = [(t.name, list(t.partition_indexes)) for t in wanted]
        out = []
        for name, indexes in pairs:
            parts = []
            for i in indexes:
                code = ERRORS["UNSTABLE_OFFSET_COMMIT"] if stable and self.groups.unstable(group_id, (name, i)) else 0
                off = g.committed.get((name, i), -1) if code == 0 else -1
                parts.append(PR(partition_index=i, committed_offset=off, committed_leader_epoch=-1, metadata="", error_code=code))
            out.append(TR(name=name, partitions=parts))
        return out

    # --- faults (taken between requests) ---

    def restart_leader_of(self, req: wire.Request) -> bool:
        """Restart the leader of the first partition of Produce request ``req``."""
        for td in getattr(req.body, "topic_data", []) or []:
            for pd in td.partition_data:
                return self.restart_leader(td.name, pd.index)
        return False

    def failover(self) -> bool:
        """The transaction coordinator fails over (a new coordinator epoch reloads its log)."""
        self.c.k = attrs.evolve(self.c.k, max_failovers=self.c.failovers + 1)  # the session's budget grows as it fails over
        ok = self.step("Failover", None)
        if ok:
            self.drive()
        return ok

    def restart_leader(self, topic: str, index: int) -> bool:
        p = self.partition(topic, index, create=False)
        if p is None:
            return False
        self.c.k = attrs.evolve(self.c.k, leader_restarts=True)
        ok = self.step("LeaderRestart", p)
        if ok:
            self.restarts += 1
            self.drive()
        return ok


def _group_error(code: int) -> str:
    """The name of a group coordinator's error code."""
    return next(name for name, c in ERRORS.items() if c == code)


def _snake(name: str) -> str:
    out: list[str] = []
    for ch in name:
        if ch.isupper() and out:
            out.append("_")
        out.append(ch.lower())
    return "".join(out)


def _valid_topic(name: str) -> bool:
    """Kafka's legal topic names (Topic.validate): 1..249 of [a-zA-Z0-9._-], not . or .."""
    return 0 < len(name) <= 249 and name not in (".", "..") and all(ch.isalnum() or ch in "._-" for ch in name) \
        and name.isascii() and not name.startswith("__")

