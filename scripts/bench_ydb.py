#!/usr/bin/env python3
"""Benchmarks of YDB Topics transactions (issue 18), next to Kafka's, recorded in docs/benchmarks.md.

    python scripts/bench_ydb.py            measure everything, rewrite the bench:ydb section
    python scripts/bench_ydb.py --print    measure and print only
    python scripts/bench_ydb.py --quick    skip the bug zoo and the mutation score (keep the recorded ones)

Measures: every YDB model of tier ci (specs/ydb/models.toml) with TLC, against issue 18's budgets
(each violating model within 60 s, each holding one within 10 minutes); events per second of the
YDB simulator and of Kafka's; validation time of YDB and Kafka traces of 100, 1,000 and 10,000
events (issue 18's target: a 10,000-event YDB trace in under 30 s); for each bug of the YDB zoo,
how many generated runs it took until the checker caught one; the YDB mutation score.

Other jobs may share the machine, so YDB and Kafka are measured in the same run, each YDB figure
next to Kafka's at the same size, and the load average is recorded with every table.
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import attrs

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "scripts"))

from bench_models import DOC, HEADER, measure, record, row, stamp, warn_if_unpinned  # noqa: E402
from bench_traces import mutation_section  # noqa: E402
from hypothesis import HealthCheck, Phase, given, settings  # noqa: E402

from ref_impl.kafka.protocol import PROTOCOL as KAFKA  # noqa: E402
from ref_impl.kafka.sim.strategies import seeds  # noqa: E402
from ref_impl.ydb.protocol import PROTOCOL as YDB  # noqa: E402
from ref_impl.ydb.zoo import ZOO, ZooBug  # noqa: E402
from trace_check.models.registry import load_registries  # noqa: E402
from trace_check.traces.format import write_trace  # noqa: E402
from trace_check.traces.options import CheckOptions  # noqa: E402
from trace_check.traces.protocol import Protocol, SimulateOptions  # noqa: E402
from trace_check.traces.reader import Trace, read_trace  # noqa: E402
from trace_check.traces.validation import check_trace  # noqa: E402
from trace_check.traces.verdicts import Status, Verdict  # noqa: E402

REGISTRY = ROOT / "specs" / "ydb" / "models.toml"
VIOLATING_BUDGET = 60.0  # issue 18: each violating YDB model's counterexample within 60 s
HOLDING_BUDGET = 600.0  # and each holding one within 10 minutes at CI bounds
MODEL_TIMEOUT = 1200  # longer than either budget, so that a model over its budget still gets a time
# Kafka models measured in the same run, against their times in the models table (bench:models):
# how much slower the shared machine was than when that table was measured, with one TLC worker
# (a model of as many states as the larger violating YDB models) and with two.
KAFKA_REFERENCES = {1: "kafka_no_group_fencing", 2: "kafka_ctp_group_fencing"}

# The simulated runs: two workers copy topic A (1 partition) to topic B (2 partitions) and a table
# row, with one fault of each kind. The traces checked with TLC bound MaxTxns to 250 (the
# 10,000-event run begins 238 transactions): TLC overflows its stack on a YDB trace of a larger
# bound, always at MaxTxns 1,000 and now and then at 500 (PqCalc's \A over every transaction is
# expanded conjunct by conjunct, a few stack frames per transaction). The simulation rate is
# measured with MaxTxns 500, which 20,000 events need.
YDB_WORKLOAD = "copy:msgs=4000,txns=500,table=true"
YDB_TRACE_WORKLOAD = "copy:msgs=4000,txns=250,table=true"
KAFKA_WORKLOAD = "transfer:ids=3,txns=5000,aborts=true"  # bench_traces.py's
FAULTS = "all"
SIM_EVENTS = 20_000
SIZES = (100, 1_000, 10_000)
EVERY_STEP_UP_TO = 2_000  # check_trace's default: invariants after every event up to here, at the end beyond
TARGET_EVENTS, TARGET_SECONDS = 10_000, 30.0
REPEATS = 3  # each YDB/Kafka pair of checks

ZOO_BUDGET = 100  # partition_reapply needs a restart between two partitions' commits: about 1 run in 20
MUTATION_TRACES = [  # (workload, faults, seed)
    ("copy:workers=1,table=true", "none", 1),
    ("copy", "hangs=1", 3),
    ("copy:workers=1,dst=2", "restarts=1,loss=1", 2),
    ("copy:table=true", "all", 4),
    # issue 50's operations: ReadMore, UpdateOffsets (BAD_REQUEST too); OtherProducerWrite, ForceClose, Split
    ("copy:workers=1,shapes=read,ranges=1,reads=2", "none", 1),
    ("copy:workers=2,dst=2,shapes=copy+write,producers=partition,others=1,close=true", "splits=1", 3),
]
MUTANTS_PER_TRACE = 25


def load() -> str:
    """The load average, as `uptime` gives it."""
    one, five, fifteen = os.getloadavg()
    return f"{one:.2f}, {five:.2f}, {fifteen:.2f}"


def loads(before: str) -> str:
    return f"Load average (1, 5, 15 min) before: {before}; after: {load()} ({os.cpu_count()} cores)."


def run(protocol: Protocol, workload: str, seed: int, max_events: int, faults: str = FAULTS, bugs: str = "") -> Any:
    return protocol.simulate(SimulateOptions(seed=seed, workload=workload, faults=faults, bugs=bugs, max_events=max_events))


def save(protocol: Protocol, sim: Any, path: Path) -> Trace:
    write_trace(path, sim.header, sim.events, protocol.columns.order)
    return read_trace(path)


def ratio(a: float, b: float) -> str:
    return f"{a / b:.2f}" if b > 0 else "-"


# --- 1. model checking ---


def recorded_kafka_validation() -> float | None:
    """The wall time of the 10,000-event Kafka trace in the Kafka trace table (bench:traces)."""
    m = re.search(r"^\| 10,0\d\d \| at the end \| accepted \| [0-9,]+ \| ([0-9.]+) s \|$", DOC.read_text(encoding="utf-8"), re.MULTILINE)
    return float(m.group(1)) if m else None


def recorded_time(model: str) -> float | None:
    """The model's wall time in the models table (bench:models), if it is there."""
    m = re.search(rf"^\| `{re.escape(model)}` \|.*\| ([0-9.]+) \| [0-9,-]+ \|$", DOC.read_text(encoding="utf-8"), re.MULTILINE)
    return float(m.group(1)) if m else None


def reference_slowdowns() -> tuple[dict[int, float], list[str]]:
    """Measure each Kafka reference model; how many times as slow as in the models table it ran."""
    kafka = load_registries([ROOT / "specs" / "kafka" / "models.toml"])
    slow: dict[int, float] = {}
    said = []
    for workers, name in sorted(KAFKA_REFERENCES.items()):
        (model,) = kafka.select([name])
        r = measure(attrs.evolve(model.task, timeout=MODEL_TIMEOUT))
        then = recorded_time(name)
        if then and r.verdict == model.expect:
            slow[workers] = r.wall_time / then
        said.append(f"`{name}` ({workers} TLC worker{'s' if workers > 1 else ''}): {r.verdict}, {r.wall_time:.1f} s"
                    + (f" against {then:.1f} s, {r.wall_time / then:.2f} times as slow" if then else ""))
        print(said[-1], flush=True)
    return slow, said


def models_table() -> str:
    before = load()
    first, said_before = reference_slowdowns()
    reg = load_registries([REGISTRY])
    header = HEADER.replace("| states/s |", "| states/s | budget (issue 18) | within budget | scaled time (s) | within budget, scaled |", 1)
    header += "---:|---|---:|---|"
    results = []
    for model in reg.select([], "ci"):
        r = measure(attrs.evolve(model.task, timeout=MODEL_TIMEOUT))
        warn_if_unpinned(model, r)
        results.append((model, r))
        print(row(f"`{model.name}`", model.expect, r, model.task.tlc.workers), flush=True)
    last, said_after = reference_slowdowns()
    slow = {w: (first[w] + last[w]) / 2 for w in first if w in last}
    rows, missed, missed_scaled = [], [], []
    total = holding = violating = 0.0
    for model, r in results:
        total += r.wall_time
        budget = HOLDING_BUDGET if model.expect == "holds" else VIOLATING_BUDGET
        if model.expect == "holds":
            holding = max(holding, r.wall_time)
        else:
            violating = max(violating, r.wall_time)
        right = r.verdict == model.expect
        ok = right and r.wall_time <= budget
        factor = slow.get(model.task.tlc.workers)
        scaled = r.wall_time / factor if factor else None
        ok_scaled = right and scaled is not None and scaled <= budget
        missed += [] if ok else [model.name]
        missed_scaled += [] if ok_scaled else [model.name]
        rows.append(row(f"`{model.name}`", model.expect, r, model.task.tlc.workers)
                    + f" {budget:.0f} s | {'yes' if ok else '**no**'} | {f'{scaled:.1f}' if scaled else '-'} | "
                    + ("yes |" if ok_scaled else "**no** |"))
    verdict = (f"All {len(rows)} YDB models together: {total:.1f} s. Slowest violating model: {violating:.1f} s (budget "
               f"{VIOLATING_BUDGET:.0f} s); slowest holding model: {holding:.1f} s (budget {HOLDING_BUDGET:.0f} s). "
               + ("Measured, every model has its expected outcome within its budget. " if not missed
                  else f"Measured, outcome or budget missed: {', '.join(f'`{m}`' for m in missed)}. ")
               + ("Scaled, every model is within its budget." if not missed_scaled
                  else f"Scaled, missed: {', '.join(f'`{m}`' for m in missed_scaled)}."))
    ref = ("Kafka reference models, measured in the same run before and after the YDB models, against their times in the "
           "models table above: before, " + "; ".join(said_before) + "; after, " + "; ".join(said_after) + ". "
           "The scaled time divides a YDB model's time by the mean slowdown of the reference with as many TLC workers: "
           "an estimate of its time on the machine the models table was measured on.")
    return "\n".join([header, *rows, "", verdict, "", ref, "", loads(before)])


# --- 2. simulation ---


def simulation_rates() -> str:
    before = load()
    out = ["| simulator | workload | events (median) | events per second (median of 3 seeds) |", "|---|---|---:|---:|"]
    rates: dict[str, float] = {}
    for protocol, workload in ((YDB, YDB_WORKLOAD), (KAFKA, KAFKA_WORKLOAD)):
        r, n = [], []
        for seed in range(3):
            t0 = time.perf_counter()
            sim = run(protocol, workload, seed, SIM_EVENTS)
            r.append(len(sim.events) / (time.perf_counter() - t0))
            n.append(len(sim.events))
        rates[protocol.name] = statistics.median(r)
        out.append(f"| {protocol.name} | `simulate --protocol {protocol.name} --workload {workload} --faults {FAULTS} "
                   f"--max-events {SIM_EVENTS}` | {statistics.median(n):,.0f} | {rates[protocol.name]:,.0f} |")
        print(out[-1], flush=True)
    out += ["", f"YDB/Kafka events per second: {ratio(rates['ydb'], rates['kafka'])}.", "", loads(before)]
    return "\n".join(out)


# --- 3. trace validation ---


def validate(trace: Trace, every: bool) -> Verdict:
    v = check_trace(trace, CheckOptions(engine="tlc", every_step=every))
    if v.status is Status.ERROR:
        print(f"bench_ydb: {trace.path.name}: {v.message}", file=sys.stderr, flush=True)
    return v


def statuses(verdicts: Any) -> str:
    found = sorted({v.status.value for v in verdicts})
    return " / ".join(found)


def validation_times(tmp: Path) -> tuple[str, float | None]:
    """YDB and Kafka traces of each size, checked one after the other (YDB first) REPEATS times, so
    each pair shares the machine's load; the median times, and the median of the pairs' ratios."""
    before = load()
    out = [f"| events (YDB / Kafka) | invariants checked | YDB verdict | YDB distinct states | YDB wall time (median of {REPEATS}) | "
           f"Kafka verdict | Kafka distinct states | Kafka wall time (median of {REPEATS}) | YDB/Kafka (median of {REPEATS} pairs) | load (1 min) |",
           "|---|---|---|---:|---:|---|---:|---:|---:|---:|"]
    target: float | None = None
    kafka_target: float | None = None
    tight = ""
    for n in SIZES:
        ydb_run = run(YDB, YDB_TRACE_WORKLOAD, 1, n)
        ydb = save(YDB, ydb_run, tmp / f"ydb-{n}.jsonl")
        kafka = save(KAFKA, run(KAFKA, KAFKA_WORKLOAD, 1, n), tmp / f"kafka-{n}.jsonl")
        for every in sorted({n <= EVERY_STEP_UP_TO, False}, reverse=True):
            pairs = [(validate(ydb, every), validate(kafka, every)) for _ in range(REPEATS)]
            vy, vk = pairs[0]
            ty = statistics.median(p[0].wall_time for p in pairs)
            tk = statistics.median(p[1].wall_time for p in pairs)
            r = statistics.median(p[0].wall_time / p[1].wall_time for p in pairs)
            if n == TARGET_EVENTS and not every:
                target = ty if all(p[0].ok for p in pairs) else None
                kafka_target = tk if all(p[1].ok for p in pairs) else None
            out.append(f"| {len(ydb.events):,} / {len(kafka.events):,} | {'after every event' if every else 'at the end'} | "
                       f"{statuses(p[0] for p in pairs)} | {vy.distinct_states or 0:,} | {ty:.1f} s | "
                       f"{statuses(p[1] for p in pairs)} | {vk.distinct_states or 0:,} | {tk:.1f} s | "
                       f"{r:.2f} | {os.getloadavg()[0]:.1f} |")
            print(out[-1], flush=True)
        if n == TARGET_EVENTS:
            # The same run with MaxTxns 500: what the bound costs (and whether TLC's stack holds).
            used = max(int(e["txn_id"]) for e in ydb_run.events if e.get("txn_id") is not None)
            same_run = run(YDB, YDB_WORKLOAD, 1, n)
            if same_run.events == ydb_run.events:
                vt = validate(save(YDB, same_run, tmp / f"ydb-{n}-500.jsonl"), False)
                what = "TLC overflowed its stack" if "StackOverflowError" in vt.message else vt.message
                tight = (f"The same {len(same_run.events):,} YDB events (the run begins {used} transactions) with MaxTxns 500 "
                         f"instead of 250: {vt.status.value}" + (f" ({what})" if vt.status is Status.ERROR else "")
                         + f", {vt.wall_time:.1f} s (load {os.getloadavg()[0]:.1f}).")
                print(tight, flush=True)
    y = f"YDB: `simulate --protocol ydb --workload {YDB_TRACE_WORKLOAD} --faults {FAULTS} --seed 1 --max-events N`"
    k = f"Kafka: `simulate --workload {KAFKA_WORKLOAD} --faults {FAULTS} --seed 1 --max-events N`"
    out += ["", f"Traces: {y}; {k}. TLC with one worker."]
    if tight:
        out += ["", tight]
    met = target is not None and target < TARGET_SECONDS
    out += ["", f"Target (issue 18): a {TARGET_EVENTS:,}-event YDB trace checked in under {TARGET_SECONDS:.0f} s: "
            + ("**met**" if met else "**not met**") + (f" ({target:.1f} s)." if target is not None else " (no verdict).")]
    idle = recorded_kafka_validation()
    if target is not None and kafka_target and idle:
        out[-1] += (f" Kafka's trace of the same length took {kafka_target:.1f} s here and {idle:.1f} s in the Kafka table above "
                    f"(bench:traces); at that pace the YDB trace would take about {target / kafka_target * idle:.0f} s.")
    out += ["", loads(before)]
    return "\n".join(out), target


# --- 4. the bug zoo and the mutation score ---


class _Caught(Exception):
    pass


def runs_to_detection(bug: ZooBug, budget: int, tmp: Path) -> tuple[int | None, str]:
    """Hypothesis generates seeds (derandomized, so the count is the same on every machine) for the
    bug's workload, fault budgets and bug switches; each run is checked; the count of the first run
    the checker rejects, with the action of the event it rejected. A trace byte for byte the same as
    one already checked gets that check's verdict (it still counts as a run). Hypothesis runs the
    failing example once more before it raises: the count is taken at the first catch."""
    count = 0
    caught: int | None = None
    checked: dict[bytes, Verdict] = {}
    at = ""

    @settings(max_examples=budget, deadline=None, derandomize=True, database=None, phases=[Phase.generate],
              suppress_health_check=[HealthCheck.too_slow])
    @given(seed=seeds())
    def search(seed: int) -> None:
        nonlocal count, at, caught
        count += 1
        path = tmp / f"zoo-{bug.name}-{seed}.jsonl"
        trace = save(YDB, run(YDB, bug.workload, seed, 100_000, bug.faults, "+".join(bug.bugs)), path)
        key = path.read_bytes()
        if key not in checked:
            checked[key] = check_trace(trace, CheckOptions(engine="tlc", timeout=300))
        v = checked[key]
        if v.status is Status.ERROR:
            raise RuntimeError(f"{bug.name}, seed {seed}: {v.message}")
        if v.status is Status.REJECTED:
            if caught is None:
                caught, at = count, str(v.event["action"]) if v.event else "?"
            raise _Caught()

    try:
        search()
    except _Caught:
        return caught, at
    return None, ""


def zoo_table(tmp: Path) -> str:
    before = load()
    t0 = time.perf_counter()
    rows = ["| bug | workload | faults | rejected at (zoo) | runs until caught | rejected at (first caught run) |",
            "|---|---|---|---|---:|---|"]
    for bug in ZOO:
        n, at = runs_to_detection(bug, ZOO_BUDGET, tmp)
        rows.append(f"| `{bug.name}` | `{bug.workload}` | {bug.faults} | {bug.rejected_at} | "
                    f"{n if n is not None else f'not caught in {ZOO_BUDGET}'} | {at or '-'} |")
        print(rows[-1], flush=True)
    rows += ["", f"Hypothesis generates the seed (derandomized), at most {ZOO_BUDGET} runs per bug; every trace is "
             f"checked with TLC against the correct spec; {time.perf_counter() - t0:.0f} s in all.", "", loads(before)]
    return "\n".join(rows)


def mutation_table(tmp: Path) -> str:
    before = load()
    traces = []
    for w, f, seed in MUTATION_TRACES:
        traces.append(save(YDB, run(YDB, w, seed, 100_000, f), tmp / f"mut-{seed}.jsonl"))
    return mutation_section(traces, MUTATION_TRACES, MUTANTS_PER_TRACE, tmp, lambda: loads(before))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--print", action="store_true", help="print only; do not rewrite docs/benchmarks.md")
    parser.add_argument("--quick", action="store_true",
                        help="skip the bug zoo and the mutation score; keep the recorded ones")
    args = parser.parse_args()
    start = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="txconform-bench-ydb-") as t:
        tmp = Path(t)
        parts = ["### Model checking: the YDB models of tier ci", "", models_table()]
        parts += ["", "### Simulation", "", simulation_rates()]
        parts += ["", "### Trace validation, YDB next to Kafka", "", validation_times(tmp)[0]]
        if not args.quick:
            parts += ["", "### YDB bug zoo: generated runs until the checker catches the bug", "", zoo_table(tmp)]
            parts += ["", "### YDB mutation score", "", mutation_table(tmp)]
    text = DOC.read_text(encoding="utf-8")
    if args.quick and "<!-- bench:ydb -->" in text:  # keep what was recorded for the zoo and the mutation score
        begin = text.index("<!-- bench:ydb -->")
        old = text[begin : text.index("<!-- /bench -->", begin)]
        if "### YDB bug zoo" in old:
            when = re.search(r"Measured (\S+) on", old)
            kept = re.sub(r"\n+The whole run: .*$", "", old[old.index("### YDB bug zoo") :].rstrip("\n"))
            parts += ["", f"The zoo and the mutation score below are from the last full run{f' ({when.group(1)})' if when else ''}:", "", kept]
    command = "python scripts/bench_ydb.py" + (" --quick" if args.quick else "")
    body = stamp(command) + "\n".join(parts) + f"\n\nThe whole run: {time.perf_counter() - start:.0f} s."
    return record("ydb", body, args.print, "bench_ydb")


if __name__ == "__main__":
    sys.exit(main())
