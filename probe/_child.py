"""The producer process the probe kills mid-transaction (probe/workload.py, ``kill``).

Arguments: one JSON object (bootstrap, txid, topic, partitions, process, committed). It commits
``committed`` transactions, begins one more, sends to every partition, waits for the deliveries,
prints ``{"type": "mid"}`` and waits to be killed. Every step is a JSON line on stdout (the probe
adds them to its record); librdkafka's log goes to ``log``.
"""

from __future__ import annotations

import json
import sys
import time
from typing import Any


def main() -> int:
    args = json.loads(sys.argv[1])

    def emit(kind: str, **fields: Any) -> None:
        print(json.dumps({"type": kind, **fields}), flush=True)

    from probe.clients import TxnProducer

    p = TxnProducer(emit, args["bootstrap"], args["txid"], 0, args["process"], args.get("log"))
    if p.init() is not None:
        return 1
    for n in range(int(args["committed"]) + 1):
        if not p.begin():
            return 1
        for partition in range(int(args["partitions"])):
            p.send(args["topic"], partition, f"k{partition}", f"{args['process']}-{n}-{partition}")
        p.flush()
        if n < int(args["committed"]):
            p.commit()
    emit("mid", process=args["process"], txn=p.txn_name())
    time.sleep(120)  # killed long before this
    return 0


if __name__ == "__main__":
    sys.exit(main())
