"""The Apache Kafka Java client as a probe client (probe/java_client.py, ClientDriver.java).

Without a broker: the driver answers one JSON line per command, errors for bad ones, and prints
nothing else. With one real Kafka 4.4.0 broker for the module (mark ``probe``; skipped without
Java, javac and Maven): committed and aborted transactions read back with read_committed; a
zombie fenced by a newer instance; a producer process SIGKILLed mid-transaction and the next
instance recovering its transactional id; every driver process gone after close.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("confluent_kafka")

from probe.java_client import JavaProducer, driver_command
from probe.targets import TargetError
from probe.testing import alive

pytestmark = pytest.mark.probe

READ_SECONDS = 20.0
SEND_FIELDS = {"type", "process", "txn", "op", "topic", "partition", "key", "value", "offset", "error"}


def _missing() -> str | None:
    """Why the Java client cannot run here (no java, javac or mvn), or None."""
    from probe.java_client import _javac
    from probe.kafka import environment_problem

    why = environment_problem()
    if why:
        return why
    try:
        _javac()
    except TargetError as e:
        return str(e)
    return None



class Lines:
    """What a producer emits, as the probe's record would have it."""

    def __init__(self) -> None:
        self.lines: list[dict[str, Any]] = []

    def __call__(self, kind: str, **fields: Any) -> None:
        json.dumps(fields)  # every line is JSON
        self.lines.append({"type": kind, **fields})

    def of(self, kind: str, process: str | None = None) -> list[dict[str, Any]]:
        return [ln for ln in self.lines if ln["type"] == kind and (process is None or ln.get("process") == process)]


@pytest.fixture(scope="module")
def java_ready() -> None:
    why = _missing()
    if why:
        pytest.skip(why)


@pytest.fixture(scope="module")
def kafka(java_ready: None, txconform_kafka_cluster: Any) -> Any:
    """A KRaft node of Kafka 4.4.0 (transaction version 2), the session's (probe.testing: shared with
    tests/test_probe_kafka.py's control, stopped by its pid when the session ends)."""
    return txconform_kafka_cluster(version="4.4.0", transaction_version=2)


@pytest.fixture
def log(tmp_path: Path) -> str:
    return str(tmp_path / "clients.log")


def _topic(bootstrap: str, name: str, partitions: int = 2) -> str:
    from confluent_kafka.admin import AdminClient, NewTopic

    topic = f"{name}-{os.getpid()}-{time.monotonic_ns() % 10**9}"
    admin = AdminClient({"bootstrap.servers": bootstrap, "log_level": 0})
    admin.create_topics([NewTopic(topic, num_partitions=partitions, replication_factor=1)], operation_timeout=10)[topic].result(15)
    return topic


def _committed(bootstrap: str, topic: str, partitions: int, last: set[str]) -> list[str]:
    """The values read_committed returns from ``topic`` until every value of ``last`` is seen (bounded)."""
    from confluent_kafka import OFFSET_BEGINNING, Consumer, TopicPartition

    consumer = Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": f"read-{topic}",
            "isolation.level": "read_committed",
            "enable.auto.commit": False,
            "log_level": 0,
        }
    )
    values: list[str] = []
    try:
        consumer.assign([TopicPartition(topic, p, OFFSET_BEGINNING) for p in range(partitions)])
        deadline = time.monotonic() + READ_SECONDS
        while time.monotonic() < deadline and not last <= set(values):
            msg = consumer.poll(0.5)
            if msg is not None and msg.error() is None:
                values.append(msg.value().decode())
    finally:
        consumer.close()
    return values


# --- without a broker ---------------------------------------------------------------------------


def test_the_driver_answers_every_line_with_one_json_line(java_ready: None, tmp_path: Path) -> None:
    log = tmp_path / "driver.log"
    commands = [
        '{"op":"version","seq":1}',
        "not json",
        '{"op":"no-such-op"}',
        "[1,2]",
        '{"op":"init"}',
        '{"op":"producer","bootstrap":"127.0.0.1:9","txid":"t\\u00e9\\"x","config":{"client.id":"driver-test"}}',
        '{"op":"producer","bootstrap":"127.0.0.1:9","txid":"again"}',
        '{"op":"send","topic":"t","partition":0,"id":"not a number"}',
        '{"op":"flush","seq":"s"}',
        '{"op":"offsets","group":"g","offsets":[["t",0]]}',
        '{"op":"close"}',
        '{"op":"version"}',  # after close: never read
    ]
    out = subprocess.run(driver_command(log_path=str(log)), input="\n".join(commands) + "\n", capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    answers = [json.loads(line) for line in out.stdout.splitlines()]
    assert len(answers) == len(commands) - 1
    version, garbage, unknown, array, no_producer, created, twice, bad_id, flushed, bad_offsets, closed = answers
    assert version["ok"] and version["seq"] == 1 and version["kafka_clients"].startswith("4.")
    assert not garbage["ok"] and "malformed JSON" in garbage["error"]
    assert not unknown["ok"] and "unknown op" in unknown["error"]
    assert not array["ok"] and "JSON object" in array["error"]
    assert not no_producer["ok"] and "no producer" in no_producer["error"]
    assert not bad_id["ok"] and '"id" must be an integer' in bad_id["error"]
    assert created == {"ok": True}
    assert not twice["ok"] and "exists already" in twice["error"]
    assert flushed == {"seq": "s", "ok": True, "reports": []}
    assert not bad_offsets["ok"] and "[topic, partition, offset]" in bad_offsets["error"]
    assert closed == {"ok": True}
    assert "ProducerConfig values" in log.read_text()  # the client's log went to the file, not stdout


# --- with a broker ------------------------------------------------------------------------------


def test_committed_and_aborted_transactions(kafka: Any, log: str) -> None:
    topic = _topic(kafka.bootstrap, "java-commit")
    lines = Lines()
    with JavaProducer(lines, kafka.bootstrap, f"{topic}-tx", 0, "java-0", log) as p:
        assert p.init() is None
        assert p.begin()
        p.send(topic, 0, "k0", "committed-0")
        p.send(topic, 1, "k1", "committed-1")
        assert p.commit() == "ok"
        assert p.begin()
        p.send(topic, 0, "k0", "aborted-0")
        p.send(topic, 1, "k1", "aborted-1")
        assert p.flush() == 0  # written, then aborted
        assert p.abort() == "fail"
        bad = p.driver.call({"op": "no-such-op"}, 10)
        assert not bad["ok"] and "unknown op" in bad["error"]  # an error answer; the driver goes on
        assert p.begin()
        p.send(topic, 0, "k0", "last-0")
        p.send(topic, 1, "k1", "last-1")
        assert p.offsets(f"{topic}-group", [(topic, 0, 1)]) is None
        assert p.commit() == "ok"
        assert not p.fenced and p.n == 3
    sends = lines.of("send")
    assert [s["value"] for s in sends] == ["committed-0", "committed-1", "aborted-0", "aborted-1", "last-0", "last-1"]
    assert all(set(s) == SEND_FIELDS and s["error"] is None and isinstance(s["offset"], int) for s in sends), sends
    assert [s["txn"] for s in sends[:2]] == [f"{topic}-tx/0/1"] * 2
    ends = lines.of("txn")
    assert [(t["outcome"], t["decided"], t["error"]) for t in ends] == [("ok", "commit", None), ("fail", "abort", None), ("ok", "commit", None)]
    assert lines.lines[0] == {"type": "note", "process": "java-0", "what": "init", "txid": f"{topic}-tx", "instance": 0, "client": "java"}
    # every send line comes before its transaction's end
    order = [(ln["type"], ln.get("op")) for ln in lines.lines if ln["type"] in ("send", "txn")]
    assert order == [("send", 1), ("send", 1), ("txn", 1), ("send", 2), ("send", 2), ("txn", 2), ("send", 3), ("send", 3), ("txn", 3)]
    values = _committed(kafka.bootstrap, topic, 2, {"last-0", "last-1"})
    assert sorted(values) == ["committed-0", "committed-1", "last-0", "last-1"]


def test_a_zombie_is_fenced_and_its_process_is_gone_after_close(kafka: Any, log: str) -> None:
    topic = _topic(kafka.bootstrap, "java-zombie")
    txid = f"{topic}-tx"
    lines = Lines()
    old = JavaProducer(lines, kafka.bootstrap, txid, 0, "zombie-0", log)
    try:
        new = JavaProducer(lines, kafka.bootstrap, txid, 1, "zombie-1", log)
        try:
            assert old.init() is None and old.begin()
            old.send(topic, 0, "k0", "zombie-before")
            assert old.flush() == 0
            assert new.init() is None  # bumps the epoch and aborts the zombie's transaction
            old.send(topic, 0, "k0", "zombie-after")
            old.flush()
            assert old.commit() == "fail"
            assert old.fenced
            assert new.begin()
            new.send(topic, 1, "k1", "new")
            assert new.commit() == "ok" and not new.fenced
        finally:
            new.close()
    finally:
        old.close()
    for p in (old, new):
        assert not alive(p.pid)
        with pytest.raises(ProcessLookupError):
            os.kill(p.pid, 0)
    zombie_end = lines.of("txn", "zombie-0")[-1]
    assert zombie_end["outcome"] == "fail" and zombie_end["decided"] == "commit"
    assert "InvalidProducerEpochException" in zombie_end["error"] or "ProducerFencedException" in zombie_end["error"], zombie_end
    after = [s for s in lines.of("send", "zombie-0") if s["value"] == "zombie-after"]
    assert len(after) == 1 and after[0]["offset"] is None and after[0]["error"], after  # the zombie's produce was refused
    values = _committed(kafka.bootstrap, topic, 2, {"new"})
    assert values == ["new"]
    old.close()  # idempotent


def test_sigkill_mid_transaction_then_a_new_instance_recovers(kafka: Any, log: str) -> None:
    topic = _topic(kafka.bootstrap, "java-kill", partitions=1)
    txid = f"{topic}-tx"
    lines = Lines()
    with JavaProducer(lines, kafka.bootstrap, txid, 0, "killed-0", log) as killed:
        assert killed.init() is None and killed.begin()
        killed.send(topic, 0, "k0", "killed-open")
        assert killed.flush() == 0
        os.kill(killed.pid, signal.SIGKILL)
        t0 = time.monotonic()
        killed.send(topic, 0, "k0", "after-kill")
        assert killed.commit() == "info"  # the process is gone: the outcome is unknown, and no hang
        assert time.monotonic() - t0 < 10
    assert not alive(killed.pid)
    dead_end = lines.of("txn", "killed-0")[-1]
    assert "java client driver exited" in dead_end["error"]
    assert [s["error"] is None for s in lines.of("send", "killed-0")] == [True, False]
    with JavaProducer(lines, kafka.bootstrap, txid, 1, "killed-1", log) as recovery:
        assert recovery.init() is None  # aborts the killed instance's open transaction
        assert recovery.begin()
        recovery.send(topic, 0, "k0", "recovered")
        assert recovery.commit() == "ok"
    values = _committed(kafka.bootstrap, topic, 1, {"recovered"})
    assert values == ["recovered"]
