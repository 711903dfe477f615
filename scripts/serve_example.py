#!/usr/bin/env python3
"""Record the example sessions of docs/serve.md: real librdkafka clients (confluent-kafka) against
`txconform serve`, each session's trace written under docs/serve/.

    python scripts/serve_example.py            write docs/serve/librdkafka-session.jsonl and
                                               docs/serve/lso-inclusive-session.jsonl, print what the clients saw

librdkafka session: a producer commits a transaction of three records and aborts one of three, a
second instance of the same transactional.id fences the first (whose commit then fails), the
successor commits, and a read_committed consumer reads the topic. The second session switches on
the bug zoo's inclusive LSO (Redpanda 2022): a read_committed consumer is given a record of a
transaction still open, and the checker rejects the session at that Fetch.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

from confluent_kafka import Consumer, KafkaException, Producer, TopicPartition

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from ref_impl.kafka.serve.run import Options, start  # noqa: E402

OUT = ROOT / "docs" / "serve"
TIMEOUT = 20.0


def producer(bootstrap: str, txn_id: str) -> Producer:
    return Producer({"bootstrap.servers": bootstrap, "transactional.id": txn_id, "linger.ms": 5, "socket.timeout.ms": 5000})


def read_committed(bootstrap: str, topic: str, want: int, seconds: float = 10.0) -> list[tuple[int, bytes]]:
    c = Consumer({"bootstrap.servers": bootstrap, "group.id": f"reader-{topic}", "isolation.level": "read_committed",
                  "auto.offset.reset": "earliest", "enable.auto.commit": False, "fetch.wait.max.ms": 100})
    c.assign([TopicPartition(topic, 0, 0)])
    got: list[tuple[int, bytes]] = []
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline and len(got) < want:
        m = c.poll(0.2)
        if m is not None and not m.error():
            got.append((m.offset(), m.value()))
    c.close()
    return got


def librdkafka_session() -> None:
    with start(Options(trace=OUT / "librdkafka-session.jsonl")) as running:
        b = running.bootstrap
        p = producer(b, "orders-app")
        p.init_transactions(TIMEOUT)
        for commit in (True, False):
            p.begin_transaction()
            for i in range(3):
                p.produce("orders", value=f"{'committed' if commit else 'aborted'}-{i}".encode(), partition=0)
            p.flush(TIMEOUT)
            (p.commit_transaction if commit else p.abort_transaction)(TIMEOUT)
        p.begin_transaction()
        p.produce("orders", value=b"zombie", partition=0)
        p.flush(TIMEOUT)
        successor = producer(b, "orders-app")
        successor.init_transactions(TIMEOUT)
        try:
            p.commit_transaction(TIMEOUT)
            print("the zombie committed (it must not)")
        except KafkaException as e:
            print(f"the zombie's commit failed: {e.args[0].name()}")
        successor.begin_transaction()
        successor.produce("orders", value=b"successor", partition=0)
        successor.commit_transaction(TIMEOUT)
        print("read_committed consumer:", read_committed(b, "orders", 4))
    print(f"wrote {OUT / 'librdkafka-session.jsonl'}")


def lso_inclusive_session() -> None:
    with start(Options(trace=OUT / "lso-inclusive-session.jsonl", bugs=("lso_inclusive",))) as running:
        p = producer(running.bootstrap, "open-txn")
        p.init_transactions(TIMEOUT)
        p.begin_transaction()
        p.produce("payments", value=b"not committed yet", partition=0)
        p.flush(TIMEOUT)
        print("read_committed consumer, inclusive LSO:", read_committed(running.bootstrap, "payments", 1, seconds=3.0))
        p.abort_transaction(TIMEOUT)
    print(f"wrote {OUT / 'lso-inclusive-session.jsonl'}")


if __name__ == "__main__":
    OUT.mkdir(parents=True, exist_ok=True)
    librdkafka_session()
    lso_inclusive_session()
