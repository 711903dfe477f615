#!/usr/bin/env python3
"""Benchmarks of `txconform serve --protocol ydb` (docs/benchmarks.md, "txconform serve --protocol ydb"):

1. transactions per second of the real `ydb` SDK (sync, one application thread: the served engine has
   one worker, so one transaction at a time), each transaction `retry_tx_sync` reading a batch of
   two messages of topic A and writing them to B; beside it, measured on the same server in the same
   run, the yardstick: the SDK's `select 1` round trips per second (the SDK and gRPC with no engine
   behind them). Sessions of 37 and 370 transactions, whose traces hold about 1,000 and 10,000 events;
2. the time `txconform check` takes to check those two traces (TLC, in windows as it chooses).

    python scripts/bench_serve_ydb.py            # measure and rewrite the section of docs/benchmarks.md
    python scripts/bench_serve_ydb.py --print    # measure and print only
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "scripts"))

from bench_models import record, stamp  # noqa: E402

SESSIONS = (37, 370)  # transactions; 27 trace events each
T = 10.0


def session(txns: int, trace: Path) -> tuple[float, float, int]:
    """Serve ``txns`` copies and as many ``select 1``: each's rate per second, and the trace's events."""
    import ydb

    from ref_impl.ydb.serve.run import Options, Running

    running = Running(Options(port=0, messages=2 * txns, batch=2, txns=txns, trace=trace)).start()
    try:
        driver = ydb.Driver(endpoint=f"grpc://{running.bootstrap}", database="/local")
        driver.wait(timeout=T, fail_fast=True)
        try:
            driver.topic_client.create_topic("A", consumers=["c"])
            driver.topic_client.create_topic("B", consumers=["check"])
            with ydb.QuerySessionPool(driver) as pool, driver.topic_client.reader("A", consumer="c") as reader:

                def copy(tx: object) -> None:
                    batch = reader.receive_batch_with_tx(tx, max_messages=2, timeout=T)
                    writer = driver.topic_client.tx_writer(tx, "B")
                    for m in batch.messages:
                        writer.write(ydb.TopicWriterMessage(m.data), timeout=T)

                t0 = time.monotonic()
                for _ in range(txns):
                    pool.retry_tx_sync(copy, retry_settings=ydb.RetrySettings(max_retries=0))
                copies = time.monotonic() - t0
                t0 = time.monotonic()
                for _ in range(txns):
                    pool.execute_with_retries("select 1")
                selects = time.monotonic() - t0
        finally:
            driver.stop(timeout=T)
    finally:
        running.stop()
    return txns / copies, txns / selects, len(running.front.events)


def check_seconds(trace: Path) -> tuple[float, str]:
    """Wall seconds of ``txconform check TRACE`` (a process of its own) and its verdict line."""
    t0 = time.monotonic()
    done = subprocess.run([sys.executable, "-m", "trace_check.cli.main", "check", str(trace)], capture_output=True, text=True,
                          timeout=3600, cwd=ROOT)
    seconds = time.monotonic() - t0
    lines = done.stdout.splitlines()
    verdict = next((line.split(":", 1)[0] for line in lines if line.startswith(("accepted", "rejected", "violates"))), "")
    if not verdict:  # the check's own one-line error, or what it printed last
        verdict = f"exit {done.returncode}: " + ((done.stderr.strip() or done.stdout.strip()).splitlines() or [""])[-1][:200]
    return seconds, verdict


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--print", action="store_true", help="print only; do not rewrite docs/benchmarks.md")
    args = parser.parse_args()
    rows = ["| transactions | trace events | SDK transactions/s | SDK `select 1`/s (yardstick) | ratio | `txconform check` | verdict |",
            "|---:|---:|---:|---:|---:|---:|---|"]
    with tempfile.TemporaryDirectory() as tmp:
        for txns in SESSIONS:
            trace = Path(tmp) / f"session-{txns}.jsonl"
            tps, sps, events = session(txns, trace)
            seconds, verdict = check_seconds(trace)
            rows.append(f"| {txns} | {events:,} | {tps:.1f} | {sps:.1f} | {tps / sps:.3f} | {seconds:.1f} s | {verdict} |")
            print(rows[-1], flush=True)
    return record("serve-ydb", stamp("python scripts/bench_serve_ydb.py") + "\n".join(rows), args.print, "bench_serve_ydb")


if __name__ == "__main__":
    sys.exit(main())
