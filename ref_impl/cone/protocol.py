"""The C*One plug-in: how ``trace_check`` simulates, reads, checks, replays and mutates C*One traces."""

from __future__ import annotations

from trace_check.traces import format as trace_format
from trace_check.traces.protocol import Protocol, ProtocolInputError, SimulateOptions, Simulation

from . import trace
from .replay import engine_value, replay
from .replay_state import spec_states
from .sim import GENERATOR, Faults, SpecError, Workload, parse_bugs
from .sim import Simulation as Run


def simulate(o: SimulateOptions) -> Simulation:
    try:
        workload = Workload.parse(o.workload or "album")
    except SpecError as e:
        raise ProtocolInputError(f"--workload: {e}") from None
    try:
        faults = Faults.parse(o.faults)
    except SpecError as e:
        raise ProtocolInputError(f"--faults: {e}") from None
    try:
        bugs = parse_bugs(o.bugs)
    except SpecError as e:
        raise ProtocolInputError(f"--bugs: {e}") from None
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


PROTOCOL = Protocol(
    name="cone",
    title="C*One (Odnoklassniki's transaction coordinator over Cassandra: in-memory locks, logged batches, quorum heartbeats)",
    spec_dir=trace.SPEC_DIR,
    spec_modules=trace.SPEC_MODULES,
    trace_module=trace.TRACE_MODULE,
    registry=trace.SPEC_DIR / "models.toml",
    columns=trace.COLUMNS,
    constants=trace.CONSTANT_KINDS,
    defaults=trace.DEFAULTS,
    encoding=trace.ENCODING,
    diagnoses=trace.DIAGNOSES,
    check_constants=trace.check_constants,
    check_event=trace.check_event,
    spec_constants=trace.spec_constants,
    simulate=simulate,
    replay=replay,
    engine_value=engine_value,
    engine_noun="the reference engine",
    history=("action",),
    column_values="PostVal",
    spec_states=spec_states,
    event_text=trace.event_text,
    alter=trace.alter,
    why_legal=trace.why_legal,
)
