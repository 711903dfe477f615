"""The probe's workload: a seeded plan, run with real clients against a target, recorded.

The plan (``make_plan``) is drawn from the seed: per producer, its transactions (which partitions,
how many records each, commit or abort). Running it (``run``) starts, all at once:

- the producers, one thread each (``producers`` of them), committing and aborting as planned;
- two zombies: instance 0 of a transactional id begins a transaction and sends; instance 1 of the
  same id initialises (which must fence instance 0 and abort its transaction); instance 0 then
  commits at once (``zombie-0``: its EndTxn must be refused) or sends again first (``zombie-w0``:
  its produce must be refused); instance 1 commits a transaction of its own;
- a producer process (probe._child) that commits, begins one more transaction, sends, and is killed
  by its process id (SIGKILL) mid-transaction; a new instance of its transactional id then
  initialises, which must abort what the dead one left open, and commits one transaction;
- a transaction left open: begun, sent, acknowledged, never ended while the probe observes;
- consumers polling throughout from offset 0 of every partition: one read_committed, one
  read_uncommitted (``assign``, no group: no rebalances to excuse);
- the observer: rounds of raw read_committed Fetch requests (probe.wire) from where the last one
  ended, every ``FETCH_INTERVAL`` seconds.

When the producers are done, the consumers drain to the end of the log, and two final passes read
every partition from offset 0 with raw Fetch requests: read_uncommitted (the log itself, markers
included) and read_committed (the LSO and the aborted-transactions list over the whole log).
Every loop is bounded in count and time; the same seed gives the same plan (what the broker and
the threads' timing do with it may differ).
"""

from __future__ import annotations

import json
import os
import random
import select
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import attrs

from probe.clients import ADMIN_SECONDS, CALL_SECONDS, KpProducer, TxnProducer, client_logger
from probe.history import Recorder
from probe.targets import Target, TargetError
from probe.wire import READ_COMMITTED, READ_UNCOMMITTED, Connection, Fetched, RawRequestError

FETCH_INTERVAL = 0.2
PACE = 0.15  # between a producer's transactions, so that the observer's fetches fall between them
MAX_FETCHES_PER_PASS = 10_000  # per partition and pass: a log the probe wrote is far smaller
DRAIN_SECONDS = 10.0
GROUP_SECONDS = 30.0  # how long the consume-transform-produce member waits for its group to form
REWIND_TRIES = 5  # reads of the group's committed offsets before the member gives up (0.5 s apart)


@attrs.frozen
class Txn:
    records: tuple[tuple[int, int], ...]  # (partition, how many records)
    commit: bool


@attrs.frozen
class Plan:
    seed: int
    topic: str
    partitions: int
    producers: tuple[tuple[Txn, ...], ...]
    zombie: bool
    kill: bool
    open_txn: bool
    ctp: bool = False
    kafka_python: bool = False
    java: bool = False

    @property
    def output(self) -> str:
        """The consume-transform-produce output topic."""
        return f"{self.topic}-out"

    def to_json(self) -> dict[str, Any]:
        return {
            "seed": self.seed,
            "topic": self.topic,
            "partitions": self.partitions,
            "producers": [[{"records": [list(r) for r in t.records], "commit": t.commit} for t in txns] for txns in self.producers],
            "zombie": self.zombie,
            "kill": self.kill,
            "open_txn": self.open_txn,
            "ctp": self.ctp,
            "kafka_python": self.kafka_python,
            "java": self.java,
        }


def make_plan(
    seed: int,
    partitions: int = 3,
    producers: int = 2,
    txns: int = 6,
    records: int = 3,
    abort_ratio: float = 0.34,
    scenarios: tuple[str, ...] = ("zombie", "kill", "open", "ctp", "kafka-python", "java"),
) -> Plan:
    rng = random.Random(seed)
    topic = f"txconform-probe-{seed}-{rng.randrange(16**6):06x}"
    plans = []
    for _ in range(producers):
        mine = []
        for _ in range(txns):
            chosen = sorted(rng.sample(range(partitions), rng.randint(1, partitions)))
            mine.append(Txn(tuple((p, rng.randint(1, records)) for p in chosen), rng.random() >= abort_ratio))
        plans.append(tuple(mine))
    return Plan(
        seed,
        topic,
        partitions,
        tuple(plans),
        "zombie" in scenarios,
        "kill" in scenarios,
        "open" in scenarios,
        "ctp" in scenarios,
        "kafka-python" in scenarios,
        "java" in scenarios,
    )


class Run:
    """One run of a plan against a started target, recorded by ``rec``."""

    def __init__(self, plan: Plan, target: Target, rec: Recorder, workdir: Path, deadline_s: float = 90.0, faults: tuple[Any, ...] = ()) -> None:
        self.plan = plan
        self.faults = faults  # probe.faults.Fault, applied to a KafkaCluster target while the producers run
        self.target = target
        self.rec = rec
        self.workdir = workdir
        self.deadline = time.monotonic() + deadline_s
        self.stop = threading.Event()
        self.clients_log = str(workdir / "clients.log")
        self.errors: list[str] = []
        self.leaders: dict[tuple[str, int], tuple[str, int]] = {}  # (topic, partition) -> its leader
        self.partitions = plan.partitions  # of the input topic, as the broker made it
        self.topics: dict[str, int] = {}  # every topic the probe made -> its partitions
        self._open: TxnProducer | None = None
        self.producers_done = threading.Event()
        self.under_way = threading.Event()  # a transaction has committed (probe.faults waits for it)

    # --- the topic ---------------------------------------------------------------------------

    def _admin_config(self) -> dict[str, Any]:
        return {"bootstrap.servers": self.target.bootstrap, "logger": client_logger(self.clients_log)}

    def create_topic(self, topic: str) -> int:
        """Create ``topic`` (or have the broker auto-create it) and learn its leaders; its partitions."""
        from confluent_kafka.admin import AdminClient
        from confluent_kafka.cimpl import NewTopic

        admin = AdminClient(self._admin_config())
        new = NewTopic(topic, num_partitions=self.plan.partitions, replication_factor=self.target.replication)
        futures = admin.create_topics([new], operation_timeout=ADMIN_SECONDS)
        self.topics[topic] = self.plan.partitions
        try:
            futures[topic].result(ADMIN_SECONDS)
            self.rec.add("note", what="create-topic", topic=topic, partitions=self.plan.partitions)
        except Exception as e:
            self.rec.add("note", what="create-topic-failed", topic=topic, error=str(e) or type(e).__name__)
        for _ in range(50):  # the topic's metadata (a Metadata request for it auto-creates it where allowed)
            got = self.learn_leaders(topic, admin)
            if got:
                if got != self.plan.partitions:
                    self.rec.add("note", what="partitions", topic=topic, asked=self.plan.partitions, got=got)
                return got
            time.sleep(0.2)
        raise TargetError(f"{self.target.name}: topic {topic} has no leaders after 10 s; the clients' log: {self.clients_log}")

    def learn_leaders(self, topic: str, admin: Any) -> int:
        """The leader of each partition of ``topic`` as the metadata says now; its partitions, or 0
        while some partition has no leader."""
        md = admin.list_topics(topic, timeout=CALL_SECONDS)
        t = md.topics.get(topic)
        if t is None or t.error is not None or not t.partitions or not all(p.leader >= 0 and p.leader in md.brokers for p in t.partitions.values()):
            return 0
        self.topics[topic] = len(t.partitions)
        for p, m in t.partitions.items():
            self.leaders[(topic, p)] = (str(md.brokers[m.leader].host), int(md.brokers[m.leader].port))
        return len(t.partitions)

    def _relearn(self, topic: str, admin: Any) -> None:
        """``learn_leaders`` while faults are applied: a Metadata call that times out because a
        node is down or paused is tried again in the observer's next round. (Uncaught, it ended
        the observer thread on a three-node cluster under load, the test's teardown then failing.)"""
        from confluent_kafka import KafkaException

        try:
            self.learn_leaders(topic, admin)
        except KafkaException as e:
            self.rec.add("note", what="observer-metadata", topic=topic, error=str(e))

    def after_faults(self) -> None:
        """Once the faults are healed: wait (bounded) until every partition has a leader again and
        learn them, so that the final passes read each partition from its leader of now."""
        from confluent_kafka.admin import AdminClient

        admin = AdminClient(self._admin_config())
        deadline = time.monotonic() + 60.0
        for topic in list(self.topics):
            while not self.learn_leaders(topic, admin) and time.monotonic() < deadline:
                time.sleep(0.5)
        self.rec.add("note", what="leaders-after-faults", leaders=sorted([t, p, f"{h}:{port}"] for (t, p), (h, port) in self.leaders.items()))

    def delete_topics(self) -> str | None:
        """Delete the probe's topics; None, or why one could not be."""
        from confluent_kafka.admin import AdminClient

        admin = AdminClient(self._admin_config())
        why = None
        futures = admin.delete_topics(list(self.topics), operation_timeout=ADMIN_SECONDS) if self.topics else {}
        for topic, future in futures.items():
            try:
                future.result(ADMIN_SECONDS)
                self.rec.add("note", what="delete-topic", topic=topic)
            except Exception as e:
                why = str(e) or type(e).__name__
                self.rec.add("note", what="delete-topic-failed", topic=topic, error=why)
        return why

    # --- producers -----------------------------------------------------------------------------

    def _producer(self, txid: str, instance: int, process: str) -> TxnProducer:
        return TxnProducer(self.rec.add, self.target.bootstrap, txid, instance, process, self.clients_log)

    def _txn(self, p: TxnProducer, txn: Txn, n_records: int | None = None) -> None:
        if not p.begin():
            return
        for partition, count in txn.records:
            if partition >= self.partitions:
                continue
            for i in range(count if n_records is None else n_records):
                p.send(self.plan.topic, partition, f"k{partition}", f"{p.process}-{p.n}-{partition}-{i}")
        p.flush()
        if txn.commit:
            if p.commit() == "ok":
                self.under_way.set()
        else:
            p.abort()

    def producer(self, k: int, txns: tuple[Txn, ...]) -> None:
        p = self._producer(f"{self.plan.topic}-p{k}", 0, f"producer-{k}")
        if p.init() is not None:
            return
        for txn in txns:
            if time.monotonic() > self.deadline or p.fenced:
                break
            self._txn(p, txn)
            time.sleep(PACE)
        if self.plan.open_txn and k == 0 and p.begin():
            for partition in range(self.partitions):
                p.send(self.plan.topic, partition, f"k{partition}", f"{p.process}-open-{partition}")
            p.flush()
            self.rec.add("note", process=p.process, what="left-open", txn=p.txn_name())
            self._open = p  # kept, never ended, until the final observation

    def kafka_python_producer(self) -> None:
        """Producer 0's transactions again, with kafka-python's KafkaProducer as the client."""

        def make() -> Any:
            return KpProducer(self.rec.add, self.target.bootstrap, f"{self.plan.topic}-kp", 0, "kp-0")

        self._second_client(make, "kp-0", "kafka-python", Exception)  # e.g. no broker version it knows

    def java_producer(self) -> None:
        """Producer 0's transactions again, with the Apache Kafka Java client (kafka-clients 4.x,
        probe.java_client): the one client that speaks transaction version 2's requests."""
        from probe.java_client import JavaProducer

        def make() -> Any:
            return JavaProducer(self.rec.add, self.target.bootstrap, f"{self.plan.topic}-java", 0, "java-0", self.clients_log)

        self._second_client(make, "java-0", "java", TargetError)  # no Java, no javac, jars Maven could not resolve

    def _second_client(self, make: Callable[[], Any], process: str, client: str, cannot_start: type[Exception]) -> None:
        """Producer 0's transactions with another client; a client that cannot start is a note."""
        try:
            p = make()
        except cannot_start as e:
            self.rec.add("note", process=process, what="init-failed", client=client, error=f"{type(e).__name__}: {e}")
            return
        try:
            if p.init() is not None:
                return
            for txn in self.plan.producers[0]:
                if time.monotonic() > self.deadline or p.fenced:
                    break
                self._txn(p, txn)
                time.sleep(PACE)
        finally:
            p.close()

    def zombie(self) -> None:
        """Two zombies, each what fencing exists to stop (KIP-98: a newer instance's InitProducerId
        bumps the epoch and aborts the older instance's open transaction;
        TransactionCoordinator.handleInitProducerId, handleEndTransaction). ``zombie-0`` began a
        transaction and sent; once ``zombie-1`` has initialised, it only commits: its EndTxn must
        be refused. ``zombie-w0`` does the same but sends again first: its produce must be
        refused. Before each commit a ``commit-after-fencing`` note names the transaction and
        the instance that fenced it; probe.findings reports a commit the client was told succeeded,
        and one the log shows."""
        for suffix, old_name, new_name, writes in (("zombie", "zombie-0", "zombie-1", False), ("zombie-w", "zombie-w0", "zombie-w1", True)):
            txid = f"{self.plan.topic}-{suffix}"
            old = self._producer(txid, 0, old_name)
            if old.init() is not None or not old.begin():
                continue
            for partition in range(self.partitions):
                old.send(self.plan.topic, partition, f"k{partition}", f"{old_name}-1-{partition}-before")
            old.flush()
            new = self._producer(txid, 1, new_name)
            if new.init() is None:
                self.rec.add("note", process=new_name, what="fenced-older-instance", txid=txid)
            if writes:
                for partition in range(self.partitions):
                    old.send(self.plan.topic, partition, f"k{partition}", f"{old_name}-1-{partition}-after")
                old.flush()
            self.rec.add("note", process=old_name, what="commit-after-fencing", txn=old.txn_name(), txid=txid, fenced_by=new_name)
            old.commit()
            self._txn(new, Txn(tuple((p, 1) for p in range(self.partitions)), True))

    def kill(self) -> None:
        txid = f"{self.plan.topic}-killed"
        args = {
            "bootstrap": self.target.bootstrap,
            "txid": txid,
            "topic": self.plan.topic,
            "partitions": self.partitions,
            "process": "killed-0",
            "committed": 1,
            "log": self.clients_log,
        }
        child = subprocess.Popen(
            [sys.executable, "-m", "probe._child", json.dumps(args)],
            bufsize=0,  # unbuffered: select() then sees every line the child wrote
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        lines: list[dict[str, Any]] = []
        assert child.stdout is not None
        try:
            limit = time.monotonic() + 30.0
            while time.monotonic() < limit and len(lines) < 1000:
                ready, _, _ = select.select([child.stdout], [], [], max(0.0, limit - time.monotonic()))
                raw = child.stdout.readline() if ready else b""
                if not raw:
                    break
                try:
                    line = json.loads(raw)
                except ValueError:
                    continue
                if isinstance(line, dict):
                    lines.append(line)
                    if line.get("type") == "mid":
                        break
        finally:
            os.kill(child.pid, signal.SIGKILL)
            child.wait(10)
            child.stdout.close()
        self.rec.add_lines([ln for ln in lines if ln.get("type") != "mid"])
        mid = any(ln.get("type") == "mid" for ln in lines)
        self.rec.add("note", process="killed-0", what="killed" if mid else "killed-before-mid", pid=child.pid, signal="SIGKILL")
        recovery = self._producer(txid, 1, "killed-1")
        if recovery.init() is None:
            self._txn(recovery, Txn(tuple((p, 1) for p in range(self.partitions)), True))

    def ctp(self) -> None:
        """Consume-transform-produce: a member of a consumer group reads the input (read_committed),
        writes one output record per input record in a transaction that also commits the group's
        offsets (send_offsets_to_transaction), and commits or, as the plan says, aborts and rewinds
        to the group's committed offsets (the exactly-once loop of KIP-98 / KIP-447). Each output
        record's key names its input record (topic/partition/offset)."""
        from confluent_kafka import Consumer, TopicPartition

        rng = random.Random(self.plan.seed * 7919 + 1)
        group = f"{self.plan.topic}-ctp"
        c = Consumer(
            {
                "bootstrap.servers": self.target.bootstrap,
                "group.id": group,
                "isolation.level": "read_committed",
                "enable.auto.commit": False,
                "auto.offset.reset": "earliest",
                "logger": client_logger(self.clients_log),
            }
        )
        p = self._producer(f"{self.plan.topic}-ctp", 0, "ctp-0")
        try:
            if p.init() is not None:
                return
            c.subscribe([self.plan.topic])
            started = time.monotonic()
            assigned = False
            idle_since: float | None = None
            rounds = 0
            while time.monotonic() < self.deadline + DRAIN_SECONDS and rounds < 10_000:
                rounds += 1
                msgs = [m for m in c.consume(50, 0.3) if m.error() is None]
                if not assigned and c.assignment():
                    assigned = True
                    parts = [[tp.topic, tp.partition] for tp in c.assignment()]
                    self.rec.add("note", process="ctp-0", what="ctp-assigned", group=group, seconds=round(time.monotonic() - started, 1), partitions=parts)
                if not msgs:
                    if not c.assignment() and time.monotonic() - started < GROUP_SECONDS:
                        continue  # a new group takes a while to form (Kafka: group.initial.rebalance.delay.ms, 3 s)
                    if self.producers_done.is_set():
                        idle_since = idle_since or time.monotonic()
                        if time.monotonic() - idle_since > 5.0:
                            break
                    continue
                idle_since = None
                if not p.begin():
                    break
                for m in msgs:
                    src = f"{m.topic()}/{m.partition()}/{m.offset()}"
                    p.send(self.plan.output, (m.partition() or 0) % self.topics[self.plan.output], src, f"ctp:{_text(m.value())}")
                p.flush()
                positions = c.position(c.assignment())
                offsets_sent = False
                try:
                    p.producer.send_offsets_to_transaction(positions, c.consumer_group_metadata(), CALL_SECONDS)
                    offsets_sent = True
                    self.rec.add(
                        "note",
                        process="ctp-0",
                        what="ctp-offsets",
                        txn=p.txn_name(),
                        group=group,
                        offsets=[[tp.topic, tp.partition, tp.offset] for tp in positions],
                    )
                except Exception as e:
                    self.rec.add("note", process="ctp-0", what="ctp-offsets-failed", txn=p.txn_name(), error=str(e))
                # the plan's abort drawn first: a run without faults draws as it always did
                if not ctp_end(p, c, self.rec, group, offsets_sent=offsets_sent, planned_abort=rng.random() < 0.2):
                    break
            if not c.assignment():
                # the group never gave this member a partition (JoinGroup / SyncGroup never completed)
                self.rec.add("note", process="ctp-0", what="ctp-no-assignment", group=group, seconds=round(time.monotonic() - started, 1))
                return
            final = c.committed([TopicPartition(self.plan.topic, k) for k in range(self.partitions)], CALL_SECONDS)
            self.rec.add("note", process="ctp-0", what="group-committed", group=group, offsets=[[tp.topic, tp.partition, tp.offset] for tp in final])
        except Exception as e:  # a client error the loop did not expect: recorded, the run goes on
            self.errors.append(f"ctp: {e}")
            self.rec.add("note", process="ctp-0", what="ctp-failed", error=str(e))
        finally:
            c.close()

    # --- consumers and the observer ------------------------------------------------------------

    def consumer(self, isolation: str) -> None:
        from confluent_kafka import Consumer, TopicPartition

        process = f"consumer-{'rc' if isolation == 'read_committed' else 'ru'}"
        c = Consumer(
            {
                "bootstrap.servers": self.target.bootstrap,
                "group.id": f"{self.plan.topic}-{process}",
                "isolation.level": isolation,
                "enable.auto.commit": False,
                "auto.offset.reset": "earliest",
                "logger": client_logger(self.clients_log),
            }
        )
        try:
            c.assign([TopicPartition(self.plan.topic, p, 0) for p in range(self.partitions)])
            op = 0
            drain_until: float | None = None
            while time.monotonic() < self.deadline + DRAIN_SECONDS:
                if self.stop.is_set() and drain_until is None:
                    drain_until = time.monotonic() + 2.0
                if drain_until is not None and time.monotonic() > drain_until:
                    break
                msgs = c.consume(200, 0.2)
                records = [[m.topic(), m.partition(), m.offset(), _text(m.key()), _text(m.value())] for m in msgs if m.error() is None]
                if records:
                    op += 1
                    self.rec.add("poll", process=process, op=op, isolation=isolation, records=records)
                    if drain_until is not None:
                        drain_until = time.monotonic() + 2.0
        finally:
            c.close()

    def _connection(self, topic: str, partition: int, conns: dict[tuple[str, int], Connection]) -> Connection:
        leader = self.leaders[(topic, partition)]
        if leader not in conns:
            conns[leader] = Connection(*leader)
        return conns[leader]

    def _record_fetch(self, process: str, isolation: int, topic: str, partition: int, f: Fetched, final: bool) -> None:
        self.rec.add(
            "fetch",
            process=process,
            isolation="read_committed" if isolation == READ_COMMITTED else "read_uncommitted",
            topic=topic,
            partition=partition,
            from_offset=f.from_offset,
            error_code=f.error_code,
            high_watermark=f.high_watermark,
            lso=f.lso,
            aborted=[list(a) for a in f.aborted],
            empty_response=f.empty_response,
            final=final,
            batches=[{**b.row, "records": [list(r) for r in b.records]} for b in f.batches],
            delivered=[list(r) for r in f.delivered()] if isolation == READ_COMMITTED else None,
        )

    def observer(self) -> None:
        """Rounds of raw read_committed fetches. A leader that is gone (a fault: probe.faults) or no
        longer leads costs a reconnection and a look at the metadata, not the observer."""
        from confluent_kafka.admin import AdminClient

        conns: dict[tuple[str, int], Connection] = {}
        position = dict.fromkeys(sorted(self.leaders), 0)
        admin = AdminClient(self._admin_config())
        lost = 0
        noted: set[tuple[str, int]] = set()  # partitions whose leader is unreachable, noted once until a fetch succeeds
        try:
            rounds = 0
            while not self.stop.is_set() and time.monotonic() < self.deadline and rounds < 100_000:
                rounds += 1
                for topic, p in position:
                    try:
                        f = self._connection(topic, p, conns).fetch(topic, p, position[(topic, p)], READ_COMMITTED, max_wait_ms=50)
                    except RawRequestError as e:
                        lost += 1
                        if lost > 1000 or not self.faults:
                            raise
                        conn = conns.pop(self.leaders[(topic, p)], None)
                        if conn is not None:
                            conn.close()
                        self._relearn(topic, admin)
                        if (topic, p) not in noted:
                            noted.add((topic, p))
                            self.rec.add("note", what="observer-reconnect", topic=topic, partition=p, error=str(e))
                        continue
                    noted.discard((topic, p))
                    if f.error_code == 0 and (f.batches or not f.empty_response):
                        self._record_fetch("fetch-rc", READ_COMMITTED, topic, p, f, final=False)
                        position[(topic, p)] = f.next_offset()
                    elif f.error_code != 0 and self.faults:
                        self._relearn(topic, admin)
                self.stop.wait(FETCH_INTERVAL)
        except RawRequestError as e:
            self.errors.append(f"observer: {e}")
            self.rec.add("note", what="observer-failed", error=str(e))
        finally:
            for c in conns.values():
                c.close()

    def final_pass(self, isolation: int) -> None:
        """Every partition from offset 0 to its end, one Fetch after another (bounded)."""
        process = "log" if isolation == READ_UNCOMMITTED else "fetch-rc-final"
        conns: dict[tuple[str, int], Connection] = {}
        try:
            for topic, p in sorted(self.leaders):
                offset = 0
                for _ in range(MAX_FETCHES_PER_PASS):
                    f = self._connection(topic, p, conns).fetch(topic, p, offset, isolation, max_wait_ms=200)
                    self._record_fetch(process, isolation, topic, p, f, final=True)
                    end = f.high_watermark if isolation == READ_UNCOMMITTED or f.lso is None else f.lso
                    if f.error_code != 0 or not f.batches or f.next_offset() >= end:
                        break
                    offset = f.next_offset()
        except RawRequestError as e:
            self.errors.append(f"{process}: {e}")
            self.rec.add("note", what=f"{process}-failed", error=str(e))
        finally:
            for c in conns.values():
                c.close()

    # --- the whole run ---------------------------------------------------------------------------

    def run(self) -> None:
        self.partitions = self.create_topic(self.plan.topic)
        if self.plan.ctp:
            self.create_topic(self.plan.output)
        background = [threading.Thread(target=self.observer, name="observer", daemon=True)]
        background += [threading.Thread(target=self.consumer, args=(iso,), name=iso, daemon=True) for iso in ("read_committed", "read_uncommitted")]
        workers = [threading.Thread(target=self.producer, args=(k, txns), name=f"producer-{k}", daemon=True) for k, txns in enumerate(self.plan.producers)]
        if self.plan.zombie:
            workers.append(threading.Thread(target=self.zombie, name="zombie", daemon=True))
        if self.plan.kill:
            workers.append(threading.Thread(target=self.kill, name="kill", daemon=True))
        if self.plan.kafka_python:
            workers.append(threading.Thread(target=self.kafka_python_producer, name="kafka-python", daemon=True))
        if self.plan.java:
            workers.append(threading.Thread(target=self.java_producer, name="java", daemon=True))
        ctp = [threading.Thread(target=self.ctp, name="ctp", daemon=True)] if self.plan.ctp else []
        injector = None
        if self.faults:
            from probe.faults import Injector

            injector = Injector(self.faults, self.target, self.plan.topic, self.rec.add, threading.Event(), self.under_way)
            workers.append(threading.Thread(target=injector.run, name="faults", daemon=True))
        for t in background + workers + ctp:
            t.start()
        for t in workers:
            t.join(max(0.0, self.deadline - time.monotonic()))
            if t.is_alive():
                self.errors.append(f"{t.name} did not finish before the deadline ({_where(t)})")
        self.producers_done.set()
        for t in ctp:  # it drains the input, then stops
            t.join(max(0.0, self.deadline - time.monotonic()) + DRAIN_SECONDS)
            if t.is_alive():
                self.errors.append(f"ctp did not finish before the deadline ({_where(t)})")
        if injector is not None:
            injector.stop.set()
            injector.heal()
            self.after_faults()
        time.sleep(3 * FETCH_INTERVAL)  # one more observer round sees the last markers
        self.stop.set()
        for t in background:
            t.join(DRAIN_SECONDS + 5)
        self.final_pass(READ_UNCOMMITTED)
        self.final_pass(READ_COMMITTED)
        self._open = None  # the open transaction's producer goes only now


def _where(t: threading.Thread) -> str:
    """Where a thread that missed its deadline is now: its innermost calls (file:line function),
    so that a run's error says which client call did not return."""
    import traceback

    frame = sys._current_frames().get(t.ident or -1)
    if frame is None:
        return "its stack is gone"
    calls = traceback.extract_stack(frame)[-3:]
    return "waiting in " + " < ".join(f"{Path(c.filename).name}:{c.lineno} {c.name}" for c in reversed(calls))


def _text(b: bytes | None) -> str | None:
    return None if b is None else b.decode("utf-8", "backslashreplace")


def ctp_end(p: Any, c: Any, rec: Any, group: str, offsets_sent: bool, planned_abort: bool) -> bool:
    """End the consume-transform-produce member's transaction: abort it when the plan says so or
    when its offsets were not sent (committed, its output would be read again with its input),
    commit it otherwise. Unless it committed, its input goes back to the group's committed offsets
    (KIP-98's loop: an aborted transaction's input is consumed again). Without that rewind a commit
    that failed under a coordinator kill left the consumer past its input, and the next transaction
    committed offsets past records whose output had been aborted: the probe's own CTP_LOST, found
    on real Kafka by the three-node fault run. False when the member must stop (fenced, or its
    group's offsets unreadable)."""
    if planned_abort or not offsets_sent:
        p.abort()
        outcome = "aborted"
    else:
        outcome = p.commit()
        if outcome != "ok" and p.fenced:
            return False
    return outcome == "ok" or rewind(c, rec, group)


def rewind(c: Any, rec: Any, group: str) -> bool:
    """Seek the consumer ``c`` to the offsets its group committed (a partition's start where it
    committed none); False, with a note, when the group's offsets cannot be read in REWIND_TRIES
    tries: the member then stops rather than consume past input whose output was not committed."""
    from confluent_kafka import TopicPartition

    error = ""
    for _ in range(REWIND_TRIES):
        try:
            committed = c.committed(c.assignment(), CALL_SECONDS)
        except Exception as e:  # the group coordinator moving or loading: try again
            error = str(e)
            time.sleep(0.5)
            continue
        for tp in committed:
            c.seek(TopicPartition(tp.topic, tp.partition, tp.offset if tp.offset >= 0 else 0))
        return True
    rec.add("note", process="ctp-0", what="ctp-rewind-failed", group=group, error=error)
    return False
