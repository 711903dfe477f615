"""The spec state the YDB and C*One reference engines replay a trace to (``ref_impl/<p>/replay_state.py``)
is exactly the state TLC hands on from one window of the trace to the next: for every window that
ends in one state, ``SpecStates.advance`` on the same events gives that state, ``action`` (history
only) aside, as ``parse_value`` reads it. An event the engine cannot take ends the replay."""

from __future__ import annotations

import importlib
import json
from pathlib import Path
from typing import Any

import pytest

from trace_check.traces import handoff, plugins
from trace_check.traces.options import CheckOptions
from trace_check.traces.protocol import SimulateOptions
from trace_check.traces.reader import read_trace
from trace_check.traces.validation import check_trace_file
from trace_check.traces.verdicts import Status
from trace_check.values.tla import Record
from trace_check.values.tlc_print import parse_value

WINDOWS = 3  # windows per trace: two hand-offs to compare


def replay_states(name: str, constants: dict[str, Any]) -> Any:
    return importlib.import_module(f"ref_impl.{name}.replay_state").spec_states(constants)


def simulated(tmp_path: Path, name: str, workload: str, seed: int) -> Path:
    sim = plugins.get(name).simulate(SimulateOptions(seed=seed, workload=workload, faults="all"))
    path = tmp_path / "t.jsonl"
    path.write_text("".join(json.dumps(x) + "\n" for x in [sim.header, *sim.events]), encoding="utf-8")
    return path


@pytest.mark.tlc
@pytest.mark.parametrize("name,workload,seed", [
    ("ydb", "copy:workers=2,txns=2", 4),  # a lock loss, a take-over of a hung worker, a tablet restart, an expiry
    ("ydb", "copy:workers=2,txns=2", 2),  # a lost message and a read set sent again
    ("cone", "album:adders=2,retaggers=1", 10),  # a failover: a crash, a new master, batchlog replays
    ("cone", "album:adders=2,retaggers=1", 4),  # a lost data centre, a GC pause, an orphan's timeout
])
def test_the_engine_replays_to_the_state_tlc_hands_on(tmp_path: Path, name: str, workload: str, seed: int) -> None:
    path = simulated(tmp_path, name, workload, seed)
    trace = read_trace(path)
    size = -(-len(trace.events) // WINDOWS)
    v = check_trace_file(path, CheckOptions(engine="tlc", every_step=False, workdir=tmp_path / "w", window=size))
    assert v.status is Status.ACCEPTED and v.windows == WINDOWS
    history = plugins.get(name).history
    replay = replay_states(name, dict(trace.constants))
    compared = 0
    for k in range(1, WINDOWS):
        handed = handoff.read_states(tmp_path / "w" / f"window{k}" / "accept" / "tlc.log")
        state = replay.advance([dict(e) for e in trace.events[(k - 1) * size : k * size]])
        assert state is not None, f"window {k}: the engine could not replay the trace"
        if len(handed) != 1:
            continue  # the window ends in several states: no one state to compare with
        truth = parse_value(handed[0])
        assert isinstance(truth, Record)
        assert state == Record({v: x for v, x in truth.items() if v not in history}), f"window {k}"
        compared += 1
    assert compared > 0


@pytest.mark.parametrize("name,workload,bad", [
    ("ydb", "copy:workers=2,txns=2", {"action": "CommitTx", "worker": "w1"}),  # w1 has no transaction open
    ("ydb", "copy:workers=2,txns=2", {"action": "NoSuchStep"}),
    ("cone", "album:adders=2,retaggers=1", {"action": "CoCommitDone", "coordinator": "x1", "client": "c1", "attempt": 1}),
    ("cone", "album:adders=2,retaggers=1", {"action": "NoSuchStep"}),
])
def test_an_event_the_engine_cannot_take_ends_the_replay(tmp_path: Path, name: str, workload: str, bad: dict[str, Any]) -> None:
    trace = read_trace(simulated(tmp_path, name, workload, 4))
    events = [dict(e) for e in trace.events]
    replay = replay_states(name, dict(trace.constants))
    first = replay.advance(events[:3])
    assert isinstance(first, Record) and "action" not in first
    assert replay.advance([bad]) is None
    assert replay.advance(events[3:]) is None  # and from then on
    assert replay_states(name, dict(trace.constants)).advance(events) is not None  # the trace itself replays
