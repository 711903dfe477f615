#!/usr/bin/env python3
"""Make a small real Kafka 4.x log sample for ``txconform replay`` (tests/fixtures/kafka-4x/).

    .venv/bin/python scripts/make_kafka_sample.py --workdir /tmp/rk/run --out tests/fixtures/kafka-4x

Steps, one broker at a time:

1. start Kafka VERSION (KRaft, one node) from its jars with ``transaction.version`` TV, keeping its
   data (WORKDIR/kafka-data/node-1);
2. run the probe's workload (``probe.run.record``: committing and aborting producers, zombies, a
   producer killed mid-transaction, a transaction left open, consume-transform-produce) with the
   probe's topic deletion turned off, so that the data topics' segments stay;
3. with ``--hang`` (the default), begin a transaction in a child process (transaction.timeout.ms
   15 minutes), send to partition 0, and kill the child by its pid: a transaction open on the
   partition that nobody will end before the broker stops;
4. while the broker is up, run ``kafka-transactions.sh find-hanging --broker-id 1`` (and
   ``list``); their output goes to WORKDIR/find-hanging.txt;
5. stop the broker by its pid; dump every partition with DumpLogSegments (``--deep-iteration
   --print-data-log``; ``--transaction-log-decoder`` for __transaction_state, ``--offsets-decoder``
   for __consumer_offsets) into WORKDIR/dumps/TOPIC-PARTITION.txt, the tool run from
   WORKDIR/kafka-data so that each ``Dumping`` line reads ``node-1/TOPIC-PARTITION/FILE``;
6. with ``--out``, copy a sample: the dumps of input partition 0 and of __transaction_state, and
   the raw files (.log, .index, .timeindex, .txnindex) of those two partitions, under OUT/node-1/.

Errors are one line on stderr, exit status 2. Java processes are stopped by their own pids.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import shutil
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

HANG_TIMEOUT_MS = 900_000  # the broker's default transaction.max.timeout.ms
RAW_SUFFIXES = (".log", ".index", ".timeindex", ".txnindex")

# The child that leaves a transaction open: it prints "sent" once the records are acknowledged and
# then waits to be killed.
_HANG_CHILD = textwrap.dedent(
    """
    import sys, time
    from confluent_kafka import Producer
    bootstrap, txid, topic = sys.argv[1:4]
    p = Producer({"bootstrap.servers": bootstrap, "transactional.id": txid, "transaction.timeout.ms": %d, "linger.ms": 2})
    p.init_transactions(30)
    p.begin_transaction()
    for i in range(2):
        p.produce(topic, key=b"hang", value=("hang-%%d" %% i).encode(), partition=0)
    if p.flush(30) != 0:
        sys.exit("hang: records not acknowledged")
    print("sent", flush=True)
    time.sleep(3600)
    """  # noqa: UP031 - the child's source has dict braces that str.format would need doubled
    % HANG_TIMEOUT_MS
)


class SampleError(Exception):
    """A one-line reason the sample could not be made."""


def dump_class(version: str) -> str:
    """DumpLogSegments moved to the tools module (Java) in Kafka 4.3."""
    major, minor = (int(x) for x in version.split(".")[:2])
    return "org.apache.kafka.tools.DumpLogSegments" if (major, minor) >= (4, 3) else "kafka.tools.DumpLogSegments"


def hang(bootstrap: str, topic: str, workdir: Path) -> str:
    """Leave a transaction open on ``topic``-0 and kill its producer; the transactional id."""
    txid = f"{topic}-hang"
    with open(workdir / "hang.log", "wb") as log:
        child = subprocess.Popen([sys.executable, "-c", _HANG_CHILD, bootstrap, txid, topic], stdout=subprocess.PIPE, stderr=log, text=True)
    try:
        line = child.stdout.readline() if child.stdout else ""
        if line.strip() != "sent":
            raise SampleError(f"the hanging producer did not send (see {workdir / 'hang.log'})")
    finally:
        if child.poll() is None:
            os.kill(child.pid, signal.SIGKILL)
        child.wait(10)
        if child.stdout:
            child.stdout.close()
    return txid


def run_and_record(args: argparse.Namespace) -> dict[str, Any]:
    import probe.workload
    from probe.kafka import start_kafka
    from probe.run import TargetSpec, record
    from probe.workload import make_plan

    probe.workload.Run.delete_topics = lambda self: None  # type: ignore[method-assign]  # keep the segments
    workdir: Path = args.workdir
    plan = make_plan(args.seed, producers=args.producers, txns=args.txns)
    cluster = start_kafka(workdir, args.version, transaction_version=args.transaction_version, keep_data=True)
    info: dict[str, Any] = {"topic": plan.topic, "lib": str(cluster.lib), "broker": cluster.version}
    try:
        rec = record(plan, TargetSpec("kafka", args.version, args.transaction_version), workdir, seconds=args.seconds, target=cluster)
        info["probe_errors"] = list(rec.errors)
        if args.hang:
            info["hang_txid"] = hang(cluster.bootstrap, plan.topic, workdir)
            time.sleep(2)
        outputs = []
        for cmd in (["list"], ["find-hanging", "--broker-id", "1"], ["find-hanging", "--broker-id", "1", "--max-transaction-timeout", "0"]):
            r = cluster.run_tool("org.apache.kafka.tools.TransactionsCommand", "--bootstrap-server", cluster.bootstrap, *cmd)
            outputs.append(f"$ kafka-transactions.sh {' '.join(cmd)}\n{r.stdout}{r.stderr}(exit {r.returncode})\n")
            if args.hang and cmd[0] == "list":
                r = cluster.run_tool(
                    "org.apache.kafka.tools.TransactionsCommand", "--bootstrap-server", cluster.bootstrap, "describe", "--transactional-id", info["hang_txid"]
                )
                outputs.append(f"$ kafka-transactions.sh describe --transactional-id {info['hang_txid']}\n{r.stdout}{r.stderr}(exit {r.returncode})\n")
        (workdir / "find-hanging.txt").write_text("\n".join(outputs))
    finally:
        cluster.stop()
    return info


def dump_all(workdir: Path, version: str, lib: Path) -> list[Path]:
    """DumpLogSegments of every partition of node-1, one text file per partition."""
    from probe import maven

    data = workdir / "kafka-data"
    node = data / "node-1"
    out = workdir / "dumps"
    out.mkdir(exist_ok=True)
    written = []
    for part in sorted(p for p in node.iterdir() if p.is_dir() and "-" in p.name and not p.name.startswith("__cluster_metadata")):
        files = sorted(f for f in part.iterdir() if f.suffix in (".log", ".txnindex"))
        if not files:
            continue
        extra = []
        if part.name.startswith("__transaction_state-"):
            extra = ["--transaction-log-decoder"]
        elif part.name.startswith("__consumer_offsets-"):
            extra = ["--offsets-decoder"]
        names = ",".join(f"node-1/{part.name}/{f.name}" for f in files)
        r = subprocess.run(
            [str(maven.java()), "-Xmx256m", "-cp", maven.jars(lib), dump_class(version), "--files", names, "--deep-iteration", "--print-data-log", *extra],
            cwd=data,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=120,
        )
        if r.returncode != 0 or not r.stdout.startswith("Dumping "):
            raise SampleError(f"DumpLogSegments failed on {part} (exit {r.returncode}): {(r.stderr or r.stdout).strip().splitlines()[-1:]}")
        target = out / f"{part.name}.txt"
        target.write_text(r.stdout)
        written.append(target)
    return written


def copy_sample(workdir: Path, out: Path, info: dict[str, Any], args: argparse.Namespace) -> None:
    node = workdir / "kafka-data" / "node-1"
    chosen = [f"{info['topic']}-0", "__transaction_state-0"]
    if out.exists() and any(out.iterdir()):
        raise SampleError(f"{out}: exists and is not empty; remove it or give another --out")
    (out / "dumps").mkdir(parents=True, exist_ok=True)
    for name in chosen:
        shutil.copy(workdir / "dumps" / f"{name}.txt", out / "dumps" / f"{name}.txt")
        (out / "node-1" / name).mkdir(parents=True)
        for f in sorted((node / name).iterdir()):
            if (f.suffix in RAW_SUFFIXES and f.stat().st_size > 0) or f.suffix == ".log":
                shutil.copy(f, out / "node-1" / name / f.name)
    (out / "sample.json").write_text(
        json.dumps(
            {
                "kafka": args.version,
                "transaction_version": args.transaction_version,
                "seed": args.seed,
                "topic": info["topic"],
                "hang_txid": info.get("hang_txid"),
                "made": datetime.date.today().isoformat(),
                "command": "scripts/make_kafka_sample.py " + " ".join(sys.argv[1:]),
            },
            indent=2,
        )
        + "\n"
    )


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--version", default="4.4.0", help="Kafka version (4.x; default 4.4.0)")
    ap.add_argument("--transaction-version", type=int, default=2, choices=(0, 1, 2), help="transaction.version to format with (default 2)")
    ap.add_argument("--workdir", type=Path, required=True, help="a new directory for the broker's data, the probe's trace and the dumps")
    ap.add_argument("--out", type=Path, help="copy a sample (one data partition and __transaction_state) here")
    ap.add_argument("--seed", type=int, default=3)
    ap.add_argument("--producers", type=int, default=2)
    ap.add_argument("--txns", type=int, default=3)
    ap.add_argument("--seconds", type=float, default=60.0, help="the probe's deadline")
    ap.add_argument("--no-hang", dest="hang", action="store_false", help="do not leave a killed producer's transaction open")
    args = ap.parse_args(argv)
    try:
        if (args.workdir / "kafka-data").exists():
            raise SampleError(f"{args.workdir / 'kafka-data'}: exists; give a new --workdir")
        if not args.version.startswith("4."):
            raise SampleError(f"--version {args.version}: this script drives Kafka 4.x")
        info = run_and_record(args)
        (args.workdir / "sample-info.json").write_text(json.dumps(info, indent=2) + "\n")
        dumps = dump_all(args.workdir, args.version, Path(info["lib"]))
        print(f"{len(dumps)} dumps in {args.workdir / 'dumps'}; find-hanging in {args.workdir / 'find-hanging.txt'}")
        if args.out is not None:
            copy_sample(args.workdir, args.out, info, args)
            size = sum(f.stat().st_size for f in args.out.rglob("*") if f.is_file())
            print(f"sample in {args.out}: {size} bytes")
    except SampleError as e:
        print(f"make_kafka_sample: {e}", file=sys.stderr)
        return 2
    except Exception as e:  # a probe or target failure: one line, the details are in WORKDIR's logs
        print(f"make_kafka_sample: {type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
