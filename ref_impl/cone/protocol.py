"""The C*One plug-in: how ``trace_check`` simulates, reads, checks, replays and mutates C*One traces."""

from __future__ import annotations

from ref_impl.sim import settings
from trace_check.traces import format as trace_format
from trace_check.traces.protocol import SimulateOptions, Simulation, declare

from . import trace
from .replay import engine_value, replay
from .replay_state import spec_states
from .sim import GENERATOR, Faults, Workload, parse_bugs
from .sim import Simulation as Run


def simulate(o: SimulateOptions) -> Simulation:
    workload = settings.option("--workload", Workload.parse, o.workload or "album")
    faults = settings.option("--faults", Faults.parse, o.faults)
    bugs = settings.option("--bugs", parse_bugs, o.bugs)
    events: list[dict[str, object]] = []
    run = Run(workload, faults, o.seed, events.append, bugs=bugs, max_events=o.max_events)
    run.run(o.progress)
    head = trace_format.header(
        "cone",
        trace.SPEC_DIR,
        trace.SPEC_MODULES,
        run.k.to_spec(),
        o.seed,
        GENERATOR,
        trace.LOGGED,
        workload=workload.describe(),
        faults=faults.describe(),
        bugs=list(bugs),
    )
    summary = f"cone, workload {workload.describe()}, faults {faults.describe()}, seed {o.seed}{', bugs ' + '+'.join(bugs) if bugs else ''}"
    return Simulation(head, events, summary)


# The trace semantics come from trace.py by name (trace_check/traces/protocol.py: FROM_TRACE_MODULE).
PROTOCOL = declare(
    trace,
    name="cone",
    title="C*One (Odnoklassniki's transaction coordinator over Cassandra: in-memory locks, logged batches, quorum heartbeats)",
    simulate=simulate,
    replay=replay,
    engine_value=engine_value,
    engine_noun="the reference engine",
    history=("action",),
    column_values="PostVal",
    spec_states=spec_states,
)
