"""The process that holds librdkafka's mock cluster for ``--target mock`` (probe/targets.py).

The mock cluster lives inside a librdkafka client; this process creates one with
``test.mock.num.brokers``, prints one JSON line with the brokers' addresses and librdkafka's
version, and waits until its stdin closes or it is signalled. Stopping the process stops the cluster.
"""

from __future__ import annotations

import argparse
import json
import os
import select
import sys


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--brokers", type=int, default=3)
    args = ap.parse_args()
    import confluent_kafka
    from confluent_kafka import Producer

    host = Producer({"test.mock.num.brokers": args.brokers, "bootstrap.servers": "", "log_level": 4})
    md = host.list_topics(timeout=10)
    bootstrap = ",".join(f"{b.host}:{b.port}" for b in sorted(md.brokers.values(), key=lambda b: b.id))
    print(json.dumps({"bootstrap": bootstrap, "librdkafka": confluent_kafka.libversion()[0]}), flush=True)
    while True:  # until stdin closes (the probe ended) or a signal stops this process
        ready, _, _ = select.select([sys.stdin], [], [], 1.0)
        if ready and not os.read(sys.stdin.fileno(), 1):
            return 0
        host.poll(0)


if __name__ == "__main__":
    sys.exit(main())
