#!/usr/bin/env python3
"""Real Kafka as a probe target: what it costs, measured side by side with Tansu's run of the same
plan, and written into the ``<!-- bench:real-kafka -->`` section of docs/benchmarks.md.

- the first resolution of the jars, as on a new machine: an empty txconform cache and an empty
  Maven repository (``-Dmaven.repo.local``), for the broker at each version the tests use and for
  the Java client (resolution and compile);
- a node's start, until it answers Metadata (jars cached), per version;
- ``txconform probe --no-check`` of one plan on Kafka 4.4.0, one node, against the same on Tansu,
  run in turns (``--rounds``), each a whole process; the ratio of their medians.

    python scripts/bench_real_kafka.py [--rounds 3] [--print]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench_models import record, stamp

ROOT = Path(__file__).resolve().parents[1]
VERSIONS = ("4.4.0", "4.1.0", "4.1.1")  # the versions tests/test_probe_kafka.py starts
PROBE = ["--seed", "5", "--txns", "3", "--no-check", "--force"]


def first_resolution(work: Path) -> list[tuple[str, float]]:
    """Seconds to resolve each version's broker jars, then the Java client's, from nothing."""
    env = {**os.environ, "TXCONFORM_CACHE": str(work / "cache"), "MAVEN_OPTS": f"-Dmaven.repo.local={work / 'm2'}"}
    rows = []
    for version in VERSIONS:
        code = f"from pathlib import Path; from probe import maven, kafka; maven.classpath(kafka.POM, {version!r}, 'kafka', 'kafka.version')"
        t = time.monotonic()
        subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, check=True)
        rows.append((f"broker jars, Kafka {version}", time.monotonic() - t))
    t = time.monotonic()
    subprocess.run([sys.executable, "-c", "from probe import java_client; java_client.driver_classes('4.4.0')"], cwd=ROOT, env=env, check=True)
    rows.append(("Java client jars (kafka-clients 4.4.0) and the driver's compile", time.monotonic() - t))
    return rows


def start_times(work: Path) -> list[tuple[str, float]]:
    sys.path.insert(0, str(ROOT))
    from probe.kafka import start_kafka

    rows = []
    for version in VERSIONS:
        t = time.monotonic()
        cluster = start_kafka(work / f"start-{version}", version)
        rows.append((f"Kafka {version}, one node, until it answers Metadata", time.monotonic() - t))
        cluster.stop()
    return rows


def probe_seconds(target: str, out: Path) -> float:
    t = time.monotonic()
    subprocess.run([str(ROOT / ".venv" / "bin" / "txconform"), "probe", "--target", target, *PROBE, "--out", str(out)], cwd=ROOT, check=False,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.monotonic() - t


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=3, help="probe runs per target, in turns (default 3)")
    ap.add_argument("--print", action="store_true", help="print only; do not rewrite docs/benchmarks.md")
    args = ap.parse_args()
    work = Path(tempfile.mkdtemp(prefix="txconform-bench-kafka-"))
    try:
        resolution = first_resolution(work)
        starts = start_times(work)
        runs: dict[str, list[float]] = {"kafka": [], "tansu": []}
        for k in range(args.rounds):
            for target in runs:
                runs[target].append(probe_seconds(target, work / f"probe-{target}-{k}"))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    lines = [stamp(f"python scripts/bench_real_kafka.py --rounds {args.rounds}")]
    lines.append("| what | seconds |\n|---|---:|")
    lines += [f"| {what} (from an empty cache and Maven repository) | {s:.1f} |" for what, s in resolution]
    lines += [f"| {what} | {s:.1f} |" for what, s in starts]
    lines.append("")
    lines.append(f"`txconform probe --target T {' '.join(PROBE)}` (every scenario), {args.rounds} runs each, in turns:\n")
    lines.append("| target | min | median | max |\n|---|---:|---:|---:|")
    for target, xs in runs.items():
        lines.append(f"| {target} | {min(xs):.1f} | {statistics.median(xs):.1f} | {max(xs):.1f} |")
    lines.append(f"\nKafka against Tansu, by the medians: {statistics.median(runs['kafka']) / statistics.median(runs['tansu']):.2f} times.")
    return record("real-kafka", "\n".join(lines), args.print, "bench_real_kafka")


if __name__ == "__main__":
    sys.exit(main())
