"""The Kafka plug-in: how ``trace_check`` simulates, reads, checks, replays and mutates Kafka traces."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ref_impl.kafka.sim.faults import Faults
from ref_impl.kafka.sim.run import simulate as simulate_run
from ref_impl.kafka.sim.workloads import Workload
from ref_impl.sim import settings
from trace_check.traces.protocol import SimulateOptions, Simulation, declare

from . import trace
from .constants import BUGS
from .replay import broker_value, replay
from .replay_state import spec_states
from .serve.plugin import serve


def simulate(o: SimulateOptions) -> Simulation:
    workload = settings.option("--workload", Workload.parse, o.workload or "transfer")
    faults = settings.option("--faults", Faults.parse, o.faults)
    bugs = settings.option("--bugs", lambda text: settings.bugs(text, BUGS), o.bugs)
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


# The trace semantics come from trace.py by name (trace_check/traces/protocol.py: FROM_TRACE_MODULE).
PROTOCOL = declare(
    trace,
    name="kafka",
    title="Apache Kafka transactions (TV1 and TV2) and exactly-once consume-transform-produce",
    logs=("tlog", "plog"),
    from_index=(("PartitionLSO", "plog", 1), ("LatestInstance", "tlog", 1)),
    log_bases={"tlog": ("TlogBase", "Tlogs"), "plog": ("PlogBase", "Plogs")},
    base_limits=base_limits,
    log_join="Joined",
    history=("action",),
    column_values="PostVal",
    spec_states=spec_states,
    simulate=simulate,
    replay=replay,
    engine_value=broker_value,
    engine_noun="the reference broker",
    serve=serve,
    serve_port=9092,
)
