"""One simulated run, written as a trace file (or kept in memory)."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from ref_impl.kafka import trace as kafka_trace
from trace_check.traces import format as trace_format

from .faults import Faults, Schedule
from .scheduler import Simulation
from .workloads import Workload

GENERATOR = "txconform ref_impl.sim 1"


def trace_header(sim: Simulation) -> dict[str, Any]:
    return trace_format.header(
        "kafka",
        kafka_trace.SPEC_DIR,
        kafka_trace.SPEC_MODULES,
        sim.k.to_spec(bugs=False),
        sim.seed,
        GENERATOR,
        kafka_trace.LOGGED,
        workload=sim.w.describe(),
        faults=sim.f.describe() if sim.scheduled is None else "schedule: " + "; ".join(sim.scheduled),
        bugs=list(sim.k.bugs),
    )


def write_trace(path: Path, head: dict[str, Any], events: Iterable[dict[str, Any]]) -> None:
    """Write a Kafka trace, columns in Kafka's order."""
    trace_format.write_trace(path, head, events, kafka_trace.ORDER)


def simulate(
    workload: Workload,
    faults: Faults,
    seed: int,
    bugs: tuple[str, ...] = (),
    max_events: int = 100_000,
    progress: Callable[[int], None] | None = None,
    schedule: Schedule | None = None,
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """Run once; returns the trace header and its events."""
    events: list[dict[str, Any]] = []
    sim = Simulation(workload, faults, seed, events.append, bugs=bugs, max_events=max_events, schedule=schedule)
    sim.run(progress)
    return trace_header(sim), events


def simulate_to(
    path: Path,
    workload: Workload,
    faults: Faults,
    seed: int,
    bugs: tuple[str, ...] = (),
    max_events: int = 100_000,
    schedule: Schedule | None = None,
) -> int:
    """Run once and write the trace to ``path`` as the run goes, each event when it happens, so a
    run of a million events is never held in memory; the same bytes as ``write_trace`` of
    ``simulate``'s result. Returns the number of events."""
    def write(ev: dict[str, Any]) -> None:  # the file's writer, once the header is written
        raise RuntimeError("the simulation emitted an event before its trace's header was written")

    sim = Simulation(workload, faults, seed, lambda ev: write(ev), bugs=bugs, max_events=max_events, schedule=schedule)
    with trace_format.writing(path, trace_header(sim), kafka_trace.ORDER) as writer:
        write = writer
        sim.run()
    return writer.count
