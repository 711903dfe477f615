"""How many generated runs it takes until the checker catches a bug of the zoo.

Hypothesis generates fault schedules (and seeds) for the bug's workload; every run is validated;
the search stops at the first run the checker flags the way the zoo says it must. Derandomized,
so the count is the same on every machine.

Hypothesis can generate a run twice (another schedule or seed that changes nothing, or the same
one again): the simulation is deterministic, so a trace byte for byte the same as one already
checked gets that check's verdict instead of a second TLC run. It still counts as a run.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from hypothesis import HealthCheck, Phase, given, settings

from ref_impl.kafka.sim.faults import Faults, Schedule
from ref_impl.kafka.sim.run import simulate, write_trace
from ref_impl.kafka.sim.strategies import seeds, zoo_schedules
from ref_impl.kafka.sim.workloads import Workload
from ref_impl.kafka.sim.zoo import ZooBug
from trace_check.traces.options import CheckOptions
from trace_check.traces.reader import read_trace
from trace_check.traces.validation import check_trace
from trace_check.traces.verdicts import Verdict


class _Detected(Exception):
    pass


def run_and_check(
    tmp: Path, w: Workload, schedule: Schedule, seed: int, bugs: tuple[str, ...] = (), checked: dict[bytes, Verdict] | None = None,
    max_events: int = 100_000,
) -> tuple[Verdict, list]:
    """Simulate a run, write its trace and check it; with ``checked`` (trace bytes to verdict), each
    distinct trace is checked once."""
    head, events = simulate(w, Faults(), seed, bugs=bugs, schedule=schedule, max_events=max_events)
    path = tmp / f"run-{seed}.jsonl"
    write_trace(path, head, events)
    if checked is None:
        return check_trace(read_trace(path), CheckOptions(timeout=300)), events
    trace = path.read_bytes()
    if trace not in checked:
        checked[trace] = check_trace(read_trace(path), CheckOptions(timeout=300))
    return checked[trace], events


def examples_to_detection(bug: ZooBug, max_examples: int, tmp: Path | None = None) -> int | None:
    """The number of the first generated run the checker catches, or None within ``max_examples``."""
    tmp = tmp or Path(tempfile.mkdtemp(prefix="txconform-zoo-"))
    count = 0
    w = Workload.parse(bug.workload)
    checked: dict[bytes, Verdict] = {}

    @settings(max_examples=max_examples, deadline=None, derandomize=True, database=None, phases=[Phase.generate],
              suppress_health_check=[HealthCheck.too_slow])
    @given(schedule=zoo_schedules(bug), seed=seeds())
    def search(schedule: Schedule, seed: int) -> None:
        nonlocal count
        count += 1
        v, _ = run_and_check(tmp, w, schedule, seed, bug.bugs, checked, bug.max_events)
        if bug.detected(v.status, v.invariant):
            raise _Detected()
        if v.status == "error":
            raise RuntimeError(v.message)

    try:
        search()
    except _Detected:
        return count
    return None
