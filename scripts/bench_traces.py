#!/usr/bin/env python3
"""Benchmarks of the reference broker and trace validation, recorded in docs/benchmarks.md.

    python scripts/bench_traces.py            measure everything, rewrite the bench:traces section
    python scripts/bench_traces.py --print    measure and print only
    python scripts/bench_traces.py --quick    skip the bug zoo and the mutation score
    python scripts/bench_traces.py --zoo      measure the bug zoo only, keep the other tables
    python scripts/bench_traces.py --scale    long traces (issue 24): time and peak memory of checks in
                                              windows, after every event and at the end; section bench:scale
    python scripts/bench_traces.py --python-side  what a check does in Python alone (reading, the
                                              broker's replay), up to 1,000,000 events; section bench:python-side

Measures: simulation events per second; validation time of traces of 100, 1,000 and 10,000
events (target: 10,000 in under 30 s with TLC on 2 cores); for each bug of the zoo, how many
hypothesis-generated runs it took until the checker caught one; the mutation score.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "scripts"))

from bench_models import DOC, record, stamp  # noqa: E402
from zoo_search import examples_to_detection  # noqa: E402

from ref_impl.kafka.sim.faults import Faults  # noqa: E402
from ref_impl.kafka.sim.run import simulate, simulate_to, write_trace  # noqa: E402
from ref_impl.kafka.sim.workloads import Workload  # noqa: E402
from ref_impl.kafka.sim.zoo import ZOO  # noqa: E402
from trace_check.traces.mutation import mutation_report  # noqa: E402
from trace_check.traces.options import CheckOptions  # noqa: E402
from trace_check.traces.reader import read_trace  # noqa: E402
from trace_check.traces.validation import check_trace  # noqa: E402

BIG = Workload.parse("transfer:ids=3,txns=5000,aborts=true")
FAULTS = Faults.parse("all")
ZOO_BUDGET = 40
MUTATION_TRACES = [
    ("transfer:version=TV1,aborts=true", "all", 1),
    ("transfer:aborts=true", "all", 2),
    ("ctp:ids=2,aborts=true", "all", 3),
    ("ctp:version=TV1", "all", 4),
    ("transfer:ids=2,version=TV1", "loss=1,late=EndTxn+Produce,retries=2", 5),
    ("transfer", "hangs=1,failovers=1", 6),
]
MUTANTS_PER_TRACE = 25


def simulation_rate() -> str:
    rates = []
    for seed in range(3):
        t0 = time.perf_counter()
        _, events = simulate(BIG, FAULTS, seed, max_events=20_000)
        rates.append(len(events) / (time.perf_counter() - t0))
    return (
        "| what | events | events per second (median of 3 seeds) |\n|---|---:|---:|\n"
        f"| `simulate --workload {BIG.describe()} --faults all`, 20,000 events | 20,000 | {statistics.median(rates):,.0f} |"
    )


def validation_times(tmp: Path) -> str:
    rows = ["| events | invariants checked | verdict | distinct states | wall time |", "|---:|---|---|---:|---:|"]
    for n in (100, 1_000, 10_000):
        head, events = simulate(BIG, FAULTS, 1, max_events=n)
        path = tmp / f"trace-{n}.jsonl"
        write_trace(path, head, events)
        trace = read_trace(path)
        for every in sorted({len(events) <= 2000, False}, reverse=True):
            v = check_trace(trace, CheckOptions(every_step=every))
            rows.append(
                f"| {len(events):,} | {'after every event' if every else 'at the end'} | {v.status} | "
                f"{v.distinct_states or 0:,} | {v.wall_time:.1f} s |"
            )
            print(rows[-1], flush=True)
    return "\n".join(rows)


def zoo_table(tmp: Path) -> str:
    rows = ["| bug | workload | faults hypothesis schedules | checker must say | runs until caught |", "|---|---|---|---|---:|"]
    for bug in ZOO:
        n = examples_to_detection(bug, ZOO_BUDGET, tmp)
        kinds = ", ".join(bug.fault_kinds) or "none"
        rows.append(f"| `{bug.name}` | `{bug.workload}` | {kinds} | {bug.detection.replace('|', ' or ')} | "
                    f"{n if n is not None else f'not caught in {ZOO_BUDGET}'} |")
        print(rows[-1], flush=True)
    return "\n".join(rows)


def mutation_table(tmp: Path) -> str:
    traces = []
    for w, f, seed in MUTATION_TRACES:
        head, events = simulate(Workload.parse(w), Faults.parse(f), seed)
        path = tmp / f"mut-{seed}.jsonl"
        write_trace(path, head, events)
        traces.append(read_trace(path))
    t0 = time.perf_counter()
    report = mutation_report(traces, MUTANTS_PER_TRACE, 0, tmp / "mutants", jobs=2)
    wall = time.perf_counter() - t0
    by_op: dict[str, list[str]] = {}
    for r in report.results:
        by_op.setdefault(r.mutation.op, []).append(r.outcome)
    rows = ["| operator | mutants | killed | legal (not counted) | survived |", "|---|---:|---:|---:|---:|"]
    for op, outs in sorted(by_op.items()):
        rows.append(f"| {op} | {len(outs)} | {outs.count('killed')} | {outs.count('legal')} | {outs.count('survived')} |")
    score = report.score
    rows.append("")
    rows.append(f"Mutation score: **{100 * (score or 0):.1f}%** ({report.count('killed')} killed, "
                f"{report.count('survived')} survived, {report.count('legal')} legal, {report.count('error')} errors) "
                f"over {len(traces)} traces x {MUTANTS_PER_TRACE} mutants, in {wall:.0f} s.")
    rows += mutant_notes(report.results)
    print("\n".join(rows), flush=True)
    return "\n".join(rows)


def mutation_rows(report: Any, wall: float, described: str, traces: int, mutants: int) -> list[str]:
    """A mutation report as a table by operator, the score and the notes below it (bench_ydb.py,
    bench_cone.py); ``described`` names the traces."""
    by_op: dict[str, list[str]] = {}
    for r in report.results:
        by_op.setdefault(r.mutation.op, []).append(r.outcome)
    rows = ["| operator | mutants | killed | legal (not counted) | survived | errors |", "|---|---:|---:|---:|---:|---:|"]
    for op, outs in sorted(by_op.items()):
        rows.append(f"| {op} | {len(outs)} | {outs.count('killed')} | {outs.count('legal')} | {outs.count('survived')} | {outs.count('error')} |")
    rows += [
        "",
        f"Mutation score: **{100 * (report.score or 0):.1f}%** ({report.count('killed')} killed, {report.count('survived')} survived, "
        f"{report.count('legal')} legal, {report.count('error')} errors) over {traces} traces x {mutants} mutants, two at a time, "
        f"in {wall:.0f} s. Traces: {described}.",
    ]
    return rows + mutant_notes(report.results)


def mutation_section(traces: list[Any], runs: Any, mutants: int, tmp: Path, loads_before: Any) -> str:
    """Mutate ``traces`` (made from ``runs``: (workload, faults, seed) each), time it, and give the
    table with its score and notes, then the load (bench_ydb.py, bench_cone.py); printed too.
    ``loads_before`` gives the load line, called once the mutants are checked."""
    t0 = time.perf_counter()
    report = mutation_report(traces, mutants, 0, tmp / "mutants", jobs=2)
    wall = time.perf_counter() - t0
    described = "; ".join(f"`{w}` faults {f} seed {s} ({len(t.events)} events)" for (w, f, s), t in zip(runs, traces, strict=True))
    rows = mutation_rows(report, wall, described, len(traces), mutants)
    rows += ["", loads_before()]
    print("\n".join(rows), flush=True)
    return "\n".join(rows)


def mutant_notes(results: Any, shown: int = 12) -> list[str]:
    """The legal mutants (the first ``shown``) with why each is still a run, then every survivor
    and error: the lines under a mutation table (bench_traces.py, bench_ydb.py)."""
    rows: list[str] = []
    legal = [r for r in results if r.outcome == "legal"]
    if legal:
        rows += ["", "Legal mutants, and why each is still a run of the protocol:", ""]
        rows += [f"- {r.description}: {r.detail}" for r in legal[:shown]]
        if len(legal) > shown:
            rows.append(f"- and {len(legal) - shown} more")
    bad = [r for r in results if r.outcome not in ("killed", "legal")]
    if bad:
        rows += ["", "Survivors and errors:", ""]
        rows += [f"- {r.description}: {r.outcome}: {r.detail}" for r in bad]
    return rows


def zoo_only(print_only: bool) -> int:
    """Measure the bug zoo again and keep the other tables of the recorded section, saying so."""
    text = DOC.read_text(encoding="utf-8")
    start = text.index("<!-- bench:traces -->")
    old = text[start : text.index("<!-- /bench -->", start)]
    lines = old.splitlines()
    kept_from = lines[1].strip()  # the recorded section's "Measured ... on: ..." line
    body_old = old[old.index("### Simulation") :]
    before, after = body_old[: body_old.index("### Bug zoo")], body_old[body_old.index("### Mutation score") :]
    with tempfile.TemporaryDirectory(prefix="txconform-bench-") as t:
        zoo = zoo_table(Path(t))
    earlier = [line for line in lines if line.startswith("Only the bug zoo")]
    if earlier:  # an earlier --zoo run: the other tables are still from the run it kept them from
        kept_from = earlier[0].split("last run: ", 1)[1]
    note = f"Only the bug zoo was measured by this command; the other tables are kept from the last run: {kept_from}"
    parts = [note, "", before.rstrip("\n"), "", "### Bug zoo: generated runs until the checker catches the bug", "",
             zoo, "", after.rstrip("\n")]
    body = stamp("python scripts/bench_traces.py --zoo") + "\n".join(parts)
    return record("traces", body, print_only, "bench_traces")


SCALE_WORKLOAD = "transfer:ids=30,txns=2000,aborts=true"
SCALE_SIZES = (1_000, 10_000, 100_000)
CHECK_CHILD = """
import json, resource, sys, time
from pathlib import Path
from trace_check.traces.options import CheckOptions
from trace_check.traces.validation import check_trace_file
path, window, every = Path(sys.argv[1]), int(sys.argv[2]) or None, sys.argv[3] == "every"
t0 = time.perf_counter()
v = check_trace_file(path, CheckOptions(engine="tlc", every_step=every, window=window, timeout=float(sys.argv[4]), jobs=int(sys.argv[5])))
print(json.dumps({"status": v.status.value, "message": v.message[:200], "windows": v.windows, "states": v.distinct_states,
                  "jobs": v.jobs, "run_ahead": v.run_ahead, "run_again": v.run_again,
                  "wall": time.perf_counter() - t0, "tlc_wall": v.wall_time,
                  "python_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
                  "tlc_rss_mb": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024}))
"""


def _check_child(path: Path, window: int, every: bool, timeout: float, jobs: int = 1) -> dict[str, Any]:
    """One check in a fresh process, so that its peak memory is its own (``window`` 0: the default,
    balanced for ``jobs``). TLC's peak is the largest of its JVMs, not their sum."""
    import json
    import subprocess

    out = subprocess.run([sys.executable, "-c", CHECK_CHILD, str(path), str(window), "every" if every else "end", str(timeout),
                          str(jobs)],
                         cwd=ROOT, capture_output=True, text=True, timeout=timeout * 40 + 600)
    if out.returncode != 0:
        return {"status": "error", "message": (out.stderr.strip().splitlines() or ["?"])[-1][:200], "windows": 0, "states": 0,
                "wall": 0.0, "python_rss_mb": 0.0, "tlc_rss_mb": 0.0, "jobs": jobs, "run_ahead": 0, "run_again": 0}
    result: dict[str, Any] = json.loads(out.stdout.strip().splitlines()[-1])
    return result


def scale_table(tmp: Path, sizes: tuple[int, ...], whole_up_to: int, every_up_to: int, timeout: float,
                jobs: tuple[int, ...] = (1,)) -> str:
    """Checks of faulty runs of growing length: in windows (the default, for each number of TLC runs
    at once in ``jobs``) after every event and at the end, and in one TLC run (a window as long as
    the trace) where that finishes in reasonable time."""
    from trace_check.traces.window_sizes import WINDOW

    rows = ["| events | trace | how | invariants | verdict | TLC runs | wall time | per 1,000 events | "
            "peak memory (Python / TLC) |", "|---:|---:|---|---|---|---:|---:|---:|---|"]
    for target in sizes:
        head, events = simulate(Workload.parse(SCALE_WORKLOAD), FAULTS, 1, max_events=target)
        n = len(events)
        path = tmp / f"scale-{n}.jsonl"
        write_trace(path, head, events)
        del events
        size = path.stat().st_size / 1e6
        windows = n > WINDOW  # else the default is one run already
        plans = [(0, every, j) for j in jobs for every in (True, False) if target <= every_up_to or not every] if windows else []
        if target <= whole_up_to or not windows:
            plans += [(n + 1, every, 1) for every in (True, False) if target <= every_up_to or not every]
        for window, every, j in plans:
            rows.append(_scale_row(n, size, window, every, _check_child(path, window, every, timeout, j)))
            print(rows[-1], flush=True)
    return "\n".join(rows)


def _scale_row(n: int, size: float, window: int, every: bool, r: dict[str, Any]) -> str:
    from trace_check.traces.window_sizes import WINDOW

    if window > n:
        how = "one run"
    elif r["jobs"] > 1:
        how = f"{r['windows']} windows of {-(-n // max(r['windows'], 1)):,}, {r['jobs']} at a time ({r['run_ahead']} run ahead)"
    else:
        how = f"windows of {WINDOW:,}"
    verdict = r["status"] if r["status"] != "error" else f"error: {r['message']}"
    return (f"| {n:,} | {size:.1f} MB | {how} | {'every event' if every else 'at the end'} | {verdict} | "
            f"{r['windows']} | {r['wall']:.1f} s | {1000 * r['wall'] / n:.2f} s | "
            f"{r['python_rss_mb']:,.0f} MB / {r['tlc_rss_mb']:,.0f} MB |")


def _long_run(path: Path, events: int, trace: Path | None) -> Path:
    """The faulty run of PYTHON_SIDE_WORKLOAD with seed 1: ``trace`` when given (simulated before:
    its header must say so), else simulated into ``path`` as it goes."""
    if trace is not None:
        head = read_trace(trace, limit=1).header
        if (head.get("workload"), head.get("seed")) != (Workload.parse(PYTHON_SIDE_WORKLOAD).describe(), 1):
            raise SystemExit(f"--late-trace {trace}: not a run of {PYTHON_SIDE_WORKLOAD} with seed 1")
        return trace
    simulate_to(path, Workload.parse(PYTHON_SIDE_WORKLOAD), FAULTS, 1, max_events=events)
    return path


def million_table(tmp: Path, events: int, timeout: float, trace: Path | None = None) -> str:
    """The whole check of one long faulty run, after every event, two windows at a time, in a
    process of its own: time and peak memory (Python's, and TLC's largest JVM)."""
    from trace_check.traces.reader import count_events

    path = _long_run(tmp / f"million-{events}.jsonl", events, trace)
    rows = ["| events | trace | how | invariants | verdict | TLC runs | wall time | per 1,000 events | "
            "peak memory (Python / TLC) |", "|---:|---:|---|---|---|---:|---:|---:|---|"]
    n = count_events(path)
    rows.append(_scale_row(n, path.stat().st_size / 1e6, 0, True, _check_child(path, 0, True, timeout, 2)))
    print(rows[-1], flush=True)
    return "\n".join(rows)


# SCALE_WORKLOAD's faulty run ends by itself at 128,577 events: each application stops at its first
# error. Resilient applications go on after a transaction their client aborted, as long as asked.
PYTHON_SIDE_WORKLOAD = "transfer:ids=30,txns=20000,aborts=true,resilient=true"
PYTHON_SIDE_CHILD = """
import json, resource, sys, time
from pathlib import Path
from trace_check.traces.reader import count_events, read_trace, read_windows
from trace_check.traces.tla_text import event_tuple, shape_of
from trace_check.traces.window_sizes import balanced_size
from trace_check.traces.windows import StartWriter, uses_bases
path, jobs = Path(sys.argv[1]), int(sys.argv[2])
t0 = time.perf_counter()
total = count_events(path)
head = read_trace(path, limit=1)
protocol = head.protocol
replay = protocol.spec_states(dict(head.constants))
starts = StartWriter(protocol, protocol.history, uses_bases(protocol))
windows = replay_time = 0
biggest = 0
for win in read_windows(path, balanced_size(None, total, jobs)):
    windows += 1
    shapes = {}
    for ev in win.events:  # the generated module's events, as the check writes them
        shapes.setdefault(shape_of(protocol, ev), len(shapes) + 1)
        event_tuple(protocol, ev, shapes)
    t = time.perf_counter()
    state = replay.advance([dict(e) for e in win.events])
    if state is not None:
        base, start = starts(state)  # the start state, and its base's files as the check writes them
        biggest = max(biggest, len(start[0]) + (sum(len(base.file_text(v)) for v in base.texts) if base else 0))
    replay_time += time.perf_counter() - t
print(json.dumps({"events": total, "windows": windows, "wall": time.perf_counter() - t0, "replay": replay_time,
                  "start_mb": biggest / 1e6, "rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
"""


def python_side_table(tmp: Path, sizes: tuple[int, ...], jobs: int) -> str:
    """What a check does in Python, without TLC, on faulty runs up to 1,000,000 events: read and
    check every line, read the trace window by window and write each window's events as the
    generated module does, replay it on the reference broker and write the state the next window
    starts from. Each in a process of its own, so that its peak memory is its own."""
    import json
    import subprocess

    rows = ["| events | trace | windows | wall time | of it, the broker's replay and the starts written | largest start state | peak memory (Python) |",
            "|---:|---:|---:|---:|---:|---:|---:|"]
    for target in sizes:
        path = tmp / f"python-side-{target}.jsonl"
        simulate_to(path, Workload.parse(PYTHON_SIDE_WORKLOAD), FAULTS, 1, max_events=target)  # never all in memory
        out = subprocess.run([sys.executable, "-c", PYTHON_SIDE_CHILD, str(path), str(jobs)], cwd=ROOT, capture_output=True,
                             text=True, timeout=7200)
        if out.returncode != 0:
            rows.append(f"| {target:,} | | | error: {(out.stderr.strip().splitlines() or ['?'])[-1][:200]} | | | |")
            continue
        r = json.loads(out.stdout.strip().splitlines()[-1])
        rows.append(f"| {r['events']:,} | {path.stat().st_size / 1e6:.1f} MB | {r['windows']} | {r['wall']:.1f} s | "
                    f"{r['replay']:.1f} s | {r['start_mb']:.1f} MB | {r['rss_mb']:,.0f} MB |")
        print(rows[-1], flush=True)
        path.unlink()
    return "\n".join(rows)


LATE_CHILD = """
import json, resource, shutil, sys, time
from pathlib import Path
from trace_check.traces.reader import count_events, read_trace, read_windows
from trace_check.traces.module_text import Window
from trace_check.traces.one_window import check_window
from trace_check.traces.windows import StartWriter, uses_bases
path, size, k, folder = Path(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), Path(sys.argv[4])
total = count_events(path)
head = read_trace(path, limit=1)
protocol = head.protocol
replay = protocol.spec_states(dict(head.constants))
starts = StartWriter(protocol, protocol.history, uses_bases(protocol))
t0 = time.perf_counter()
state = None
for n, win in enumerate(read_windows(path, size), 1):
    if n == k:
        break
    state = replay.advance([dict(e) for e in win.events])
replayed = time.perf_counter() - t0
base, start = starts(state)
t1 = time.perf_counter()
v, handed = check_window(win, Window(start=start, last=False, base=base), total, lambda n: [], True, 7200, folder, None)
wall = time.perf_counter() - t1
print(json.dumps({"first": win.first, "last": win.first + len(win.events) - 1, "status": v.status.value,
                  "message": v.message[:200], "states": v.distinct_states, "tlc_wall": v.wall_time, "wall": wall,
                  "replayed": replayed, "start_mb": (len(start[0]) + (sum(len(base.file_text(v)) for v in base.texts) if base else 0)) / 1e6,
                  "base": base is not None,
                  "loaded": (folder / "accept" / "TraceStart.txt").exists(),
                  "python_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
                  "tlc_rss_mb": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024}))
"""


def late_table(tmp: Path, events: int, windows: tuple[int, ...], size: int, trace: Path | None = None) -> str:
    """Single windows of one long faulty run, each as a check runs it when the reference broker's
    replay gives its start (after every event, with its hand-off), each in a process of its own:
    how a window's time and TLC's memory grow with how far into the trace it starts."""
    import json
    import subprocess

    path = _long_run(tmp / f"late-{events}.jsonl", events, trace)
    rows = ["| window | events | its start state | TLC's start states | verdict | window's TLC run | TLC's peak memory | Python's peak memory |",
            "|---:|---|---:|---|---|---:|---:|---:|"]
    for k in windows:
        folder = tmp / f"window{k}"
        out = subprocess.run([sys.executable, "-c", LATE_CHILD, str(path), str(size), str(k), str(folder)], cwd=ROOT,
                             capture_output=True, text=True, timeout=4 * 3600)
        if out.returncode != 0:
            rows.append(f"| {k} | | | | error: {(out.stderr.strip().splitlines() or ['?'])[-1][:200]} | | | |")
        else:
            r = json.loads(out.stdout.strip().splitlines()[-1])
            verdict = r["status"] if r["status"] != "error" else f"error: {r['message']}"
            rows.append(f"| {k} | {r['first']:,} to {r['last']:,} | {r['start_mb']:.1f} MB | "
                        f"{'read from a file (TraceLoad)' if r['loaded'] else 'a literal in the module'} | {verdict} | "
                        f"{r['tlc_wall']:.1f} s | {r['tlc_rss_mb']:,.0f} MB | {r['python_rss_mb']:,.0f} MB |")
        print(rows[-1], flush=True)
        shutil.rmtree(folder, ignore_errors=True)
    return "\n".join(rows)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--print", action="store_true", help="print only; do not rewrite docs/benchmarks.md")
    parser.add_argument("--quick", action="store_true",
                        help="measure the simulation and validation times only; keep the recorded zoo and mutation results")
    parser.add_argument("--zoo", action="store_true",
                        help="measure the bug zoo only; keep the recorded simulation, validation and mutation results")
    parser.add_argument("--scale", action="store_true", help="long traces: time and memory of windowed checks (section bench:scale)")
    parser.add_argument("--sizes", default=",".join(str(n) for n in SCALE_SIZES), help="--scale: trace lengths, comma-separated")
    parser.add_argument("--whole-up-to", type=int, default=10_000, help="--scale: also check in one TLC run up to this length")
    parser.add_argument("--every-up-to", type=int, default=10_000, help="--scale: check after every event up to this length")
    parser.add_argument("--timeout", type=float, default=1800.0, help="--scale: seconds per TLC run")
    parser.add_argument("--jobs", default="1,2", help="--scale: TLC runs at once to measure, comma-separated (default 1,2)")
    parser.add_argument("--python-side", action="store_true",
                        help="what a check does in Python alone, up to 1,000,000 events (section bench:python-side)")
    parser.add_argument("--late", action="store_true",
                        help="single windows far into a 1,000,000-event run: time and memory (section bench:late)")
    parser.add_argument("--late-windows", default="2,100,200", help="--late: which windows of 5,000 events, comma-separated")
    parser.add_argument("--late-trace", type=Path, help="--late, --million: that run, simulated before (simulate writes the same bytes)")
    parser.add_argument("--million", action="store_true",
                        help="the whole check of a 1,000,000-event run, two windows at a time (section bench:million)")
    args = parser.parse_args()
    if args.million:
        with tempfile.TemporaryDirectory(prefix="txconform-bench-") as t:
            table = million_table(Path(t), 1_000_000, args.timeout, args.late_trace)
        workload = f"Trace: `simulate --workload {PYTHON_SIDE_WORKLOAD} --faults all --seed 1 --max-events 1000000`.\n\n"
        given = " --late-trace T (T: that run, simulated before)" if args.late_trace else ""
        return record("million", stamp(f"python scripts/bench_traces.py --million{given}") + workload + table, args.print, "bench_traces")
    if args.late:
        wins = tuple(int(x) for x in args.late_windows.split(","))
        with tempfile.TemporaryDirectory(prefix="txconform-bench-") as t:
            table = late_table(Path(t), 1_000_000, wins, 5_000, args.late_trace)
        workload = f"Trace: `simulate --workload {PYTHON_SIDE_WORKLOAD} --faults all --seed 1 --max-events 1000000`.\n\n"
        given = " --late-trace T (T: that run, simulated before)" if args.late_trace else ""
        return record("late", stamp(f"python scripts/bench_traces.py --late --late-windows {args.late_windows}{given}") + workload + table,
                      args.print, "bench_traces")
    if args.zoo:
        return zoo_only(args.print)
    if args.python_side:
        sizes = tuple(int(x) for x in args.sizes.split(","))
        with tempfile.TemporaryDirectory(prefix="txconform-bench-") as t:
            table = python_side_table(Path(t), sizes, 2)
        workload = f"Traces: `simulate --workload {PYTHON_SIDE_WORKLOAD} --faults all --seed 1 --max-events N`.\n\n"
        return record("python-side", stamp(f"python scripts/bench_traces.py --python-side --sizes {args.sizes}") + workload + table,
                      args.print, "bench_traces")
    if args.scale:
        sizes = tuple(int(x) for x in args.sizes.split(","))
        with tempfile.TemporaryDirectory(prefix="txconform-bench-") as t:
            table = scale_table(Path(t), sizes, args.whole_up_to, args.every_up_to, args.timeout,
                                tuple(int(x) for x in args.jobs.split(",")))
        command = (f"python scripts/bench_traces.py --scale --sizes {args.sizes} --whole-up-to {args.whole_up_to} "
                   f"--every-up-to {args.every_up_to} --jobs {args.jobs}")
        return record("scale", stamp(command) + table, args.print, "bench_traces")
    with tempfile.TemporaryDirectory(prefix="txconform-bench-") as t:
        tmp = Path(t)
        parts = ["### Simulation", "", simulation_rate(), "", "### Trace validation", "", validation_times(tmp)]
        if not args.quick:
            parts += ["", "### Bug zoo: generated runs until the checker catches the bug", "", zoo_table(tmp)]
            parts += ["", "### Mutation score", "", mutation_table(tmp)]
    text = DOC.read_text(encoding="utf-8")
    if args.quick:  # keep what was recorded for the zoo and the mutation score
        old = text[text.index("<!-- bench:traces -->") : text.index("<!-- /bench -->", text.index("<!-- bench:traces -->"))]
        if "### Bug zoo" in old:
            parts += ["", old[old.index("### Bug zoo") :].rstrip("\n")]
    body = stamp("python scripts/bench_traces.py" + (" --quick" if args.quick else "")) + "\n".join(parts)
    return record("traces", body, args.print, "bench_traces")


if __name__ == "__main__":
    sys.exit(main())
