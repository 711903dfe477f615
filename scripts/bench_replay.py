#!/usr/bin/env python3
"""Measure `txconform replay` at scale on generated logs, and record it in docs/benchmarks.md.

    python scripts/bench_replay.py                    1M and 10M events, JSONL ingest at 1M
    python scripts/bench_replay.py --sizes 1M,10M,100M
    python scripts/bench_replay.py --print            measure, print, leave docs/benchmarks.md alone

For each size, in fresh processes: spark_replay.generate writes the staged Parquet (timed, with its
peak memory); then, in one local[2] Spark session, a baseline (a plain scan and groupBy of every
table) is run before and after the check suite (spark_replay.staged.run_checks), each check timed,
while the driver's Python RSS, the JVM's and the Python workers' are sampled; the violations found
are compared with the planted ones. Then a txconform JSONL trace of the smallest size is written from
the generated tables and staged through the trace adapter (the ingest rate), against a baseline
over what it staged. The section between ``<!-- bench:replay -->`` and ``<!-- /bench -->`` is
rewritten with the figures, the machine and its load.
"""

from __future__ import annotations

import argparse
import datetime
import itertools
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "scripts"))

import bench_models  # noqa: E402
from bench_models import record  # noqa: E402

SEED = 7
MiB = 1024 * 1024
# Goals of issue 19 ("Measure").
GOAL_RATIO = 4.0
GOAL_RATE = 1_000_000
# Goals of issue 53 (one sorted pass): the suite within 2x one ordered window, 400k events/s at 100M.
GOAL_WINDOW_RATIO = 2.0
GOAL_RATE_100M = 400_000


def parse_size(s: str) -> int:
    s = s.strip().upper()
    mult = {"K": 1_000, "M": 1_000_000, "G": 1_000_000_000}.get(s[-1:], 1)
    return int(float(s.rstrip("KMG")) * mult)


def size_label(n: int) -> str:
    return f"{n // 1_000_000}M" if n >= 1_000_000 and n % 1_000_000 == 0 else f"{n:,}"


def loadavg() -> str:
    try:
        return " ".join(Path("/proc/loadavg").read_text().split()[:3])
    except OSError:
        return "?"


def status_kib(pid: int | str, field: str) -> int:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith(field + ":"):
                return int(line.split()[1])
    except OSError:
        pass
    return 0


def machine() -> str:
    import pyspark

    return bench_models.machine(f"PySpark {pyspark.__version__}")


# --- in the child processes ---------------------------------------------------------------------


def emit(result: dict[str, Any]) -> None:
    print("RESULT " + json.dumps(result), flush=True)


def child_generate(size: int, staged: Path) -> None:
    from spark_replay.generate import generate

    t0 = time.perf_counter()
    g = generate(staged, size, seed=SEED)
    seconds = time.perf_counter() - t0
    disk = sum(f.stat().st_size for f in staged.rglob("*.parquet"))
    plants = [{"check": p.check, "kind": p.kind, "key": list(p.key), "what": p.what} for p in g.plants]
    (staged.parent / "plants.json").write_text(json.dumps(plants))
    emit({"seconds": seconds, "rows": g.rows, "events": g.events, "traces": g.traces, "disk": disk, "peak_rss": status_kib("self", "VmHWM") * 1024})


class Sampler:
    """Samples the RSS of this process, the JVM and the JVM's Python workers every 0.2 s."""

    def __init__(self, jvm_pid: int) -> None:
        self.jvm = jvm_pid
        self.peak = {"driver": 0, "jvm": 0, "workers": 0}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _children(self) -> dict[int, list[int]]:
        kids: dict[int, list[int]] = {}
        for d in Path("/proc").iterdir():
            if not d.name.isdigit():
                continue
            try:
                stat = (d / "stat").read_text()
                ppid = int(stat.rsplit(")", 1)[1].split()[1])
            except (OSError, ValueError, IndexError):
                continue
            kids.setdefault(ppid, []).append(int(d.name))
        return kids

    def _run(self) -> None:
        while not self._stop.wait(0.2):
            kids = self._children()
            todo, workers = list(kids.get(self.jvm, [])), 0
            while todo:
                pid = todo.pop()
                workers += status_kib(pid, "VmRSS")
                todo += kids.get(pid, [])
            now = {"driver": status_kib("self", "VmRSS"), "jvm": status_kib(self.jvm, "VmRSS"), "workers": workers}
            for k, v in now.items():
                self.peak[k] = max(self.peak[k], v * 1024)

    def stop(self) -> dict[str, int]:
        self._stop.set()
        self._thread.join()
        self.peak["driver"] = max(self.peak["driver"], status_kib("self", "VmHWM") * 1024)
        self.peak["jvm"] = max(self.peak["jvm"], status_kib(self.jvm, "VmHWM") * 1024)
        return self.peak


def baseline(spark: Any, staged: Path) -> float:
    """A plain Spark scan and groupBy of every staged table (the noop sink computes it all)."""
    from pyspark.sql import functions as F

    from spark_replay.checks import KEY
    from spark_replay.replay import load_tables
    from spark_replay.staged import staged_rows

    t = load_tables(spark, staged, staged_rows(staged))
    frames = [
        t.entries.groupBy(*KEY).agg(F.count("*"), F.max("base_offset"), F.max("producer_epoch")),
        t.txn_log.groupBy("trace_id", "txn_id").agg(F.count("*"), F.max("log_offset")),
        t.reads.groupBy("trace_id", "topic", "partition").agg(F.count("*"), F.max("offset")),
    ]
    t0 = time.perf_counter()
    for f in frames:
        f.write.format("noop").mode("overwrite").save()
    return time.perf_counter() - t0


def floor(spark: Any, staged: Path) -> float:
    """The least any ordered check costs: one window (lag) over the entries per (trace, partition,
    producer) ordered by offset, filtered and written to the noop sink. Every check of the suite that
    compares a row with the one before it (P1, P2, P3, C1, P5's runs) needs at least this shuffle and sort."""
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    from spark_replay.checks import KEY
    from spark_replay.replay import load_tables
    from spark_replay.staged import staged_rows

    t = load_tables(spark, staged, staged_rows(staged))
    w = Window.partitionBy(*KEY).orderBy("base_offset")
    f = t.entries.withColumn("prev", F.lag("base_seq").over(w)).where(F.col("prev").isNotNull() & (F.col("base_seq") <= F.col("prev")))
    t0 = time.perf_counter()
    f.write.format("noop").mode("overwrite").save()
    return time.perf_counter() - t0


MASTER_ENV = "TXCONFORM_BENCH_MASTER"  # --cluster: the local standalone cluster's master, for the suite's child


def session(work: Path) -> Any:
    from spark_replay.session import spark_session

    spark = spark_session(os.environ.get(MASTER_ENV) or "local[2]", log=work / "spark.log")
    r = spark.range(100_000)
    r.groupBy((r.id % 7).alias("k")).count().collect()  # warm up
    return spark


def child_suite(staged: Path, plan: str) -> None:
    import pyarrow.parquet as pq

    from spark_replay.generate import violation_key
    from spark_replay.staged import run_checks, staged_rows

    work = staged.parent
    load_before = loadavg()
    t0 = time.perf_counter()
    spark = session(work)
    startup = time.perf_counter() - t0
    sampler = Sampler(int(spark._jvm.java.lang.ProcessHandle.current().pid()))
    base1 = baseline(spark, staged)
    window = floor(spark, staged)
    marks: list[tuple[float, str]] = []
    out = work / f"out-{plan}"
    t0 = time.perf_counter()
    report = run_checks(staged, spark, out=out, progress=lambda s: marks.append((time.perf_counter(), s.split()[0])), plan=plan)
    suite = time.perf_counter() - t0
    marks.append((time.perf_counter(), "end"))
    base2 = baseline(spark, staged)
    peak = sampler.stop()
    found = set()
    for d in sorted((out / "violations").glob("*")) if (out / "violations").exists() else []:
        for row in pq.read_table(d).to_pylist():
            found.add((row["check"], row["kind"], violation_key(row)))
    planted = {(p["check"], p["kind"], tuple(p["key"])) for p in json.loads((work / "plants.json").read_text())}
    spark.stop()
    emit(
        {
            "startup": startup,
            "baseline": [base1, base2],
            "floor": window,
            "suite": suite,
            "checks": {a[1]: b[0] - a[0] for a, b in itertools.pairwise(marks)},
            "rows": staged_rows(staged),
            "outcomes": {o.id: [o.status, o.violations, o.entities] for o in report.outcomes},
            "missed": sorted(map(str, planted - found)),
            "extra": sorted(map(str, found - planted))[:20],
            "extra_count": len(found - planted),
            "planted": len(planted),
            "peak": peak,
            "load": [load_before, loadavg()],
        }
    )


def write_jsonl(staged: Path, path: Path) -> dict[str, Any]:
    """A txconform trace (JSONL) with the events of the generated tables: LeaderProduce and
    LeaderMarker appends (with log_end), TcAppend records, Fetch events. The trace adapter numbers
    partitions from 1 (0 is the offsets partition): partition p of topic i is i * 16 + p + 1."""
    import pyarrow.parquet as pq

    from ref_impl.kafka.sim.faults import Faults
    from ref_impl.kafka.sim.run import simulate
    from ref_impl.kafka.sim.workloads import Workload
    from spark_replay.generate import PARTITIONS_PER_TOPIC, TOPICS

    head, _ = simulate(Workload.parse("transfer"), Faults.parse("none"), 0, max_events=10)
    head = {**head, "generator": "scripts/bench_replay.py (from spark_replay.generate)"}
    tix = {t: i for i, t in enumerate(TOPICS)}

    def gpart(topic: str, p: int) -> int:
        return tix[topic] * PARTITIONS_PER_TOPIC + p + 1

    lines: list[tuple[int, str]] = []
    e = pq.read_table(staged / "entries").to_pydict()
    for i in range(len(e["event"])):
        ev = e["event"][i]
        base = (
            f'"partition":{gpart(e["topic"][i], e["partition"][i])},"producer_id":{e["producer_id"][i]},'
            f'"producer_epoch":{e["producer_epoch"][i]},"log_end":{e["base_offset"][i] + 1}'
        )
        if e["is_control"][i]:
            commit = "true" if e["control"][i] == "COMMIT" else "false"
            s = f'{{"event":{ev},"action":"LeaderMarker","actor":"leader",{base},"commit":{commit},"coordinator_epoch":{e["coord_epoch"][i]}}}'
        else:
            s = f'{{"event":{ev},"action":"LeaderProduce","actor":"leader","txn_id":"{e["txn_id"][i]}",{base},"seq":{e["base_seq"][i]},"error":"NONE"}}'
        lines.append((ev, s))
    t = pq.read_table(staged / "txn_log").to_pydict()
    for i in range(len(t["event"])):
        parts = [gpart(x["topic"], x["partition"]) for x in t["partitions"][i] or []]
        s = (
            f'{{"event":{t["event"][i]},"action":"TcAppend","actor":"coordinator","txn_id":"{t["txn_id"][i]}","producer_id":{t["producer_id"][i]},'
            f'"txn_state":"{t["state"][i]}","txn_epoch":{t["epoch"][i]},"txn_partitions":{json.dumps(parts)}}}'
        )
        lines.append((t["event"][i], s))
    r = pq.read_table(staged / "reads").sort_by([("event", "ascending"), ("offset", "ascending")]).to_pydict()
    i, n = 0, len(r["event"])
    while i < n:
        j = i
        while j < n and r["event"][j] == r["event"][i]:
            j += 1
        recs = [x for x in r["offset"][i:j] if x is not None]
        p = gpart(r["topic"][i], r["partition"][i])
        s = (
            f'{{"event":{r["event"][i]},"action":"Fetch","actor":"{r["process"][i]}","partition":{p},"isolation":"read_committed",'
            f'"from":{r["from_offset"][i]},"records":{json.dumps(recs)},"lso":{r["lso"][i]}}}'
        )
        lines.append((r["event"][i], s))
        i = j
    lines.sort()
    with path.open("w") as f:
        f.write(json.dumps(head) + "\n")
        for _, s in lines:
            f.write(s + "\n")
    return {"lines": len(lines), "bytes": path.stat().st_size}


def child_ingest(staged: Path) -> None:
    from spark_replay.adapters.traces import TRACE
    from spark_replay.staging import Stager

    work = staged.parent
    trace = work / "generated.jsonl"
    info = write_jsonl(staged, trace)
    spark = session(work)
    sampler = Sampler(int(spark._jvm.java.lang.ProcessHandle.current().pid()))
    target = work / "ingested"
    stager = Stager(target, lambda: spark)
    t0 = time.perf_counter()
    TRACE.stage([trace], stager)
    ingest = time.perf_counter() - t0
    base = baseline(spark, target)
    peak = sampler.stop()
    spark.stop()
    emit({**info, "ingest": ingest, "rows": {k: v for k, v in stager.rows.items() if v}, "baseline": base, "peak": peak, "load": loadavg()})


# --- the parent ---------------------------------------------------------------------------------


def run_child(args: list[str], timeout: float, log: Path) -> dict[str, Any] | None:
    """Run a --child step; its stderr (Spark's too) goes to ``log``."""
    cmd = [sys.executable, str(Path(__file__).resolve()), *args]
    env = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    t0 = time.perf_counter()
    try:
        with log.open("w") as err:
            proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=err, text=True, timeout=timeout, env=env)
    except subprocess.TimeoutExpired:
        print(f"bench_replay: {' '.join(args)}: no result within {timeout:.0f} s", file=sys.stderr, flush=True)
        return {"timeout": timeout}
    for line in proc.stdout.splitlines():
        if line.startswith("RESULT "):
            res: dict[str, Any] = json.loads(line[len("RESULT ") :])
            res["wall"] = time.perf_counter() - t0
            return res
    lines = [x for x in log.read_text(errors="replace").splitlines() if not x.startswith("\tat ")]
    print(f"bench_replay: {' '.join(args)} failed (exit {proc.returncode}), see {log}:\n" + "\n".join(lines[-40:]), file=sys.stderr, flush=True)
    return None


def parse_mem_mib(s: str) -> int:
    """Spark's memory notation (512m, 5g) in MiB."""
    units = {"k": 1 / 1024, "m": 1, "g": 1024, "t": 1024 * 1024}
    s = s.strip().lower().rstrip("b")
    if not s or s[-1] not in units or not s[:-1].isdigit():
        raise SystemExit(f"bench_replay: --executor-memory {s!r} is not like 512m or 5g")
    return int(int(s[:-1]) * units[s[-1]])


def mib(n: float) -> str:
    return f"{n / MiB:,.0f}"


def rate(n: float, s: float) -> str:
    return f"{n / s:,.0f}" if s > 0 else "-"


def tables(results: list[dict[str, Any]], ingest: dict[str, Any] | None) -> str:
    lines = [
        "| events (rows) | traces | generation (s) | generated rows/s | Parquet (MiB) | plan | baseline scan + groupBy (s) | check suite (s) "
        "| suite events/s | suite / baseline | one window (s) | window / baseline | planted found | other violations | load (1 min) at start / end |",
        "|---:|---:|---:|---:|---:|---|---:|---:|---:|---:|---:|---:|---|---:|---|",
    ]
    for r in results:
        g, s = r["gen"], r.get("suite")
        head = f"| {g['events']:,} | {g['traces']} | {g['seconds']:.1f} | {rate(g['events'], g['seconds'])} | {mib(g['disk'])} | {r['plan']} "
        if not s or "timeout" in s:
            why = f"no result within {s['timeout']:.0f} s" if s else "failed"
            lines.append(head + f"| - | {why} | - | - | - | - | - | - | - |")
            continue
        b = min(s["baseline"])
        found = f"{s['planted'] - len(s['missed'])} of {s['planted']}"
        lines.append(
            head + f"| {b:.1f} | {s['suite']:.1f} | {rate(g['events'], s['suite'])} | {s['suite'] / b:.1f} "
            f"| {s['floor']:.1f} | {s['floor'] / b:.1f} | {found} | {s['extra_count']} "
            f"| {s['load'][0].split()[0]} / {s['load'][1].split()[0]} |"
        )
    out = "\n".join(lines)
    done = [r for r in results if r.get("suite") and "timeout" not in r["suite"]]
    if done:
        ids = list(done[0]["suite"]["checks"])
        out += "\n\nEach check's time in the suite (s; the first check also computes the shared derivation, cached for the others):\n\n"
        out += "| check | " + " | ".join(f"{size_label(r['size'])} {r['plan']}" for r in done) + " |\n|---|" + "---:|" * len(done) + "\n"
        for c in ids:
            out += f"| {c} | " + " | ".join(f"{r['suite']['checks'].get(c, 0):.1f}" for r in done) + " |\n"
        if os.environ.get(MASTER_ENV):
            out += (
                "\nMemory (peak RSS, MiB): the generator's process; in the replay's, the Python driver and the driver's JVM (4 GiB "
                "of heap); the executors' JVMs and their Python workers run under the cluster's workers and are not sampled "
                "(the Python workers column is what the driver's JVM started, none):\n\n"
            )
        else:
            out += (
                "\nMemory (peak RSS, MiB): the generator's process; in the replay's, the Python driver, the JVM (driver and executor: "
                "`local[2]`, the heap spark_replay/session.py gives the driver: a quarter of the memory, 1 to 8 GiB), the Python workers together:\n\n"
            )
        out += "| events | plan | generator | Python driver | JVM | Python workers |\n|---:|---|---:|---:|---:|---:|\n"
        for r in done:
            p = r["suite"]["peak"]
            out += f"| {r['gen']['events']:,} | {r['plan']} | {mib(r['gen']['peak_rss'])} | {mib(p['driver'])} | {mib(p['jvm'])} | {mib(p['workers'])} |\n"
        for r in done:
            s = r["suite"]
            if s["missed"] or s["extra_count"]:
                out += f"\n{size_label(r['size'])} --plan {r['plan']}: planted but not found: {s['missed'] or 'none'}; "
                out += f"found but not planted ({s['extra_count']}): {s['extra'] or 'none'}\n"
    if ingest and "timeout" not in ingest:
        staged = sum(ingest["rows"].values())
        out += (
            "\nJSONL ingest (the same events as a txconform trace, staged by the trace adapter), against a baseline over what it staged:\n\n"
            "| trace lines | JSONL (MiB) | staged rows | ingest (s) | lines/s | baseline scan + groupBy (s) | ingest / baseline | load (1 min) |\n"
            "|---:|---:|---:|---:|---:|---:|---:|---|\n"
            f"| {ingest['lines']:,} | {mib(ingest['bytes'])} | {staged:,} | {ingest['ingest']:.1f} | {rate(ingest['lines'], ingest['ingest'])} "
            f"| {ingest['baseline']:.1f} | {ingest['ingest'] / ingest['baseline']:.1f} | {ingest['load'].split()[0]} |\n"
        )
    return out


def goals(results: list[dict[str, Any]]) -> str:
    """The goals, judged on the default plan (pass) when it ran, else on what ran."""
    done = [r for r in results if r.get("suite") and "timeout" not in r["suite"]]
    plans = {r["plan"] for r in done}
    done = [r for r in done if r["plan"] == ("pass" if "pass" in plans else r["plan"])]
    if not done:
        return ""
    rows = ["| goal (issue 19) | measured | met |", "|---|---|---|"]
    worst = max(r["suite"]["suite"] / min(r["suite"]["baseline"]) for r in done)
    rows.append(f"| suite within {GOAL_RATIO:.0f}x of the baseline scan | {worst:.1f}x at worst | {'yes' if worst <= GOAL_RATIO else 'no'} |")
    fl = [r["suite"]["floor"] / min(r["suite"]["baseline"]) for r in done]
    fast = max(r["gen"]["events"] / r["suite"]["floor"] for r in done)
    rows.append(
        f"| (what bounds it: one ordered window over the entries alone) | {min(fl):.1f}x to {max(fl):.1f}x the baseline, {fast:,.0f} events/s at best | - |"
    )
    best = max(r["gen"]["events"] / r["suite"]["suite"] for r in done)
    rows.append(f"| at least 1M events/s from Parquet on 2 cores | {best:,.0f} events/s at best | {'yes' if best >= GOAL_RATE else 'no'} |")
    if len(done) > 1:
        a, b = done[0], done[-1]
        grow = b["gen"]["events"] / a["gen"]["events"]
        took = b["suite"]["suite"] / a["suite"]["suite"]
        rows.append(f"| linear in size | {grow:.0f}x the events took {took:.1f}x the time | {'yes' if took <= 1.25 * grow else 'no'} |")
        d = [r["suite"]["peak"]["driver"] for r in done]
        j = [r["suite"]["peak"]["jvm"] for r in done]
        flat = max(d) <= 1.25 * min(d)
        rows.append(
            f"| driver memory flat | Python {mib(min(d))} to {mib(max(d))} MiB, JVM {mib(min(j))} to {mib(max(j))} MiB "
            f"| {'yes' if flat else 'no'} (Python driver) |"
        )
    ok = all(not r["suite"]["missed"] and not r["suite"]["extra_count"] for r in done)
    rows.append(f"| every planted violation found, and no other | {'at every size' if ok else 'see above'} | {'yes' if ok else 'no'} |")
    rows += ["", "| goal (issue 53) | measured | met |", "|---|---|---|"]
    for r in done:
        ratio = r["suite"]["suite"] / r["suite"]["floor"]
        rows.append(
            f"| {size_label(r['size'])}: suite within {GOAL_WINDOW_RATIO:.0f}x one ordered window | {ratio:.1f}x ({r['suite']['suite']:.1f} s against "
            f"{r['suite']['floor']:.1f} s) | {'yes' if ratio <= GOAL_WINDOW_RATIO else 'no'} |"
        )
    big = [r for r in done if r["size"] >= 100_000_000]
    if big:
        speed = max(r["gen"]["events"] / r["suite"]["suite"] for r in big)
        rows.append(f"| at least {GOAL_RATE_100M:,} events/s at 100M | {speed:,.0f} events/s | {'yes' if speed >= GOAL_RATE_100M else 'no'} |")
    else:
        rows.append(f"| at least {GOAL_RATE_100M:,} events/s at 100M | not run (sizes {', '.join(size_label(r['size']) for r in done)}) | - |")
    return "\n".join(rows)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1M,10M", help="events per run, e.g. 1M,10M,100M")
    parser.add_argument("--timeout", type=float, default=1800, help="seconds a generation or suite may take")
    parser.add_argument("--plans", default="pass", help="the check plans to run at each size (replay --plan): pass, windows or pass,windows")
    parser.add_argument("--no-ingest", action="store_true", help="skip the JSONL ingest")
    parser.add_argument("--print", action="store_true", help="print only; do not rewrite docs/benchmarks.md")
    parser.add_argument("--work", type=Path, help="working directory (default: a temporary one, removed at the end)")
    parser.add_argument("--cluster", type=int, default=0, metavar="N",
                        help="run the suites on a Spark standalone cluster on 127.0.0.1 of N workers of one core each "
                        "(spark_replay/cluster.py) instead of local[2]; recorded in its own section")
    parser.add_argument("--executor-memory", default="5g", help="with --cluster: each worker's memory and its executor's heap")
    parser.add_argument("--child", nargs=2, metavar=("WHAT", "ARG"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        what, arg = args.child
        if what == "generate":
            size, staged = arg.split(":", 1)
            child_generate(int(size), Path(staged))
        elif what == "suite":
            staged, plan = arg.rsplit(":", 1)
            child_suite(Path(staged), plan)
        else:
            child_ingest(Path(arg))
        return 0

    sizes = [parse_size(s) for s in args.sizes.split(",")]
    work = args.work or Path(tempfile.mkdtemp(prefix="txconform-bench-replay-"))
    work.mkdir(parents=True, exist_ok=True)
    uptime_start = subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()
    results: list[dict[str, Any]] = []
    ingest = None
    cluster = None
    if args.cluster:
        from spark_replay.cluster import start_local_cluster

        # each worker offers its memory whole; the executor's heap leaves it a sixth for Python and overhead
        cluster = start_local_cluster(work / "cluster-logs", cores=1, memory=args.executor_memory, timeout=120.0, workers=args.cluster)
        heap = f"{int(parse_mem_mib(args.executor_memory) * 5 / 6)}m"
        os.environ[MASTER_ENV] = cluster.master_url
        os.environ["PYSPARK_SUBMIT_ARGS"] = f"--driver-memory 4g --conf spark.executor.memory={heap} pyspark-shell"
        print(f"bench_replay: cluster {cluster.master_url}, {args.cluster} worker(s) of 1 core, executors of {heap}", flush=True)
    try:
        for size in sizes:
            d = work / size_label(size)
            shutil.rmtree(d, ignore_errors=True)
            d.mkdir(parents=True)
            print(f"bench_replay: {size_label(size)}: generating (load {loadavg()})", flush=True)
            gen = run_child(["--child", "generate", f"{size}:{d / 'staged'}"], args.timeout, work / f"{size_label(size)}-generate.log")
            if not gen or "timeout" in gen:
                print(f"bench_replay: {size_label(size)}: the generation gave no result", flush=True)
                break
            print(f"bench_replay: {size_label(size)}: {gen['events']:,} rows in {gen['seconds']:.1f} s; checking (load {loadavg()})", flush=True)
            for plan in args.plans.split(","):
                suite = run_child(["--child", "suite", f"{d / 'staged'}:{plan}"], args.timeout, work / f"{size_label(size)}-{plan}-suite.log")
                results.append({"size": size, "plan": plan, "gen": gen, "suite": suite})
                if suite and "timeout" not in suite:
                    print(
                        f"bench_replay: {size_label(size)} --plan {plan}: suite {suite['suite']:.1f} s, baseline {min(suite['baseline']):.1f} s, "
                        f"checks {json.dumps({k: round(v, 1) for k, v in suite['checks'].items()})}, missed {suite['missed']}, "
                        f"extra {suite['extra_count']}, peak {json.dumps({k: v // MiB for k, v in suite['peak'].items()})} MiB, load {suite['load']}",
                        flush=True,
                    )
            if size != sizes[0]:
                shutil.rmtree(d, ignore_errors=True)
        if not args.no_ingest and results:
            print(f"bench_replay: JSONL ingest at {size_label(sizes[0])} (load {loadavg()})", flush=True)
            ingest = run_child(["--child", "ingest", str(work / size_label(sizes[0]) / "staged")], args.timeout, work / "ingest.log")
            if ingest and "timeout" not in ingest:
                print(f"bench_replay: ingest {ingest['lines']:,} lines in {ingest['ingest']:.1f} s, baseline {ingest['baseline']:.1f} s", flush=True)
    finally:
        if cluster is not None:
            cluster.stop()
        if not args.work:
            shutil.rmtree(work, ignore_errors=True)
    uptime_end = subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()
    today = datetime.date.today().isoformat()
    body = (
        f"Measured {today} on: {machine()}.\nCommand: `python scripts/bench_replay.py --sizes {args.sizes} --plans {args.plans}"
        + (f" --cluster {args.cluster} --executor-memory {args.executor_memory}" if args.cluster else "") + "`.\n"
        f"`uptime` before: `{uptime_start}`; after: `{uptime_end}`.\n\n" + tables(results, ingest) + "\n" + goals(results) + "\n"
    )
    return record("replay-cluster" if args.cluster else "replay", body, args.print, "bench_replay")


if __name__ == "__main__":
    sys.exit(main())
