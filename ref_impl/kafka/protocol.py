"""The Kafka plug-in: how ``trace_check`` simulates, reads, checks, replays and mutates Kafka traces."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ref_impl.sim.faults import Faults, FaultSpecError
from ref_impl.sim.run import simulate as simulate_run
from ref_impl.sim.workloads import Workload, WorkloadSpecError
from trace_check.traces.protocol import Protocol, ProtocolInputError, SimulateOptions, Simulation

from . import trace
from .constants import BUGS
from .replay import broker_value, replay
from .replay_state import spec_states
from .serve.plugin import serve


def simulate(o: SimulateOptions) -> Simulation:
    try:
        workload = Workload.parse(o.workload or "transfer")
        faults = Faults.parse(o.faults)
    except (FaultSpecError, WorkloadSpecError) as e:
        raise ProtocolInputError(f"{'--faults' if isinstance(e, FaultSpecError) else '--workload'}: {e}") from None
    bugs = tuple(b for b in o.bugs.split("+") if b)
    for b in bugs:
        if b not in BUGS:
            raise ProtocolInputError(f"--bugs: unknown bug {b!r}; the bug zoo has {', '.join(BUGS)}")
    head, events = simulate_run(workload, faults, o.seed, bugs=bugs, max_events=o.max_events, progress=o.progress)
    summary = (f"kafka {workload.version}, workload {workload.describe()}, faults {faults.describe()}, seed {o.seed}"
               f"{', bugs ' + '+'.join(bugs) if bugs else ''}")
    return Simulation(head, events, summary)


def base_limits(state: Mapping[str, Any]) -> Mapping[str, Mapping[Any, int]]:
    """How far a window's base may reach into each partition log: to where its follower fell
    behind (lag >= 0), the shortest log an unclean election can cut it back to (KafkaTxn:
    UncleanElection; -1, in sync, and -2, elected, cut nothing). __transaction_state is never cut."""
    lag = state.get("lag", ())
    items = enumerate(lag, 1) if isinstance(lag, tuple) else dict(lag).items()
    return {"plog": {p: n for p, n in items if isinstance(n, int) and n >= 0}}


PROTOCOL = Protocol(
    name="kafka",
    title="Apache Kafka transactions (TV1 and TV2) and exactly-once consume-transform-produce",
    spec_dir=trace.SPEC_DIR,
    spec_modules=trace.SPEC_MODULES,
    trace_module=trace.TRACE_MODULE,
    records_module=trace.RECORDS_MODULE,
    logs=("tlog", "plog"),
    from_index=(("PartitionLSO", "plog", 1), ("LatestInstance", "tlog", 1)),
    log_bases={"tlog": ("TlogBase", "Tlogs"), "plog": ("PlogBase", "Plogs")},
    base_limits=base_limits,
    log_join="Joined",
    history=("action",),
    column_values="PostVal",
    spec_states=spec_states,
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
    engine_value=broker_value,
    engine_noun="the reference broker",
    event_text=trace.event_text,
    alter=trace.alter,
    why_legal=trace.why_legal,
    serve=serve,
)
