"""ref_impl/kafka/replay_state.py: the spec state the reference broker replays a trace to is exactly
the state TLC hands on from one window of the trace to the next (trace_check/traces/handoff.py),
every variable but the history variable ``action``; and an event the broker cannot take ends the
replay for good."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from ref_impl.kafka.replay_state import SpecStates, spec_states
from ref_impl.kafka.sim.faults import Faults
from ref_impl.kafka.sim.run import simulate, write_trace
from ref_impl.kafka.sim.workloads import Workload
from trace_check.traces import handoff
from trace_check.traces.options import CheckOptions
from trace_check.traces.reader import Trace, read_trace
from trace_check.traces.validation import check_trace_file
from trace_check.traces.verdicts import Status
from trace_check.values.tla import FnMap, Record
from trace_check.values.tla import function_value as function
from trace_check.values.tlc_print import parse_value


def simulated(tmp_path: Path, workload: str, faults: str, seed: int) -> Trace:
    head, events = simulate(Workload.parse(workload), Faults.parse(faults), seed)
    write_trace(tmp_path / "t.jsonl", head, events)
    return read_trace(tmp_path / "t.jsonl")


def events(trace: Trace, start: int, end: int) -> list[dict[str, Any]]:
    return [dict(e) for e in trace.events[start:end]]


def same_form(a: Any, b: Any) -> bool:
    """``a == b``, and every value of the same kind: a ``Record`` equals an ``FnMap`` with the same
    items, but TLC prints (and reads) the two differently."""
    if type(a) is not type(b):
        return False
    if isinstance(a, (Record, FnMap)):
        return a.keys() == b.keys() and all(same_form(a[k], b[k]) for k in a)
    if isinstance(a, tuple):
        return len(a) == len(b) and all(same_form(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, frozenset):
        theirs = {x: x for x in b}
        return a == b and all(same_form(x, theirs[x]) for x in a)
    return bool(a == b)


@pytest.mark.tlc
@pytest.mark.parametrize("workload,faults,seed", [
    # TV1, consume-transform-produce: the group, its offsets, a failover, retries, a hang, a leader restart
    ("ctp:aborts=true,version=TV1", "all", 3),
    # TV1V, pipelined batches: verification, held batches, a client's fly, a failed append
    ("transfer:aborts=true,txns=4,version=TV1V,batches=2,records=2,in_flight=2",
     "loss=1,late=EndTxn,retries=2,hangs=1,failovers=1,restarts=1,append-fails=1", 4),
    # TV2, consume-transform-produce: producer expiry, a coordinator's timeout abort
    ("ctp:aborts=true", "loss=1,retries=2,hangs=1,failovers=1,restarts=1,expiry,txn-timeouts", 2),
])
def test_the_broker_replays_to_the_state_tlc_hands_on(tmp_path: Path, workload: str, faults: str, seed: int) -> None:
    trace = simulated(tmp_path, workload, faults, seed)
    size = len(trace.events) // 3 + 1  # two hand-offs, mid-run (a TLC run takes some 3 s)
    v = check_trace_file(tmp_path / "t.jsonl", CheckOptions(every_step=False, workdir=tmp_path / "w", window=size))
    assert v.status is Status.ACCEPTED and v.windows == 3, v.reason or v.message
    replay = spec_states(dict(trace.constants))
    compared = 0
    for k in range(1, v.windows):
        state = replay.advance(events(trace, (k - 1) * size, k * size))
        assert state is not None, f"window {k}: the broker could not take the window's events"
        handed = handoff.read_states(tmp_path / "w" / f"window{k}" / "accept" / "tlc.log")
        if len(handed) != 1:  # partial logging: TLC hands on several states, none of them the one
            continue
        truth = parse_value(handed[0])
        assert isinstance(truth, Record)
        # the hand-off's logs hold the entries after the window's bases (handoff.Base): joined here
        folder = tmp_path / "w" / f"window{k}" / "accept"
        whole = dict(truth)
        for log in ("plog", "tlog"):
            if (folder / f"TraceBase_{log}.txt").is_file():
                base = dict(handoff.keyed(parse_value((folder / f"TraceBase_{log}.txt").read_text())))
                after = dict(handoff.keyed(whole[log]))
                whole[log] = function({key: tuple(base.get(key, ())) + tuple(after[key]) for key in after})
        truth = Record(whole)
        expected = Record({name: x for name, x in truth.items() if name != "action"})
        assert state == expected, f"window {k}"
        assert same_form(state, expected), f"window {k}"
        compared += 1
    assert compared >= 1


def test_an_event_the_broker_cannot_take_ends_the_replay(tmp_path: Path) -> None:
    trace = simulated(tmp_path, "transfer:aborts=true,txns=3,version=TV1", "loss=1,retries=2,failovers=1", 2)
    n = len(trace.events)
    assert n > 40
    assert SpecStates(dict(trace.constants)).advance(events(trace, 0, n)) is not None

    # A step that is not enabled: a coordinator's answer on a message that is not in flight.
    k = next(i for i, e in enumerate(trace.events) if e["action"] == "TcEndTxn" and i > 20)
    replay = SpecStates(dict(trace.constants))
    assert replay.advance(events(trace, 0, k)) is not None
    broken = events(trace, k, n)
    broken[0]["txn"] = broken[0]["txn"] + 50
    assert replay.advance(broken) is None
    assert replay.advance(events(trace, k, n)) is None  # and from then on
    assert replay.advance([]) is None

    # An enabled step whose logged result is not the broker's.
    wrong = events(trace, 0, n)
    wrong[k]["result"] = "PRODUCER_FENCED" if wrong[k].get("result") != "PRODUCER_FENCED" else "NONE"
    assert SpecStates(dict(trace.constants)).advance(wrong) is None

    # An action the broker does not know.
    unknown = events(trace, 0, 5)
    unknown[3]["action"] = "Teleport"
    assert SpecStates(dict(trace.constants)).advance(unknown) is None


def test_functions_take_the_form_tlc_prints() -> None:
    """TLC prints a function as a sequence when its domain is 1..n, as a record when its domain is
    strings that are all names (FcnRcdValue.isName), else as ``k :> v @@ ...``."""
    assert function({}) == ()
    assert function({2: "b", 1: "a"}) == ("a", "b")
    assert function({2: "b"}) == FnMap({2: "b"})
    assert function({0: "z", 1: "a"}) == FnMap({0: "z", 1: "a"})
    assert function({("t1", 1): 0}) == FnMap({("t1", 1): 0})
    assert function({"t1": 1, "t_2": 2}) == Record(t1=1, t_2=2)
    assert function({"WF_": 1}) == Record(WF_=1)  # the WF_/SF_ rule holds from four characters on
    for other in ("app-1", "1", "_", "WF_t1", "SF_abc", "x y", ""):
        assert type(function({other: 1, "t1": 2})) is FnMap, other
