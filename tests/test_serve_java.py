"""The Apache Kafka Java client (kafka-clients 4.x, probe/java_client.py) against ``txconform serve
--version TV2``: the first client of transaction version 2 that the tool did not write.

Each test's session goes through the ``txconform_broker`` fixture (trace_check/testing.py), which
writes the session's trace and fails the test unless ``txconform check`` accepts it.
"""

from __future__ import annotations

import time
from typing import Any

import pytest
from java_helpers import Lines, missing_java

from trace_check.traces.protocol import Server

pytestmark = [pytest.mark.probe, pytest.mark.tlc]



@pytest.fixture
def java(tmp_path: Any) -> Any:
    why = missing_java()
    if why:
        pytest.skip(why)
    from probe.java_client import JavaProducer

    made: list[Any] = []

    def producer(emit: Lines, bootstrap: str, instance: int) -> Any:
        p = JavaProducer(emit, bootstrap, "java-txn", instance, f"java-{instance}", str(tmp_path / "clients.log"))
        made.append(p)
        return p

    yield producer
    for p in made:
        p.close()


@pytest.mark.txconform_serve(version="TV2", partitions=2)
def test_commits_aborts_and_a_zombie_of_the_java_client_are_a_behaviour_of_the_spec(txconform_broker: Server, java: Any) -> None:
    emit = Lines()
    old = java(emit, txconform_broker.bootstrap, 0)
    assert old.init() is None
    assert old.begin()
    old.send("t", 0, "k", "committed-0")
    old.send("t", 1, "k", "committed-1")
    old.flush()
    assert old.commit() == "ok"
    assert old.begin()
    old.send("t", 0, "k", "aborted")
    old.flush()
    assert old.abort() == "fail"
    # the zombie: a second instance initialises while the first has a transaction open
    assert old.begin()
    old.send("t", 1, "k", "zombie")
    old.flush()
    new = java(emit, txconform_broker.bootstrap, 1)
    assert new.init() is None
    assert old.commit() == "fail" and old.fenced
    assert new.begin()
    new.send("t", 0, "k", "successor")
    new.flush()
    assert new.commit() == "ok"
    assert emit.ends("java-0") == ["ok", "fail", "fail"] and emit.ends("java-1") == ["ok"]
    sends = {ln["value"]: ln for ln in emit.lines if ln["type"] == "send"}
    assert all(s["offset"] is not None for s in sends.values()), sends


def _seeded_workload(seed: int, bootstrap: str, java: Any, topic: str) -> tuple[Lines, list[str]]:
    """The same seeded transactions with the Java client on any broker: commits and aborts over two
    partitions, then a zombie; what the client was told, and what a read_committed consumer reads."""
    import random

    from confluent_kafka import Consumer, TopicPartition

    rng = random.Random(seed)
    emit = Lines()
    p = java(emit, bootstrap, 0)
    assert p.init() is None
    for n in range(6):
        assert p.begin()
        for partition in sorted(rng.sample([0, 1], rng.randint(1, 2))):
            p.send(topic, partition, f"k{partition}", f"v{n}-{partition}")
        p.flush()
        p.commit() if rng.random() < 0.6 else p.abort()
    assert p.begin()
    p.send(topic, 0, "k0", "zombie")
    p.flush()
    q = java(emit, bootstrap, 1)
    assert q.init() is None
    p.commit()
    c = Consumer({"bootstrap.servers": bootstrap, "group.id": f"read-{seed}", "isolation.level": "read_committed", "auto.offset.reset": "earliest"})
    try:
        c.assign([TopicPartition(topic, k, 0) for k in (0, 1)])
        values: list[str] = []
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            msgs = [m for m in c.consume(100, 0.5) if m.error() is None]
            values += [m.value().decode() for m in msgs]
            if not msgs and values:
                break
    finally:
        c.close()
    return emit, sorted(values)


@pytest.mark.txconform_serve(version="TV2", partitions=2)
def test_one_seeded_workload_tells_the_java_client_the_same_on_real_kafka_and_on_serve(
    txconform_broker: Server, txconform_kafka_cluster: Any, java: Any
) -> None:
    """The differential test: what the client was told (each transaction's outcome, each send's
    success) and what read_committed reads are the same on Apache Kafka 4.4.0 (TV2) and on the
    reference broker (TV2); the serve session's trace is then checked by the fixture."""
    from confluent_kafka.admin import AdminClient, NewTopic

    kafka = txconform_kafka_cluster(version="4.4.0", transaction_version=2)
    admin = AdminClient({"bootstrap.servers": kafka.bootstrap})
    admin.create_topics([NewTopic("differential", 2, 1)])["differential"].result(20)
    on_kafka, read_kafka = _seeded_workload(31, kafka.bootstrap, java, "differential")
    on_serve, read_serve = _seeded_workload(31, txconform_broker.bootstrap, java, "differential")

    def told(lines: Lines) -> list[tuple[str, str, Any]]:
        steps = [ln for ln in lines.lines if ln["type"] in ("txn", "send")]
        return [(ln["process"], ln["txn"], ln["outcome"] if ln["type"] == "txn" else ln["offset"] is not None) for ln in steps]

    assert told(on_kafka) == told(on_serve)
    assert read_kafka == read_serve and "zombie" not in read_kafka
    assert {ln["outcome"] for ln in on_kafka.lines if ln["type"] == "txn"} == {"ok", "fail"}
