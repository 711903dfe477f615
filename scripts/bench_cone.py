#!/usr/bin/env python3
"""Benchmarks of C*One (issue 21), recorded in docs/benchmarks.md.

    python scripts/bench_cone.py            measure everything, rewrite the bench:cone section
    python scripts/bench_cone.py --print    measure and print only

Measures: every C*One model of tier ci (specs/cone/models.toml) with TLC, against issue 21's
budgets (each violating model within 60 s, each holding one within 10 minutes); events per
second of the simulator; the time to check generated runs of growing size; the C*One mutation
score. The load average is recorded with every table: other jobs may share the machine.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import attrs

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "scripts"))

from bench_models import measure, record, row, stamp, warn_if_unpinned  # noqa: E402
from bench_traces import mutation_section  # noqa: E402
from bench_ydb import load, loads  # noqa: E402

from ref_impl.cone.protocol import PROTOCOL as CONE  # noqa: E402
from trace_check.models.registry import load_registries  # noqa: E402
from trace_check.traces.format import write_trace  # noqa: E402
from trace_check.traces.options import CheckOptions  # noqa: E402
from trace_check.traces.protocol import SimulateOptions  # noqa: E402
from trace_check.traces.reader import Trace, read_trace  # noqa: E402
from trace_check.traces.validation import check_trace  # noqa: E402

REGISTRY = ROOT / "specs" / "cone" / "models.toml"
VIOLATING_BUDGET = 60.0  # issue 21: each violating model within 60 s of TLC
HOLDING_BUDGET = 600.0  # each holding one within 10 minutes at CI bounds
MODEL_TIMEOUT = 1200
SIM_RUNS = 200  # simulated runs for the rate: a run ends when every client is done
# Traces checked with TLC: more clients and attempts make longer runs.
SIZES = (
    ("album:adders=2,attempts=1", "crash=1,drop=1"),
    ("album:adders=2,retaggers=1,attempts=2", "all"),
    ("album:adders=4,retaggers=2,attempts=2", "all"),
    ("album:adders=8,retaggers=2,attempts=3", "all"),
)
MUTATION_TRACES = [  # (workload, faults, seed)
    ("album:adders=2,attempts=1", "none", 1),
    ("album:adders=2,retaggers=1,attempts=2", "crash=1,drop=1", 3),
    ("album:adders=2,attempts=2", "pause=1,cut=1", 5),
    ("album:adders=1,retaggers=1,attempts=2", "dc=1,drop=1", 2),
]
MUTANTS_PER_TRACE = 25


def simulate(workload: str, faults: str, seed: int) -> Any:
    return CONE.simulate(SimulateOptions(seed=seed, workload=workload, faults=faults))


def save(sim: Any, path: Path) -> Trace:
    write_trace(path, sim.header, sim.events, CONE.columns.order)
    return read_trace(path)


def models_table() -> str:
    before = load()
    models = load_registries([REGISTRY]).select([], "ci")
    lines = [
        "| model | outcome | distinct states | states generated | depth | TLC workers | wall time (s) | states/s | budget (issue 21) | within budget |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|---|",
    ]
    total = 0.0
    for m in models:
        r = measure(attrs.evolve(m.task, timeout=MODEL_TIMEOUT))
        warn_if_unpinned(m, r)
        budget = HOLDING_BUDGET if m.expect == "holds" else VIOLATING_BUDGET
        total += r.wall_time
        lines.append(f"{row(f'`{m.name}`', m.expect, r, m.task.tlc.workers)} {budget:.0f} s | {'yes' if r.wall_time <= budget else '**no**'} |")
        print(lines[-1], flush=True)
    lines += ["", f"All {len(models)} models: {total:.0f} s of TLC, one model at a time. {loads(before)}"]
    return "\n".join(lines)


def simulation_rate() -> str:
    before = load()
    t0 = time.perf_counter()
    events = sum(len(simulate("album:adders=2,retaggers=1,attempts=2", "all", seed).events) for seed in range(SIM_RUNS))
    wall = time.perf_counter() - t0
    return (
        f"{SIM_RUNS} runs of `album:adders=2,retaggers=1,attempts=2` with every fault (`--faults all`): {events:,} events in "
        f"{wall:.1f} s, {events / wall:,.0f} events/s. {loads(before)}"
    )


def validation_table(tmp: Path) -> str:
    before = load()
    lines = ["| workload | faults | events | verdict | wall time (s) |", "|---|---|---:|---|---:|"]
    for n, (w, f) in enumerate(SIZES):
        trace = save(simulate(w, f, 1), tmp / f"size-{n}.jsonl")
        t0 = time.perf_counter()
        v = check_trace(trace, CheckOptions(engine="tlc"))
        lines.append(f"| `{w}` | {f} | {len(trace.events):,} | {v.status.value} | {time.perf_counter() - t0:.1f} |")
        print(lines[-1], flush=True)
    lines += ["", "Invariants are checked after every event. " + loads(before)]
    return "\n".join(lines)


def mutation_table(tmp: Path) -> str:
    before = load()
    traces = [save(simulate(w, f, seed), tmp / f"mut-{seed}.jsonl") for w, f, seed in MUTATION_TRACES]
    return mutation_section(traces, MUTATION_TRACES, MUTANTS_PER_TRACE, tmp, lambda: loads(before))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--print", action="store_true", help="print only; do not rewrite docs/benchmarks.md")
    args = parser.parse_args()
    start = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="txconform-bench-cone-") as t:
        tmp = Path(t)
        parts = ["### Model checking: the C*One models of tier ci", "", models_table()]
        parts += ["", "### Simulation", "", simulation_rate()]
        parts += ["", "### Trace validation", "", validation_table(tmp)]
        parts += ["", "### C*One mutation score", "", mutation_table(tmp)]
    body = stamp("python scripts/bench_cone.py") + "\n".join(parts) + f"\n\nThe whole run: {time.perf_counter() - start:.0f} s."
    return record("cone", body, args.print, "bench_cone")


if __name__ == "__main__":
    sys.exit(main())
