"""One simulated run, written as a trace file (or kept in memory)."""

from __future__ import annotations

from typing import Any, Callable, Optional

from trace_check.traces import format as trace_format
from trace_check.traces.format import write_trace  # noqa: F401  (re-exported: the simulator's output)

from .faults import Faults, Schedule
from .scheduler import Simulation
from .workloads import Workload

GENERATOR = "txconform ref_impl.sim 1"
# What the reference broker logs: every column, for every event it applies to.
LOGGED = tuple(c for c in trace_format.COLUMNS if c not in trace_format.INFO_COLUMNS)


def trace_header(sim: Simulation) -> dict[str, Any]:
    return trace_format.header(
        "kafka",
        sim.k.to_spec(bugs=False),
        sim.seed,
        GENERATOR,
        LOGGED,
        workload=sim.w.describe(),
        faults=sim.f.describe() if sim.scheduled is None else "schedule: " + "; ".join(sim.scheduled),
        bugs=list(sim.k.bugs),
    )


def simulate(
    workload: Workload,
    faults: Faults,
    seed: int,
    bugs: tuple[str, ...] = (),
    max_events: int = 100_000,
    progress: Optional[Callable[[int], None]] = None,
    schedule: Optional[Schedule] = None,
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """Run once; returns the trace header and its events."""
    events: list[dict[str, Any]] = []
    sim = Simulation(workload, faults, seed, events.append, bugs=bugs, max_events=max_events, schedule=schedule)
    sim.run(progress)
    return trace_header(sim), events
