"""The YDB Topics plug-in: how ``trace_check`` simulates, reads, checks, replays and mutates YDB traces."""

from __future__ import annotations

from ref_impl.sim import settings
from trace_check.traces import format as trace_format
from trace_check.traces.protocol import SimulateOptions, Simulation, declare

from . import trace
from .replay import engine_value, replay
from .replay_state import spec_states
from .serve.plugin import PORT, serve
from .sim import GENERATOR, Faults, Workload, parse_bugs
from .sim import Simulation as Run


def simulate(o: SimulateOptions) -> Simulation:
    workload = settings.option("--workload", Workload.parse, o.workload or "copy")
    faults = settings.option("--faults", Faults.parse, o.faults)
    bugs = settings.option("--bugs", parse_bugs, o.bugs)
    events: list[dict[str, object]] = []
    run = Run(workload, faults, o.seed, events.append, bugs=bugs, max_events=o.max_events)
    run.run(o.progress)
    head = trace_format.header("ydb", trace.SPEC_DIR, trace.SPEC_MODULES, run.k.to_spec(), o.seed, GENERATOR, trace.LOGGED,
                               workload=workload.describe(), faults=faults.describe(), bugs=list(bugs))
    summary = (f"ydb {workload.version}, workload {workload.describe()}, faults {faults.describe()}, seed {o.seed}"
               f"{', bugs ' + '+'.join(bugs) if bugs else ''}")
    return Simulation(head, events, summary)


# The trace semantics come from trace.py by name (trace_check/traces/protocol.py: FROM_TRACE_MODULE).
PROTOCOL = declare(
    trace,
    name="ydb",
    title="YDB Topics transactions (topic offsets, topic writes and a table row in one distributed transaction)",
    simulate=simulate,
    replay=replay,
    engine_value=engine_value,
    engine_noun="the reference engine",
    history=("action",),
    column_values="PostVal",
    spec_states=spec_states,
    serve=serve,
    serve_port=PORT,
)
