"""Races on a real broker with raw requests, each a known Kafka bug: ``txconform probe --target
kafka:VERSION --race NAME``. A race runs bounded trials and says, per trial, what the broker
answered; a trial that shows the bug is a finding.

``kafka-19690`` (apache/kafka KAFKA-19690; fixed by PR #20534, in 4.1 by #20618, first released
in 4.1.1; 4.1.0 has it). A Produce request holds partition A, where the producer's transaction is
already open at epoch e, and partition B, not yet in the transaction. The broker checks A first
(UnifiedLog.maybeStartTransactionVerification: nothing to verify) and appends it only after the
coordinator has answered for B. If the coordinator aborts the transaction meanwhile (its
transaction timeout; ``transaction.abort.timed.out.transaction.cleanup.interval.ms`` is 1 s on the
probe's brokers), A's ABORT marker of epoch e+1 lands first, and the append of A finds no open
transaction: 4.1.0 answers INVALID_TXN_STATE (48), which clients treat as fatal; the fix checks
the stale epoch first and answers INVALID_PRODUCER_EPOCH (47), which they can recover from
(UnifiedLog.analyzeAndValidateProducerState). Each trial: InitProducerId with a 300 ms transaction
timeout, AddPartitionsToTxn for the A partitions, a first Produce to each, then ``lanes``
connections sending {A with the next sequence, B with sequence 0} back to back until A fails. The
requests are kafka-python's protocol classes (TV1 versions: Produce v11, AddPartitionsToTxn v3).
It is a race: on 4.1.0 about 4 trials in 10 hit it with 4 lanes; on 4.1.1 none of 70 did.
"""

from __future__ import annotations

import collections
import threading
import time
from collections.abc import Callable
from typing import Any

import attrs

from probe.wire import Connection, RawRequestError
from trace_check.errors import TxconformError

TOPIC = "txconform-race-19690"
NAMES = {0: "NONE", 47: "INVALID_PRODUCER_EPOCH", 48: "INVALID_TXN_STATE", 90: "PRODUCER_FENCED", 120: "TRANSACTION_ABORTABLE", 51: "CONCURRENT_TRANSACTIONS"}
TRIAL_SECONDS = 10.0


@attrs.frozen
class Race:
    name: str
    ticket: str
    fixed_in: str
    meaning: str


RACES = {
    "kafka-19690": Race(
        "kafka-19690",
        "KAFKA-19690",
        "4.1.1 (4.1 line), PR #20534",
        "an append of a producer whose transaction the coordinator aborted meanwhile got the fatal INVALID_TXN_STATE, not INVALID_PRODUCER_EPOCH",
    )
}


def _name(code: Any) -> str:
    return "none" if code is None else f"{NAMES.get(code, '?')} ({code})"


def _batch(pid: int, epoch: int, seq: int, value: bytes) -> bytes:
    from kafka.record.default_records import DefaultRecordBatchBuilder

    b = DefaultRecordBatchBuilder(
        magic=2, compression_type=0, is_transactional=True, producer_id=pid, producer_epoch=epoch, base_sequence=seq, batch_size=1 << 16
    )
    b.append(0, int(time.time() * 1000), None, value, [])
    return bytes(b.build())


def _produce(c: Connection, txid: str, parts: dict[int, bytes]) -> dict[int, int]:
    from kafka.protocol.producer import ProduceRequest

    P = ProduceRequest.TopicProduceData
    data = [P(name=TOPIC, partition_data=[P.PartitionProduceData(index=i, records=r) for i, r in parts.items()])]
    resp = c.call(ProduceRequest(version=11, transactional_id=txid, acks=-1, timeout_ms=10000, topic_data=data))
    return {p.index: p.error_code for t in resp.responses for p in t.partition_responses}


def _open_transaction(c: Connection, txid: str, lanes: int) -> tuple[int, int]:
    """InitProducerId (300 ms timeout), A partitions added and written once: (producer id, epoch)."""
    from kafka.protocol.metadata.find_coordinator import FindCoordinatorRequest
    from kafka.protocol.producer import AddPartitionsToTxnRequest, InitProducerIdRequest

    err, pid, epoch = -1, -1, -1
    for _ in range(100):
        if c.call(FindCoordinatorRequest(version=3, key=txid, key_type=1)).error_code == 0:
            r = c.call(InitProducerIdRequest(version=5, transactional_id=txid, transaction_timeout_ms=300, producer_id=-1, producer_epoch=-1))
            err, pid, epoch = r.error_code, r.producer_id, r.producer_epoch
            if err == 0:
                break
        time.sleep(0.1)
    if err != 0:
        raise RawRequestError(f"InitProducerId for {txid}: {_name(err)}")
    T = AddPartitionsToTxnRequest.AddPartitionsToTxnTopic
    r = c.call(
        AddPartitionsToTxnRequest(
            version=3,
            v3_and_below_transactional_id=txid,
            v3_and_below_producer_id=pid,
            v3_and_below_producer_epoch=epoch,
            v3_and_below_topics=[T(name=TOPIC, partitions=list(range(lanes)))],
        )
    )
    errs = [p.partition_error_code for t in r.results_by_topic_v3_and_below for p in t.results_by_partition]
    if any(errs):
        raise RawRequestError(f"AddPartitionsToTxn for {txid}: {[_name(e) for e in errs]}")
    first = _produce(c, txid, {a: _batch(pid, epoch, 0, b"first") for a in range(lanes)})
    if any(first.values()):
        raise RawRequestError(f"the first Produce of {txid}: { {p: _name(e) for p, e in first.items()} }")
    return pid, epoch


def trial(host: str, port: int, n: int, lanes: int) -> dict[str, Any]:
    """One trial of kafka-19690: what the broker answered for A in each lane."""
    txid = f"txconform-race-19690-{n}-{time.monotonic_ns()}"
    c = Connection(host, port)
    try:
        pid, epoch = _open_transaction(c, txid, lanes)
        deadline = time.monotonic() + TRIAL_SECONDS
        errors: list[Any] = [None] * lanes
        requests = [0] * lanes

        def spray(j: int) -> None:
            cc = c if j == 0 else Connection(host, port)
            try:
                seq = 1
                while time.monotonic() < deadline and requests[j] < 10_000:
                    errs = _produce(cc, txid, {j: _batch(pid, epoch, seq, b"a%d" % seq), lanes + j: _batch(pid, epoch, 0, b"b")})
                    requests[j] += 1
                    if errs.get(j) == 0:
                        seq += 1
                        continue
                    errors[j] = errs.get(j)
                    break
            except RawRequestError as e:
                errors[j] = str(e)
            finally:
                if cc is not c:
                    cc.close()

        threads = [threading.Thread(target=spray, args=(j,), daemon=True) for j in range(lanes)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(TRIAL_SECONDS + 15)
    finally:
        c.close()
    outcome = "bug" if 48 in errors else ("fenced" if all(e == 47 for e in errors) else "other")
    return {"trial": n, "txid": txid, "producer_id": pid, "epoch": epoch, "outcome": outcome, "a_errors": [_name(e) for e in errors], "requests": sum(requests)}


def run(name: str, bootstrap: str, trials: int, lanes: int, emit: Callable[[dict[str, Any]], None], stop_on_bug: bool = False) -> collections.Counter[str]:
    """``trials`` trials of race ``name`` against ``bootstrap`` (one node), or fewer with
    ``stop_on_bug`` once one shows the bug; each trial's line to ``emit``; the count of each outcome."""
    if name not in RACES:
        raise TxconformError(f"--race {name}: no such race; the races are {', '.join(RACES)}")
    from confluent_kafka.admin import AdminClient
    from confluent_kafka.cimpl import NewTopic

    admin = AdminClient({"bootstrap.servers": bootstrap, "log_level": 0})
    futures = admin.create_topics([NewTopic(TOPIC, 2 * lanes, 1)])
    try:
        futures[TOPIC].result(30)
    except Exception as e:  # made by an earlier race on the same broker
        if "TOPIC_ALREADY_EXISTS" not in str(e):
            raise TxconformError(f"{bootstrap}: cannot create {TOPIC}: {e}") from None
    time.sleep(1.0)  # the partitions' leaders settle
    host, port = bootstrap.split(",")[0].split(":")
    counts: collections.Counter[str] = collections.Counter()
    for n in range(trials):
        line = trial(host, int(port), n, lanes)
        counts[line["outcome"]] += 1
        emit(line)
        if stop_on_bug and line["outcome"] == "bug":
            break
    return counts
