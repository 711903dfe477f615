#!/usr/bin/env python3
"""Benchmarks of `txconform serve` (docs/benchmarks.md, "txconform serve"):

1. start-up: `txconform serve --port 0` from process start to the line with its port, and a broker
   started in-process (ref_impl.kafka.serve.run.start) until it has answered an ApiVersions;
2. requests per second served on 2 cores with 1 and with 20 transactional producers, each in its own
   process (the tool's wire client, TV1 requests: AddPartitionsToTxn, Produce, EndTxn per
   transaction), against `txconform serve` and, as the baseline measured in the same run, against
   librdkafka's mock cluster (one broker) with the same clients;
3. the time to check recorded session traces of about 1,000 and 10,000 events.

    python scripts/bench_serve.py              # everything (a few minutes)
    python scripts/bench_serve.py --txns 20    # fewer transactions per producer
"""

from __future__ import annotations

import argparse
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
TXCONFORM = Path(sys.executable).parent / "txconform"


def client(host: str, port: int, name: str, txns: int, batches: int) -> None:
    """One producer; prints when its first request left and its last answer came (after imports)."""
    from ref_impl.kafka.serve.wireclient import transactions

    t0 = time.time()
    err = transactions(host, port, name, f"bench-{name}", [True] * txns, tv2=False, batches=batches, records=5, timeout=60)
    if err is not None:
        raise SystemExit(f"{name}: error {err}")
    print(t0, time.time())


def start_serve() -> tuple[subprocess.Popen[str], int]:
    proc = subprocess.Popen([str(TXCONFORM), "serve", "--port", "0"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    line = proc.stdout.readline()
    return proc, int(line.rsplit("port ", 1)[1].rstrip(")\n"))


def stop_serve(proc: subprocess.Popen[str]) -> int:
    """Stop the server by its own process id; the number of requests it served."""
    proc.send_signal(signal.SIGTERM)
    out, _ = proc.communicate(timeout=30)
    return int(out.split("stopped after ", 1)[1].split(" requests", 1)[0])


def load(port: int, producers: int, txns: int, batches: int) -> float:
    """The serving window: from the first request of `producers` processes (each running `txns`
    transactions) to the last answer; process start-up and imports are not in it."""
    procs = [subprocess.Popen([sys.executable, __file__, "--client", str(port), f"p{n}", str(txns), str(batches)],
                              stdout=subprocess.PIPE, text=True) for n in range(producers)]
    spans = []
    for p in procs:
        out, _ = p.communicate(timeout=600)
        if p.returncode != 0:
            raise SystemExit("a benchmark client failed")
        start, end = map(float, out.split())
        spans.append((start, end))
    return max(e for _, e in spans) - min(s for s, _ in spans)


def requests_of(producers: int, txns: int, batches: int) -> int:
    """What the clients send: Metadata and InitProducerId, then per transaction AddPartitionsToTxn,
    the batches and EndTxn."""
    return producers * (2 + txns * (batches + 2))


def throughput(txns: int, batches: int) -> list[tuple[str, int, float, float]]:
    from probe.targets import start_mock

    rows = []
    for producers in (1, 20):
        proc, port = start_serve()
        try:
            secs = load(port, producers, txns, batches)
        finally:
            served = stop_serve(proc)
        rows.append(("txconform serve", producers, served / secs, secs))
        with tempfile.TemporaryDirectory() as d, start_mock(Path(d), brokers=1) as mock:
            port = int(mock.bootstrap.rsplit(":", 1)[1])
            secs = load(port, producers, txns, batches)
        rows.append(("librdkafka mock cluster", producers, requests_of(producers, txns, batches) / secs, secs))
    return rows


def startup() -> tuple[float, float]:
    from kafka.protocol.metadata import ApiVersionsRequest, ApiVersionsResponse

    from ref_impl.kafka.serve.run import Options, start
    from ref_impl.kafka.serve.wireclient import WireClient

    cli, inproc = [], []
    for _ in range(5):
        t0 = time.perf_counter()
        proc, _port = start_serve()
        cli.append(time.perf_counter() - t0)
        stop_serve(proc)
    for _ in range(5):
        t0 = time.perf_counter()
        with start(Options()) as running:
            with WireClient("127.0.0.1", running.port) as c:
                c.call(ApiVersionsRequest(client_software_name="bench", client_software_version="1"), ApiVersionsResponse, 3)
            inproc.append(time.perf_counter() - t0)
    return statistics.median(cli), statistics.median(inproc)


def session_trace(path: Path, txns: int) -> int:
    from ref_impl.kafka.serve.run import Options, start
    from ref_impl.kafka.serve.wireclient import transactions

    with start(Options(trace=path)) as running:
        commits = [k % 4 != 3 for k in range(txns)]  # every fourth transaction aborts
        if transactions("127.0.0.1", running.port, "session", "s", commits, tv2=False, batches=2, records=3) is not None:
            raise SystemExit("the session failed")
        n = len(running.broker.events)
    return n


def check_time(path: Path, every_step: bool | None, timeout: float) -> tuple[float, str]:
    t0 = time.perf_counter()
    args = [str(TXCONFORM), "check", str(path), "--timeout", str(timeout)]
    args += {True: ["--every-step"], False: ["--at-end"], None: []}[every_step]
    out = subprocess.run(args, capture_output=True, text=True, timeout=timeout + 600)
    return time.perf_counter() - t0, out.stdout.strip().splitlines()[0] if out.stdout.strip() else out.stderr.strip()


def main() -> int:
    if len(sys.argv) > 1 and sys.argv[1] == "--client":
        client("127.0.0.1", int(sys.argv[2]), sys.argv[3], int(sys.argv[4]), int(sys.argv[5]))
        return 0
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--txns", type=int, default=50, help="transactions per producer (default 50)")
    ap.add_argument("--batches", type=int, default=2, help="batches per transaction (default 2)")
    ap.add_argument("--checks-only", action="store_true", help="only the checks of recorded sessions")
    ap.add_argument("--check-timeout", type=float, default=600.0, help="seconds a check may take (default 600, the checker's)")
    args = ap.parse_args()
    print(f"machine: {os.cpu_count()} cores; python {sys.version.split()[0]}")
    if not args.checks_only:
        cli, inproc = startup()
        print("\n| start-up | median of 5 |\n|---|---|")
        print(f"| `txconform serve --port 0`, process start to the port line | {cli:.2f} s |")
        print(f"| in-process `start()` to an answered ApiVersions | {inproc * 1000:.0f} ms |")
        rows = throughput(args.txns, args.batches)
        print("\n| broker | producers | requests/s | serving window | ratio to the mock cluster |\n|---|---|---|---|---|")
        base = {p: rps for name, p, rps, _ in rows if name.startswith("librdkafka")}
        for name, producers, rps, secs in rows:
            print(f"| {name} | {producers} | {rps:,.0f} | {secs:.1f} s | {rps / base[producers]:.2f} |")
    print("\n| session trace | events | check (default) | check --every-step | check --at-end |\n|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as d:
        for txns in (55, 550):
            path = Path(d) / f"session-{txns}.jsonl"
            n = session_trace(path, txns)
            default, verdict = check_time(path, None, args.check_timeout)
            every, _ = check_time(path, True, args.check_timeout)
            at_end, _ = check_time(path, False, args.check_timeout)
            print(f"| {txns} transactions (TV1V, 2 batches, every 4th aborted) | {n:,} | {default:.1f} s | {every:.1f} s | "
                  f"{at_end:.1f} s |")
            print(f"<!-- {verdict} -->")
    return 0


if __name__ == "__main__":
    sys.exit(main())
