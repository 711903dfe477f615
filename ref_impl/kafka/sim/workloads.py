"""Workloads: what the applications do, written against the Producer/Consumer API.

``transfer``: each transactional.id runs transactions that write to every output partition and
commit (or, with ``aborts``, sometimes abort). ``ctp``: consume-transform-produce: members of a
consumer group (one per transactional.id, as KIP-447 allows) take turns owning the input
partition, and each transaction commits the input offset with the output.
An instance k+1 of a transactional.id starts when instance k hangs (it is presumed dead).

An application stops at its first error unless it is ``resilient``: then it handles errors as
KafkaProducer's javadoc tells applications to (KafkaProducer.java, the class comment's
transactional example): a transaction the client aborted after an abortable error
(``TransactionAbortedError``) is given up and the next one begun; a fatal error (fenced,
INVALID_TXN_STATE) still stops it. A resilient run goes on until its transactions are done, so
its traces can be as long as asked (``transfer:ids=30,txns=20000,aborts=true`` with all faults,
seed 1, ends by itself at 128,577 events: every instance has stopped at an error or not started).
"""

from __future__ import annotations

import random
from collections.abc import Generator
from typing import Any

import attrs

from ref_impl.kafka.api import Consumer, Future, KafkaError, Producer, TransactionAbortedError
from ref_impl.kafka.cluster import Cluster
from ref_impl.kafka.constants import VERSIONS
from ref_impl.sim import settings
from ref_impl.sim.settings import SettingsError


@attrs.frozen
class Workload:
    kind: str = "transfer"  # transfer or ctp
    ids: int = 1
    instances: int = 2
    partitions: int = 2
    txns: int = 2
    records: int = 2  # records per partition per transaction
    aborts: bool = False
    input: int = 2  # ctp: input records
    version: str = "TV2"
    # The bound on producer epochs (Short.MaxValue); a small one makes producer ids rotate.
    max_epoch: int = 32767
    # Batches per partition per transaction, and how many may be in flight per partition
    # (max.in.flight.requests.per.connection, at most 5 with idempotence).
    batches: int = 1
    in_flight: int = 1
    # KIP-360 clients: a TV1 client bumps its epoch after aborting on an error (one instance only).
    bumps: bool = False
    # Applications go on after a transaction the client aborted on an abortable error.
    resilient: bool = False

    @classmethod
    def parse(cls, text: str) -> Workload:
        """``transfer`` or ``ctp``, then optional ``:key=value,...`` (ids, instances, partitions,
        txns, records, aborts, input, version, max_epoch, batches, in_flight, bumps, resilient)."""
        kind, _, rest = text.strip().partition(":")
        if kind not in ("transfer", "ctp"):
            raise SettingsError(f"unknown workload {kind!r}; use transfer or ctp, e.g. transfer:txns=3,version=TV1")
        fields: dict[str, Any] = {"kind": kind}
        for key, value in settings.pairs(rest).items():
            if key == "version":
                fields[key] = settings.choice(key, value, VERSIONS, "TV1, TV1V (TV1 with verification) or TV2")
            elif key in ("aborts", "bumps", "resilient"):
                fields[key] = settings.flag(key, value)
            elif key == "max_epoch":
                fields[key] = settings.whole(key, value, 2, 32767, "Short.MaxValue")
            elif key == "in_flight":
                fields[key] = settings.whole(key, value, 1, 5, "max.in.flight.requests.per.connection with idempotence")
            elif key in ("ids", "instances", "partitions", "txns", "records", "input", "batches"):
                fields[key] = settings.whole(key, value, 0 if key == "input" else 1)
            else:
                raise settings.unknown("workload setting", key, ("ids", "instances", "partitions", "txns", "records", "aborts", "input",
                                                                 "version", "max_epoch", "batches", "in_flight", "bumps", "resilient"))
        w = cls(**fields)
        if w.bumps and w.instances != 1:
            raise SettingsError("bumps: KIP-360 clients are checked with one instance per transactional.id; add instances=1")
        if w.kind == "transfer" and w.batches > w.records:
            raise SettingsError(f"batches={w.batches}: a batch needs a record; use records={w.batches} or more")
        return w

    def describe(self) -> str:
        d = attrs.asdict(self)
        kind: str = d.pop("kind")
        default = attrs.asdict(Workload(kind=kind))
        return kind + "".join(
            (":" if n == 0 else ",") + f"{k}={v}" for n, (k, v) in enumerate((k, v) for k, v in d.items() if v != default[k])
        ).replace("=True", "=true").replace("=False", "=false")

    @property
    def txn_ids(self) -> tuple[str, ...]:
        return tuple(f"t{n}" for n in range(1, self.ids + 1))


App = Generator[Future, None, None]


def transfer_app(cluster: Cluster, producer: Producer, w: Workload, rng: random.Random) -> App:
    try:
        yield producer.init_transactions()
        for n in range(1, w.txns + 1):
            producer.begin_transaction()
            for p in sorted(cluster.plog):
                for r in range(w.records):
                    producer.send(p, f"{producer.inst[0]}/{producer.inst[1]}/{n}/{p}/{r}")
            abort = w.aborts and rng.random() < 0.25
            yield from _end(producer, abort, w.resilient)
    except KafkaError:
        return  # fenced, or the transaction failed: this instance stops, as an application would


def _end(producer: Producer, abort: bool, resilient: bool) -> App:
    """Commit or abort the transaction; a resilient application goes on after a transaction the
    client aborted on its own (the caller's loop begins the next one)."""
    try:
        yield producer.abort_transaction() if abort else producer.commit_transaction()
    except TransactionAbortedError:
        if not resilient:
            raise


def ctp_app(cluster: Cluster, producer: Producer, w: Workload, rng: random.Random) -> App:
    try:
        yield producer.init_transactions()
        consumer = Consumer(cluster, member=producer.inst)
        yield consumer.subscribe()
        while True:
            pos: int | None = None
            while pos is None:  # None: UNSTABLE_OFFSET_COMMIT, ask again
                pos = yield consumer.committed()
            if pos >= w.input:
                consumer.input_done()
                return
            producer.begin_transaction()
            for p in sorted(cluster.plog):
                if w.batches == 1:
                    producer.send(p, f"out({pos})/{p}")
                else:  # a record for each batch
                    for r in range(w.batches):
                        producer.send(p, f"out({pos})/{p}/{r}")
            producer.send_offsets_to_transaction(pos + 1)
            abort = w.aborts and rng.random() < 0.25
            yield from _end(producer, abort, w.resilient)
    except KafkaError:
        return


def make_app(cluster: Cluster, producer: Producer, w: Workload, rng: random.Random) -> App:
    return (ctp_app if w.kind == "ctp" else transfer_app)(cluster, producer, w, rng)
