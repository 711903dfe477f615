"""Consume-transform-produce (KIP-447) with the Apache Kafka Java client (kafka-clients 4.x,
probe/java_client.py): a KafkaConsumer in a group and a transactional KafkaProducer in one driver,
the consumer's positions sent to each transaction with ``consumer.groupMetadata()``.

Against ``txconform serve --version TV2`` through the ``txconform_broker`` fixture, which fails the
test unless the session's trace is a behaviour of the spec; then the same loop against Apache Kafka
4.4.0 (TV2), whose outcome must be the same. The loop: committed input on topic ``in`` (two
partitions), then rounds of poll, begin, one output record on ``out`` per input record (key
``in/partition/offset``), ctp_offsets, commit; one round aborts instead and seeks back to the
committed offsets. Every input record must have exactly one committed output, and the group's
committed offsets must be at the end of the input.
"""

from __future__ import annotations

import time
from typing import Any

import pytest
from java_helpers import Lines, missing_java

from trace_check.traces.protocol import Server

pytest.importorskip("confluent_kafka")

pytestmark = [pytest.mark.probe, pytest.mark.tlc]

PARTITIONS = 2
INPUTS = 5  # records per input partition
ABORT_ROUND = 2  # the round that aborts, then seeks back
MAX_ROUNDS = 40
LOOP_SECONDS = 90.0
READ_SECONDS = 20.0



@pytest.fixture
def java(tmp_path: Any) -> Any:
    why = missing_java()
    if why:
        pytest.skip(why)
    from probe.java_client import JavaProducer

    made: list[Any] = []

    def producer(emit: Lines, bootstrap: str, txid: str, instance: int) -> Any:
        p = JavaProducer(emit, bootstrap, txid, instance, f"{txid}-{instance}", str(tmp_path / "clients.log"))
        made.append(p)
        return p

    yield producer
    for p in made:
        p.close()


def _ctp(bootstrap: str, java: Any, topic_in: str, topic_out: str, group: str) -> dict[str, Any]:
    """Input, the consume-transform-produce loop, and what a read_committed reader and the group's
    committed offsets say afterwards."""
    from confluent_kafka import OFFSET_BEGINNING, Consumer, KafkaException, TopicPartition

    emit = Lines()
    source = java(emit, bootstrap, f"{topic_in}-source", 0)
    assert source.init() is None
    assert source.begin()
    for n in range(INPUTS):
        for partition in range(PARTITIONS):
            source.send(topic_in, partition, f"k{partition}", f"input-{partition}-{n}")
    assert source.flush() == 0
    assert source.commit() == "ok"
    inputs = {(s["partition"], s["offset"]) for s in emit.lines if s["type"] == "send" and s["topic"] == topic_in}
    assert len(inputs) == INPUTS * PARTITIONS and all(o is not None for _, o in inputs)

    app = java(emit, bootstrap, f"{topic_in}-app", 0)
    assert app.init() is None
    assert app.subscribe(group, [topic_in], {"max.poll.records": 3}) is None
    done: dict[tuple[int, int], str] = {}  # (partition, offset) of an input -> its output's key, once committed
    rounds: list[tuple[str, int]] = []  # (outcome, records) per transaction
    errors: list[str] = []
    deadline = time.monotonic() + LOOP_SECONDS
    for _ in range(MAX_ROUNDS):
        if len(done) == len(inputs) or time.monotonic() > deadline or errors:
            break
        records, error = app.poll(1000)
        if error:
            errors.append(f"poll: {error}")
            continue
        if not records:
            continue
        assert app.begin()
        for topic, partition, offset, _key, value in records:
            assert topic == topic_in
            app.send(topic_out, partition, f"in/{partition}/{offset}", f"out-of-{value}")
        error = app.ctp_offsets()
        if error:
            errors.append(f"ctp_offsets: {error}")
        if len(rounds) + 1 == ABORT_ROUND:
            rounds.append((app.abort(), len(records)))
            seek = app.seek_committed()
            if seek:
                errors.append(f"seek_committed: {seek}")
            continue
        outcome = app.commit()
        rounds.append((outcome, len(records)))
        if outcome == "ok" and not error:
            for _topic, partition, offset, _key, _value in records:
                done[(partition, offset)] = f"in/{partition}/{offset}"
    assignment, _ = app.assignment()
    positions, _ = app.positions()
    assert app.consumer_close() is None
    app.close()

    out: list[str] = []
    reader = Consumer({"bootstrap.servers": bootstrap, "group.id": f"{group}-reader", "isolation.level": "read_committed", "enable.auto.commit": False})
    try:
        reader.assign([TopicPartition(topic_out, p, OFFSET_BEGINNING) for p in range(PARTITIONS)])
        until = time.monotonic() + READ_SECONDS
        while time.monotonic() < until and len(out) < len(inputs):
            out += [(m.key() or b"").decode() for m in reader.consume(100, 0.5) if m.error() is None]
        time.sleep(0.5)  # anything more (a duplicate) would come now
        out += [(m.key() or b"").decode() for m in reader.consume(100, 0.5) if m.error() is None]
        ends = {p: reader.get_watermark_offsets(TopicPartition(topic_in, p), timeout=10)[1] for p in range(PARTITIONS)}
    finally:
        reader.close()
    looker = Consumer({"bootstrap.servers": bootstrap, "group.id": group, "enable.auto.commit": False})
    committed: Any
    try:
        committed = {tp.partition: tp.offset for tp in looker.committed([TopicPartition(topic_in, p) for p in range(PARTITIONS)], timeout=15)}
    except KafkaException as e:
        committed = f"committed: {e}"
    finally:
        looker.close()
    notes = [ln for ln in emit.lines if ln["type"] == "note" and ln.get("what") in ("ctp-offsets", "seek-committed")]
    return {
        "inputs": sorted(inputs),
        "done": done,
        "rounds": rounds,
        "errors": errors,
        "out": sorted(out),
        "ends": ends,
        "committed": committed,
        "assignment": assignment,
        "positions": positions,
        "notes": notes,
        "expected": sorted(f"in/{p}/{o}" for p, o in inputs),
    }


def _check(r: dict[str, Any]) -> None:
    assert r["errors"] == [], r
    assert [o for o, _ in r["rounds"]][ABORT_ROUND - 1] == "fail", r["rounds"]  # the abort
    assert all(o == "ok" for i, (o, _) in enumerate(r["rounds"]) if i != ABORT_ROUND - 1), r["rounds"]
    assert len(r["done"]) == len(r["inputs"]), r
    assert r["out"] == r["expected"], r  # every input has exactly one committed output, the aborted round's none more
    assert r["committed"] == r["ends"], r  # the group's offsets: at the end of the input
    gens = {n["generation"] for n in r["notes"] if n["what"] == "ctp-offsets"}
    assert gens and all(isinstance(g, int) and g > 0 for g in gens), r["notes"]  # the consumer's generation travelled


# With transaction version 2 the Java client sends no AddOffsetsToTxn
# (TransactionManager.sendOffsetsToTransaction: "In transaction V2, the client will skip sending
# AddOffsetsToTxn before sending txnOffsetCommit"): Kafka 4's group coordinator verifies the
# TxnOffsetCommit with the transaction coordinator, which adds the offsets partition to the
# transaction (AddPartitionsToTxnManager: TxnOffsetCommit v5 is ADD_PARTITION). This test found that
# the spec did not (serve's offsets stayed pending, UNSTABLE_OFFSET_COMMIT for good); the spec's
# group coordinator now does so too (GcTxnOffsetCommit holds the request, TcVerify adds the
# partition, GcVerified writes the offsets), and the loop ends as on Kafka.
@pytest.mark.txconform_serve(version="TV2", partitions=PARTITIONS)
def test_consume_transform_produce_of_the_java_client_is_a_behaviour_of_the_spec(txconform_broker: Server, java: Any) -> None:
    r = _ctp(txconform_broker.bootstrap, java, "in", "out", "ctp-group")
    _check(r)


def test_consume_transform_produce_of_the_java_client_on_real_kafka(txconform_kafka_cluster: Any, java: Any) -> None:
    """The same loop on Apache Kafka 4.4.0 (TV2): what serve should give too."""
    from confluent_kafka.admin import AdminClient, NewTopic

    kafka = txconform_kafka_cluster(version="4.4.0", transaction_version=2)
    suffix = f"{time.monotonic_ns() % 10**9}"
    topic_in, topic_out = f"ctp-in-{suffix}", f"ctp-out-{suffix}"
    admin = AdminClient({"bootstrap.servers": kafka.bootstrap})
    for f in admin.create_topics([NewTopic(t, PARTITIONS, 1) for t in (topic_in, topic_out)]).values():
        f.result(20)
    r = _ctp(kafka.bootstrap, java, topic_in, topic_out, f"ctp-group-{suffix}")
    _check(r)
    assert r["ends"] == {p: INPUTS + 1 for p in range(PARTITIONS)}  # the input's records and its commit marker, as on serve
