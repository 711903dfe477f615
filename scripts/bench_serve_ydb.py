#!/usr/bin/env python3
"""Benchmarks of `txconform serve --protocol ydb` (docs/benchmarks.md, "txconform serve --protocol ydb"):

1. transactions per second of the real `ydb` SDK (sync, one application thread: the served engine has
   one worker, so one transaction at a time), each transaction `retry_tx_sync` reading a batch of
   two messages of topic A and writing them to B; beside it, measured on the same server in the same
   run, the yardstick: the SDK's `select 1` round trips per second (the SDK and gRPC with no engine
   behind them). Sessions of 37 and 370 transactions, whose traces hold about 1,000 and 10,000 events;
2. the time `txconform check` takes to check those two traces (TLC, in windows as it chooses);
3. with ``--writers``: write-only transactions of two messages each, by 1 SDK application thread and
   by 20 at once, against the same server (20 workers, so 20 transactions open at once), each the
   same number of transactions in all: transactions per second, and the check of each session;
4. with ``--table-cost``: what the served engine's ``Table`` constant (on since the single-row table
   statements) costs the copies that never touch a table: sessions with it off and on, alternating,
   transactions per second of each and their ratio.

    python scripts/bench_serve_ydb.py            # measure and rewrite the section of docs/benchmarks.md
    python scripts/bench_serve_ydb.py --writers  # the writers' section
    python scripts/bench_serve_ydb.py --table-cost  # the Table constant's section
    python scripts/bench_serve_ydb.py --print    # measure and print only
"""

from __future__ import annotations

import argparse
import contextlib
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "scripts"))

from bench_models import record, stamp  # noqa: E402

SESSIONS = (37, 370)  # transactions; 27 trace events each
T = 10.0


@contextlib.contextmanager
def served(options: Any) -> Iterator[tuple[Any, Any]]:
    """A server of ``options`` (ref_impl.ydb.serve.run.Options) and a connected SDK driver with topics A
    and B created; the server is stopped (its trace written) on the way out."""
    import ydb

    from ref_impl.ydb.serve.run import Running

    running = Running(options).start()
    try:
        driver = ydb.Driver(endpoint=f"grpc://{running.bootstrap}", database="/local")
        driver.wait(timeout=T, fail_fast=True)
        try:
            driver.topic_client.create_topic("A", consumers=["c"])
            driver.topic_client.create_topic("B", consumers=["check"])
            yield running, driver
        finally:
            driver.stop(timeout=T)
    finally:
        running.stop()


def session(txns: int, trace: Path, table: bool = True) -> tuple[float, float, int]:
    """Serve ``txns`` copies and as many ``select 1``: each's rate per second, and the trace's events."""
    import ydb

    from ref_impl.ydb.serve.run import Options

    with (served(Options(port=0, messages=2 * txns, batch=2, txns=txns, trace=trace, table=table)) as (running, driver),
          ydb.QuerySessionPool(driver) as pool, driver.topic_client.reader("A", consumer="c") as reader):

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
    return txns / copies, txns / selects, len(running.front.events)


WRITERS = (1, 20)
WRITER_TXNS = 200  # transactions in all, per session


def writers_session(threads: int, txns: int, trace: Path) -> tuple[float, int]:
    """``txns`` write-only transactions of two messages, by ``threads`` SDK threads at once: their rate per
    second, and the trace's events."""
    import threading

    import ydb

    from ref_impl.ydb.serve.run import Options

    errors: list[BaseException] = []
    with served(Options(port=0, workers=max(WRITERS), txns=txns, trace=trace)) as (running, driver), ydb.QuerySessionPool(driver, size=threads) as pool:

        def write(tx: object) -> None:
            writer = driver.topic_client.tx_writer(tx, "B")
            for j in range(2):
                writer.write(ydb.TopicWriterMessage(f"m{j}".encode()), timeout=T)

        def loop(n: int) -> None:
            try:
                for _ in range(n):
                    pool.retry_tx_sync(write, retry_settings=ydb.RetrySettings(max_retries=0))
            except BaseException as e:  # noqa: BLE001 - reported below
                errors.append(e)

        shares = [txns // threads + (1 if i < txns % threads else 0) for i in range(threads)]
        workers = [threading.Thread(target=loop, args=(n,), daemon=True) for n in shares]
        t0 = time.monotonic()
        for t in workers:
            t.start()
        for t in workers:
            t.join(600)
        seconds = time.monotonic() - t0
    if errors:
        raise SystemExit(f"bench_serve_ydb: a writer failed: {errors[0]!r}")
    return txns / seconds, len(running.front.events)


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
    parser.add_argument("--writers", action="store_true", help="1 and 20 SDK writers in write-only transactions")
    parser.add_argument("--table-cost", action="store_true", help="copies with the served Table constant off and on")
    args = parser.parse_args()
    if args.writers:
        return writers_main(args.print)
    if args.table_cost:
        return table_main(args.print)
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


def writers_main(print_only: bool) -> int:
    rows = ["| SDK writer threads | transactions | trace events | SDK transactions/s | ratio to 1 thread | `txconform check` | verdict |",
            "|---:|---:|---:|---:|---:|---:|---|"]
    base = 0.0
    with tempfile.TemporaryDirectory() as tmp:
        for threads in WRITERS:
            trace = Path(tmp) / f"writers-{threads}.jsonl"
            tps, events = writers_session(threads, WRITER_TXNS, trace)
            base = base or tps
            seconds, verdict = check_seconds(trace)
            rows.append(f"| {threads} | {WRITER_TXNS} | {events:,} | {tps:.1f} | {tps / base:.2f} | {seconds:.1f} s | {verdict} |")
            print(rows[-1], flush=True)
    return record("serve-ydb-writers", stamp("python scripts/bench_serve_ydb.py --writers") + "\n".join(rows), print_only,
                  "bench_serve_ydb")


TABLE_TXNS, TABLE_ROUNDS = 120, 3


def table_main(print_only: bool) -> int:
    rows = ["| round | `Table` off: transactions/s | `Table` on: transactions/s | on / off |", "|---:|---:|---:|---:|"]
    ratios = []
    with tempfile.TemporaryDirectory() as tmp:
        for r in range(1, TABLE_ROUNDS + 1):
            off = session(TABLE_TXNS, Path(tmp) / f"off-{r}.jsonl", table=False)[0]
            on = session(TABLE_TXNS, Path(tmp) / f"on-{r}.jsonl", table=True)[0]
            ratios.append(on / off)
            rows.append(f"| {r} | {off:.1f} | {on:.1f} | {on / off:.2f} |")
            print(rows[-1], flush=True)
    rows.append(f"| median | | | {sorted(ratios)[len(ratios) // 2]:.2f} |")
    return record("serve-ydb-table", stamp("python scripts/bench_serve_ydb.py --table-cost") + "\n".join(rows), print_only,
                  "bench_serve_ydb")


if __name__ == "__main__":
    sys.exit(main())
