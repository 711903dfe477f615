"""txconform serve with real clients: librdkafka (confluent-kafka) and kafka-python run
transactions against the reference broker, and every session's trace is checked against the spec
(the txconform_broker fixture fails a test whose trace is rejected).

What the clients must see is what Apache Kafka's TransactionsTest and librdkafka's transaction
tests expect: read_committed offsets keep the gaps that markers and aborted data leave, an
undecided transaction holds back later committed data, a zombie's commit fails, offsets sent in an
aborted transaction are never committed.
"""

from __future__ import annotations

import os
import socket
import struct
import threading
import time
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("confluent_kafka")
pytest.importorskip("kafka")

from confluent_kafka import Consumer, KafkaException, Producer, TopicPartition

from ref_impl.kafka.serve.run import Options, start
from trace_check.testing import txconform_check

pytestmark = pytest.mark.probe

TIMEOUT = 20.0  # seconds any client call may take


def producer(bootstrap: str, txn_id: str, **extra: Any) -> Producer:
    conf = {"bootstrap.servers": bootstrap, "transactional.id": txn_id, "linger.ms": 5,
            "socket.timeout.ms": 5000, "transaction.timeout.ms": 30000, "message.timeout.ms": 15000}
    conf.update(extra)
    return Producer(conf)


def consumer(bootstrap: str, isolation: str = "read_committed", group: str | None = None) -> Consumer:
    return Consumer({"bootstrap.servers": bootstrap, "group.id": group or f"reader-{isolation}-{time.monotonic_ns()}",
                     "isolation.level": isolation, "auto.offset.reset": "earliest", "enable.auto.commit": False,
                     "fetch.wait.max.ms": 100})


def read(c: Consumer, topic: str, partition: int, want: int, seconds: float = 10.0) -> list[tuple[int, bytes]]:
    """What consumer c is given from topic/partition (assigned, from the start), until it has
    ``want`` records or ``seconds`` passed."""
    c.assign([TopicPartition(topic, partition, 0)])
    got: list[tuple[int, bytes]] = []
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline and len(got) < want:
        m = c.poll(0.2)
        if m is None or m.error():
            continue
        got.append((m.offset(), m.value()))
    return got


def test_librdkafka_commits_and_aborts_and_a_read_committed_consumer_skips_the_aborted(txconform_broker: Any) -> None:
    b = txconform_broker.bootstrap
    p = producer(b, "app")
    p.init_transactions(TIMEOUT)
    for k, commit in enumerate((True, False, True)):
        p.begin_transaction()
        for i in range(3):
            p.produce("out", value=f"{k}-{i}".encode(), partition=0)
        p.flush(TIMEOUT)  # sent, so the abort has data to abort
        (p.commit_transaction if commit else p.abort_transaction)(TIMEOUT)
    committed = consumer(b)
    got = read(committed, "out", 0, 6)
    committed.close()
    assert [v for _, v in got] == [b"0-0", b"0-1", b"0-2", b"2-0", b"2-1", b"2-2"]
    # offsets: 3 records, the COMMIT marker, 3 aborted records, the ABORT marker, then the last transaction
    assert [o for o, _ in got] == [0, 1, 2, 8, 9, 10]
    everything = consumer(b, "read_uncommitted")
    got = read(everything, "out", 0, 9)
    everything.close()
    assert len(got) == 9 and [o for o, _ in got][3:6] == [4, 5, 6]
    events = txconform_broker.broker.events
    assert sum(1 for e in events if e["action"] == "LeaderMarker" and e["result"] == "NONE") == 3


def test_an_undecided_transaction_holds_back_later_committed_data(txconform_broker: Any) -> None:
    b = txconform_broker.bootstrap
    slow, fast = producer(b, "slow"), producer(b, "fast")
    slow.init_transactions(TIMEOUT)
    fast.init_transactions(TIMEOUT)
    slow.begin_transaction()
    slow.produce("held", value=b"undecided", partition=0)
    slow.flush(TIMEOUT)
    fast.begin_transaction()
    fast.produce("held", value=b"committed", partition=0)
    fast.commit_transaction(TIMEOUT)
    c = consumer(b)
    assert read(c, "held", 0, 1, seconds=2.0) == []  # the LSO stops at the undecided batch
    slow.commit_transaction(TIMEOUT)
    assert [v for _, v in read(c, "held", 0, 2)] == [b"undecided", b"committed"]
    c.close()


def test_a_zombie_is_fenced_by_its_successor_and_its_records_are_aborted(txconform_broker: Any) -> None:
    b = txconform_broker.bootstrap
    zombie = producer(b, "worker")
    zombie.init_transactions(TIMEOUT)
    zombie.begin_transaction()
    zombie.produce("fenced", value=b"zombie", partition=0)
    zombie.flush(TIMEOUT)
    successor = producer(b, "worker")
    successor.init_transactions(TIMEOUT)  # fences the zombie: its open transaction is aborted
    with pytest.raises(KafkaException) as e:
        zombie.commit_transaction(TIMEOUT)
    assert e.value.args[0].fatal() or "fenced" in str(e.value).lower()
    successor.begin_transaction()
    successor.produce("fenced", value=b"successor", partition=0)
    successor.commit_transaction(TIMEOUT)
    c = consumer(b)
    assert [v for _, v in read(c, "fenced", 0, 1)] == [b"successor"]
    c.close()
    aborts = [e for e in txconform_broker.broker.events if e["action"] == "TcInitProducerId"]
    assert len(aborts) >= 2


def test_consume_transform_produce_commits_offsets_only_with_the_transaction(txconform_broker: Any) -> None:
    b = txconform_broker.bootstrap
    feed = producer(b, "feed")
    feed.init_transactions(TIMEOUT)
    feed.begin_transaction()
    for i in range(4):
        feed.produce("in", value=f"in-{i}".encode(), partition=0)
    feed.commit_transaction(TIMEOUT)
    app = Consumer({"bootstrap.servers": b, "group.id": "ctp", "isolation.level": "read_committed",
                    "auto.offset.reset": "earliest", "enable.auto.commit": False, "fetch.wait.max.ms": 100})
    app.subscribe(["in"])
    p = producer(b, "ctp-app")
    p.init_transactions(TIMEOUT)
    seen: list[Any] = []
    deadline = time.monotonic() + TIMEOUT
    while len(seen) < 4 and time.monotonic() < deadline:
        m = app.poll(0.2)
        if m is not None and not m.error():
            seen.append(m)
    assert len(seen) == 4
    # the first two records: processed and aborted; the offsets sent with them are not committed
    p.begin_transaction()
    p.produce("out", value=b"aborted", partition=0)
    p.send_offsets_to_transaction([TopicPartition("in", 0, seen[1].offset() + 1)], app.consumer_group_metadata(), TIMEOUT)
    p.abort_transaction(TIMEOUT)
    assert app.committed([TopicPartition("in", 0)], TIMEOUT)[0].offset < 0
    p.begin_transaction()
    p.produce("out", value=b"committed", partition=0)
    p.send_offsets_to_transaction([TopicPartition("in", 0, seen[3].offset() + 1)], app.consumer_group_metadata(), TIMEOUT)
    p.commit_transaction(TIMEOUT)
    assert app.committed([TopicPartition("in", 0)], TIMEOUT)[0].offset == seen[3].offset() + 1
    app.close()
    events = txconform_broker.broker.events
    # TV1V: each transaction's TxnOffsetCommit is held while the coordinator checks that its
    # AddOffsetsToTxn put the offsets partition in the transaction, then written (GcVerified)
    assert [e["result"] for e in events if e["action"] == "GcTxnOffsetCommit"] == [None, None]
    assert [e["result"] for e in events if e["action"] == "GcVerified"] == ["NONE", "NONE"]


def test_kafka_python_transactions_are_accepted(txconform_broker: Any) -> None:
    from kafka import KafkaConsumer, KafkaProducer

    p = KafkaProducer(bootstrap_servers=txconform_broker.bootstrap, transactional_id="kp", request_timeout_ms=10000)
    try:
        p.init_transactions()
        for commit in (True, False, True):
            p.begin_transaction()
            for i in range(2):
                p.send("kp-out", value=f"{commit}-{i}".encode(), partition=0)
            p.flush(timeout=TIMEOUT)
            (p.commit_transaction if commit else p.abort_transaction)()
    finally:
        p.close(timeout=5)
    c = KafkaConsumer("kp-out", bootstrap_servers=txconform_broker.bootstrap, isolation_level="read_committed",
                      auto_offset_reset="earliest", consumer_timeout_ms=3000, group_id=None)
    try:
        values = [m.value for m in c]
    finally:
        c.close()
    assert values == [b"True-0", b"True-1", b"True-0", b"True-1"]


@pytest.mark.txconform_serve(bugs=("lso_inclusive",), check=False)
def test_the_inclusive_lso_bug_shows_a_consumer_uncommitted_data_and_the_trace_is_rejected(txconform_broker: Any) -> None:
    b = txconform_broker.bootstrap
    p = producer(b, "open")
    p.init_transactions(TIMEOUT)
    p.begin_transaction()
    p.produce("lso", value=b"not committed", partition=0)
    p.flush(TIMEOUT)
    c = consumer(b)
    got = read(c, "lso", 0, 1, seconds=3.0)
    c.close()
    assert [v for _, v in got] == [b"not committed"]  # what a read_committed consumer must never see
    p.abort_transaction(TIMEOUT)
    path = txconform_broker.stop()
    v = txconform_check(path)
    assert not v.ok
    assert v.event is not None and v.event["action"] == "Fetch"


@pytest.mark.txconform_serve(faults="drop@EndTxn:1,failover@EndTxn:2,restart@Produce:3")
def test_faults_a_lost_answer_a_failover_and_a_leader_restart(txconform_broker: Any) -> None:
    b = txconform_broker.bootstrap
    p = producer(b, "faulty", **{"retry.backoff.ms": 50})
    p.init_transactions(TIMEOUT)
    for k in range(3):
        p.begin_transaction()
        p.produce("f", value=f"{k}".encode(), partition=0)
        p.commit_transaction(TIMEOUT)
    c = consumer(b)
    assert [v for _, v in read(c, "f", 0, 3)] == [b"0", b"1", b"2"]
    c.close()
    actions = [e["action"] for e in txconform_broker.broker.events]
    assert {"Drop", "Failover", "LeaderRestart"} <= set(actions)


@pytest.mark.txconform_serve(partitions=2)
def test_twenty_concurrent_transactional_producers(txconform_broker: Any) -> None:
    b = txconform_broker.bootstrap
    errors: list[BaseException] = []

    def run(n: int) -> None:
        try:
            p = producer(b, f"p{n:02d}")
            p.init_transactions(TIMEOUT)
            for k in range(2):
                p.begin_transaction()
                p.produce("many", value=f"{n}-{k}".encode(), partition=n % 2)
                p.commit_transaction(TIMEOUT)
        except BaseException as e:  # reported below
            errors.append(e)

    threads = [threading.Thread(target=run, args=(n,)) for n in range(20)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert not errors and not any(t.is_alive() for t in threads)
    c = consumer(b)
    got = read(c, "many", 0, 20) + read(c, "many", 1, 20)
    c.close()
    assert len(got) == 40


def _frame(payload: bytes) -> bytes:
    return struct.pack(">i", len(payload)) + payload


def test_garbage_truncated_and_oversized_frames_close_the_connection_and_the_broker_goes_on(tmp_path: Path) -> None:
    with start(Options(trace=tmp_path / "t.jsonl")) as running:
        for junk in (b"\x00\x00\x00\x05hello", _frame(os.urandom(64)), b"\x00\x00\x01", struct.pack(">i", 2**30) + b"x",
                     struct.pack(">i", -7), _frame(b"\x00\x12\x00\x03")):
            with socket.create_connection(("127.0.0.1", running.port), timeout=5) as s:
                s.sendall(junk)
                s.shutdown(socket.SHUT_WR)
                try:
                    while s.recv(4096):
                        pass
                except OSError:
                    pass
        p = producer(running.bootstrap, "after-garbage")
        p.init_transactions(TIMEOUT)
        p.begin_transaction()
        p.produce("ok", value=b"fine", partition=0)
        p.commit_transaction(TIMEOUT)
    assert txconform_check(tmp_path / "t.jsonl").ok


def test_an_unsupported_api_gets_unsupported_version_and_a_bad_version_is_told(tmp_path: Path) -> None:
    from kafka.protocol.metadata import ApiVersionsRequest

    with start(Options()) as running, socket.create_connection(("127.0.0.1", running.port), timeout=5) as s:
        req = ApiVersionsRequest[0](client_software_name="x", client_software_version="1")
        req.with_header(correlation_id=11, client_id="t")
        s.sendall(req.encode(header=True, framed=True))
        size = struct.unpack(">i", _recv(s, 4))[0]
        body = _recv(s, size)
        assert struct.unpack(">i", body[:4])[0] == 11
        assert struct.unpack(">h", body[4:6])[0] == 0


def _recv(s: socket.socket, n: int) -> bytes:
    out = b""
    while len(out) < n:
        chunk = s.recv(n - len(out))
        if not chunk:
            raise AssertionError("connection closed")
        out += chunk
    return out


@pytest.mark.txconform_serve(version="TV2", partitions=2)
def test_a_tv2_client_adds_no_partitions_and_takes_the_bumped_epoch_from_end_txn(txconform_broker: Any) -> None:
    from ref_impl.kafka.serve.wireclient import transactions

    assert transactions("127.0.0.1", txconform_broker.port, "tv2", "t2", [True, False, True], batches=2, records=3) is None
    events = txconform_broker.broker.events
    assert not any(e.get("type") == "AddPartitionsToTxn" for e in events)  # the leader added them (TcVerify)
    assert sum(1 for e in events if e["action"] == "TcVerify") == 3
    epochs = [e["producer_epoch"] for e in events if e["action"] == "ClientSend" and e["type"] == "EndTxn"]
    assert epochs == [0, 1, 2]  # every EndTxn bumps


@pytest.mark.txconform_serve(version="TV2")
def test_a_tv1_client_in_a_tv2_session_is_told_unsupported_version_not_served_wrongly(txconform_broker: Any) -> None:
    p = producer(txconform_broker.bootstrap, "old-client")
    p.init_transactions(TIMEOUT)
    p.begin_transaction()
    p.produce("t", value=b"x", partition=0)
    with pytest.raises(KafkaException):
        p.commit_transaction(5)
    assert any("TV1 client" in r for r in txconform_broker.broker.refusals)


def test_the_cli_prints_the_port_it_took_and_writes_the_trace_on_sigterm(tmp_path: Path) -> None:
    import signal
    import subprocess
    import sys

    trace = tmp_path / "cli.jsonl"
    proc = subprocess.Popen([sys.executable, "-m", "trace_check.cli.main", "serve", "--port", "0", "--trace", str(trace)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        port = int(line.rsplit("port ", 1)[1].rstrip(")\n"))
        from ref_impl.kafka.serve.wireclient import transactions

        assert transactions("127.0.0.1", port, "cli", "c", [True], tv2=False) is None
    finally:
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=20)
    assert proc.returncode == 0, err
    assert "trace written to" in out
    assert txconform_check(trace).ok


@pytest.mark.parametrize("codec", ["lz4", "zstd"])
def test_compressed_batches_are_stored_as_sent_and_consumers_decompress_them(txconform_broker: Any, codec: str) -> None:
    p = producer(txconform_broker.bootstrap, f"z-{codec}", **{"compression.type": codec})
    p.init_transactions(TIMEOUT)
    p.begin_transaction()
    for i in range(5):
        p.produce("z", value=(f"{i}" * 200).encode(), partition=0)
    p.commit_transaction(TIMEOUT)
    c = consumer(txconform_broker.bootstrap)
    got = read(c, "z", 0, 5)
    c.close()
    assert [v for _, v in got] == [(f"{i}" * 200).encode() for i in range(5)]


def test_describe_groups_shows_a_consumer_group_and_its_member(txconform_broker: Any) -> None:
    from confluent_kafka.admin import AdminClient

    txconform_broker.create_topic("dg", 1)
    c = Consumer({"bootstrap.servers": txconform_broker.bootstrap, "group.id": "dg-group", "auto.offset.reset": "earliest"})
    c.subscribe(["dg"])
    deadline = time.monotonic() + TIMEOUT
    while not c.assignment() and time.monotonic() < deadline:
        c.poll(0.2)
    admin = AdminClient({"bootstrap.servers": txconform_broker.bootstrap})
    described = admin.describe_consumer_groups(["dg-group"])["dg-group"].result(TIMEOUT)
    c.close()
    assert described.state.name == "STABLE" and len(described.members) == 1


@pytest.mark.parametrize("args, says", [
    (["--faults", "drop@EndTxn"], "--faults: 'drop@EndTxn' is not KIND@REQUEST:N"),
    (["--version", "TV3"], "--version: 'TV3' is not one of TV1, TV1V, TV2"),
    (["--bugs", "nope"], "--bugs: unknown bug 'nope'"),
    (["--workload", "copy:msgs=4"], "--workload copy:msgs=4: Kafka's serve has no workload to shape"),
])
def test_bad_serve_options_are_one_line_errors_with_exit_status_2(args: list[str], says: str) -> None:
    import subprocess
    import sys

    proc = subprocess.run([sys.executable, "-m", "trace_check.cli.main", "serve", "--port", "0", *args],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2
    assert proc.stderr.count("\n") == 1 and says in proc.stderr


@pytest.mark.txconform_serve(faults="drop@Produce:1")
def test_a_lost_produce_answer_is_retried_and_the_leader_appends_the_batch_once(txconform_broker: Any) -> None:
    p = producer(txconform_broker.bootstrap, "dup")
    p.init_transactions(TIMEOUT)
    p.begin_transaction()
    for i in range(3):
        p.produce("dup", value=f"{i}".encode(), partition=0)
    p.commit_transaction(TIMEOUT)
    events = txconform_broker.broker.events
    assert [e["att"] for e in events if e["action"] == "LeaderProduce"] == [0, 1]
    # the first copy is appended (after its verification, TV1V); the second is a duplicate: answered, not appended
    appends = [e for e in events if e["action"] in ("LeaderProduce", "LeaderVerified") and "append_offset" in e]
    assert [e["att"] for e in appends] == [0]
    assert [e["result"] for e in events if e["action"] == "LeaderProduce" and e["att"] == 1] == ["NONE"]
    c = consumer(txconform_broker.bootstrap)
    assert [v for _, v in read(c, "dup", 0, 3)] == [b"0", b"1", b"2"]
    c.close()


def test_plain_data_is_served_outside_the_spec_and_not_mixed_with_transactional_data(txconform_broker: Any) -> None:
    b = txconform_broker.bootstrap
    plain = Producer({"bootstrap.servers": b, "linger.ms": 5})
    for i in range(3):
        plain.produce("plain", value=f"p{i}".encode(), partition=0)
    assert plain.flush(TIMEOUT) == 0
    p = producer(b, "mixer")
    p.init_transactions(TIMEOUT)
    p.begin_transaction()
    p.produce("txnl", value=b"t0", partition=0)
    p.commit_transaction(TIMEOUT)
    c = consumer(b)
    assert [v for _, v in read(c, "plain", 0, 3)] == [b"p0", b"p1", b"p2"]
    c.close()
    assert not any(e.get("topic") == "plain" for e in txconform_broker.broker.events)
    p.begin_transaction()
    p.produce("plain", value=b"mixed", partition=0)
    with pytest.raises(KafkaException):
        p.commit_transaction(5)
    assert any("holds non-transactional data" in r for r in txconform_broker.broker.refusals)


def test_a_transactional_id_a_trace_cannot_hold_is_refused_and_the_session_still_checks(txconform_broker: Any) -> None:
    from ref_impl.kafka.serve.wireclient import TransactionalClient, WireClient, WireClientError

    with WireClient("127.0.0.1", txconform_broker.port) as c:
        c.negotiate()
        with pytest.raises(WireClientError, match="InitProducerId: error 42"):
            TransactionalClient(c, "caf\u00e9-\u2603").init()
    assert any("printable ASCII" in r for r in txconform_broker.broker.refusals)
