"""Parallel windows (issue 24): a window runs from the state the reference engine replays the trace
to, at the same time as the window before it, and its verdict stands only if that window ends in
exactly that state (trace_check/traces/windows.py: ``check_windows``). The claim is that the
verdict is the one of a single run, whatever the engine says: these tests compare verdicts with the
engine right, wrong, and unable to replay, on accepted, violating, rejected and partly logged
traces, and check that no TLC run outlives the check."""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

import attrs
import pytest

from ref_impl.kafka.sim.faults import Fault, Faults, Schedule
from ref_impl.kafka.sim.run import simulate, write_trace
from ref_impl.kafka.sim.workloads import Workload
from trace_check.traces import handoff, plugins, spec_text
from trace_check.traces.options import CheckOptions
from trace_check.traces.protocol import Protocol, SimulateOptions, StateReplay
from trace_check.traces.reader import Trace, read_trace
from trace_check.traces.validation import check_trace, check_trace_file
from trace_check.traces.verdicts import Status, Verdict
from trace_check.traces.window_sizes import WINDOW, balanced_size

pytestmark = pytest.mark.tlc

TOLD = ("status", "events", "at_event", "invariant", "event", "reason", "state_before", "message", "distinct_states")


def same(one: Verdict, parallel: Verdict) -> None:
    """The verdicts agree on everything the user is told (the time and the run counts aside)."""
    assert parallel.windows > 1 and parallel.jobs > 1, "the test meant to run windows in parallel"
    for field in TOLD:
        assert getattr(parallel, field) == getattr(one, field), field


def write(path: Path, header: dict[str, Any], events: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(x) + "\n" for x in [header, *events]))
    return path


def first(events: tuple[dict[str, Any], ...], pred: Callable[[dict[str, Any]], bool]) -> int:
    return next(n for n, ev in enumerate(events, 1) if pred(ev))


# --- what the engine says, for the tests: the plug-in's replay, made wrong or dead on purpose ---


@attrs.define
class Wrong:
    """The plug-in's replay, with one variable changed in every state it gives."""

    inner: StateReplay

    def advance(self, events: list[dict[str, Any]]) -> Mapping[str, Any] | None:
        state = self.inner.advance(events)
        return None if state is None else {**state, "cepoch": 77}


@attrs.define
class Dead:
    """A replay that cannot take the trace's first events."""

    def advance(self, events: list[dict[str, Any]]) -> Mapping[str, Any] | None:
        return None


@pytest.fixture
def replayed_by(monkeypatch: pytest.MonkeyPatch) -> Callable[[Callable[[StateReplay], StateReplay]], None]:
    """Make the Kafka plug-in's replay go through ``wrap`` for the rest of the test."""

    def install(wrap: Callable[[StateReplay], StateReplay]) -> None:
        real = plugins.get("kafka")
        assert real.spec_states is not None
        inner = real.spec_states
        changed = attrs.evolve(real, spec_states=lambda constants: wrap(inner(constants)))
        get = plugins.get
        monkeypatch.setattr(plugins, "get", lambda name: changed if name == "kafka" else get(name))

    return install


def tlc_children() -> list[int]:
    """The java processes started by this test process (a TLC run left behind would be one)."""
    mine = str(os.getpid())
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            cmd = (entry / "cmdline").read_bytes()
        except OSError:
            continue
        ppid = stat.rsplit(")", 1)[1].split()[1]
        if ppid == mine and b"tlc2.TLC" in cmd:
            found.append(int(entry.name))
    return found


@pytest.fixture(scope="module")
def faulty(tmp_path_factory: pytest.TempPathFactory) -> Trace:
    """A faulty TV1 run with a failover and a retried request."""
    tmp = tmp_path_factory.mktemp("faulty")
    for seed in range(1, 40):
        head, events = simulate(Workload.parse("transfer:version=TV1,aborts=true,txns=4"), Faults.parse("all"), seed)
        write_trace(tmp / "t.jsonl", head, events)
        trace = read_trace(tmp / "t.jsonl")
        actions = {ev["action"] for ev in trace.events}
        if {"Failover", "Retry", "TcEndTxn"} <= actions and len(trace.events) > 60:
            return trace
    raise AssertionError("no seed gave a run with a failover and a retry")


@pytest.fixture(scope="module")
def faulty_one(faulty: Trace) -> Verdict:
    v = check_trace(faulty)
    assert v.status is Status.ACCEPTED and v.windows == 1, v.reason or v.message
    return v


def boundaries(trace: Trace) -> list[int]:
    """Window ends inside a transaction, after a failover and after a retried request."""
    evs = trace.events
    ends = {first(evs, lambda ev: ev["action"] == "BeginTxn") + 3, first(evs, lambda ev: ev["action"] == "Failover"),
            first(evs, lambda ev: ev["action"] == "Retry")}
    return sorted(e for e in ends if 0 < e < len(evs))


# --- the verdict is one run's ---


def test_windows_run_ahead_from_the_engines_state_and_get_one_runs_verdict(faulty: Trace, faulty_one: Verdict) -> None:
    ends = boundaries(faulty)
    v = check_trace(faulty, CheckOptions(jobs=2), ends=ends)
    same(faulty_one, v)
    # fully logged: every window's start was the engine's state, so each ran ahead and counted
    assert (v.windows, v.run_ahead, v.run_again) == (len(ends) + 1, len(ends), 0)


def test_a_wrong_engine_state_costs_a_run_not_the_verdict(faulty: Trace, faulty_one: Verdict, replayed_by: Any) -> None:
    replayed_by(Wrong)
    ends = boundaries(faulty)
    v = check_trace(faulty, CheckOptions(jobs=2), ends=ends)
    same(faulty_one, v)
    assert (v.run_ahead, v.run_again) == (0, len(ends))
    assert tlc_children() == []


def test_an_engine_that_cannot_replay_leaves_the_windows_one_at_a_time(faulty: Trace, faulty_one: Verdict,
                                                                       replayed_by: Any) -> None:
    replayed_by(lambda inner: Dead())
    v = check_trace(faulty, CheckOptions(jobs=2), ends=boundaries(faulty))
    same(faulty_one, v)
    assert (v.run_ahead, v.run_again) == (0, 0)


def test_runs_at_once_that_fill_the_cores_compile_with_the_first_tier_alone(faulty: Trace, faulty_one: Verdict,
                                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """Two TLC runs on two cores compile with the JIT's first tier alone (TlcOptions.quick_jit);
    with cores to spare, or one run at a time, TLC keeps its default compilers, unless the run is
    short (QUICK_JIT_EVENTS events or fewer)."""
    from trace_check.traces import one_window, windows

    monkeypatch.setattr(one_window, "QUICK_JIT_EVENTS", 0)  # every window counts as long

    quick: list[bool] = []
    real = one_window.run_task

    def spy(engine: str, task: Any, *args: Any, **kwargs: Any) -> Any:
        quick.append(task.tlc.quick_jit)
        return real(engine, task, *args, **kwargs)

    monkeypatch.setattr(one_window, "run_task", spy)
    ends = boundaries(faulty)
    for cores, jobs, expected in ((2, 2, True), (8, 2, False), (2, 1, False)):
        monkeypatch.setattr(windows.os, "cpu_count", lambda cores=cores: cores)
        quick.clear()
        v = check_trace(faulty, CheckOptions(jobs=jobs), ends=ends)
        assert v.status is Status.ACCEPTED and v.windows == len(ends) + 1, (cores, jobs)
        assert quick == [expected] * (len(ends) + 1), (cores, jobs)
    # a trace of one window is one run
    quick.clear()
    monkeypatch.setattr(windows.os, "cpu_count", lambda: 2)
    v = check_trace(faulty, CheckOptions(jobs=2))
    assert v.status is faulty_one.status and v.windows == 1
    assert quick == [False]
    # a short one compiles with the first tier alone, at or below the bound
    for bound, expected in ((len(faulty.events), True), (len(faulty.events) - 1, False)):
        monkeypatch.setattr(one_window, "QUICK_JIT_EVENTS", bound)
        quick.clear()
        assert check_trace(faulty, CheckOptions(jobs=1)).status is faulty_one.status
        assert quick == [expected], bound


def test_at_the_end_in_parallel(faulty: Trace) -> None:
    one = check_trace(faulty, CheckOptions(every_step=False))
    v = check_trace(faulty, CheckOptions(every_step=False, jobs=2), ends=[len(faulty.events) // 3, 2 * len(faulty.events) // 3])
    same(one, v)
    assert v.run_ahead == 2


def test_a_violation_in_a_window_run_ahead_is_found_again_from_the_hand_off(tmp_path: Path) -> None:
    # KAFKA-17754 under TV1 (tests/test_trace_validation.py): a late EndTxn breaks an invariant.
    schedule = Schedule((Fault(0, "delay", 0, 40, "EndTxn"), Fault(0, "retry", 0, 0, "EndTxn")))
    for seed in range(40):
        head, events = simulate(Workload.parse("transfer:version=TV1,txns=3"), Faults(), seed, schedule=schedule)
        trace = read_trace(write(tmp_path / f"late-{seed}.jsonl", head, events))
        one = check_trace(trace)
        if one.status is Status.VIOLATES:
            assert one.at_event is not None and one.at_event > 10
            v = check_trace(trace, CheckOptions(jobs=2), ends=[one.at_event // 3, one.at_event - 1])
            same(one, v)
            assert v.run_ahead == 1  # the second window's run counted; the third's violation was found again
            assert tlc_children() == []
            return
    raise AssertionError("no run with a late EndTxn broke an invariant")


def test_a_rejected_event_ahead_is_diagnosed_from_the_hand_off_and_the_runs_ahead_stop(faulty: Trace,
                                                                                        tmp_path: Path) -> None:
    events = [dict(e) for e in faulty.events]
    n = first(faulty.events[20:], lambda ev: ev["action"] == "TcAddPartitionsToTxn" and ev.get("result") == "NONE") + 20
    events[n - 1]["result"] = "INVALID_TXN_STATE"
    bad = read_trace(write(tmp_path / "bad.jsonl", faulty.header, events))
    one = check_trace(bad)
    assert one.status is Status.REJECTED and one.at_event == n and one.state_before
    # the engine cannot take the changed event either, so the windows after it have no state to run from
    v = check_trace(bad, CheckOptions(jobs=2), ends=[n // 2, n - 1, n + 5])
    same(one, v)
    assert tlc_children() == []


KEYS = {"action", "event", "actor", "txn_id", "instance", "partition", "isolation", "from", "group", "committed_offset"}


def test_a_trace_logged_in_part(faulty: Trace, tmp_path: Path) -> None:
    """Several states may be handed on, and the engine cannot replay events whose message columns
    are missing: the windows go one at a time, with one run's verdict."""
    partial = [{c: v for c, v in ev.items() if c in KEYS} for ev in faulty.events]
    trace = read_trace(write(tmp_path / "partial.jsonl", faulty.header, partial))
    one = check_trace(trace)
    assert one.status is Status.ACCEPTED
    v = check_trace(trace, CheckOptions(jobs=2), ends=[len(partial) // 3, 2 * len(partial) // 3])
    same(one, v)
    assert v.handed_on > 1 and (v.run_ahead, v.run_again) == (0, 0)


def test_a_file_in_balanced_windows(faulty: Trace, faulty_one: Verdict, tmp_path: Path) -> None:
    path = write(tmp_path / "t.jsonl", faulty.header, list(faulty.events))
    v = check_trace_file(path, CheckOptions(window=len(faulty.events) // 2 + 1, jobs=2))
    same(faulty_one, v)
    assert v.run_ahead == 1


@pytest.mark.parametrize("name,workload,seed", [
    ("ydb", "copy:workers=2,txns=3", 3),
    ("ydb", "copy:workers=2,src=2,dst=2,msgs=4,txns=6,table=true", 2),
    ("cone", "album:adders=3,retaggers=2,attempts=2", 6),
])
def test_every_protocols_windows_run_ahead_from_its_engines_state(tmp_path: Path, name: str, workload: str, seed: int) -> None:
    """YDB's and C*One's engines replay to the state TLC hands on (YDB's Init leaves the
    partitions' owners free: its engine takes them from the first window's reads)."""
    sim = plugins.get(name).simulate(SimulateOptions(seed=seed, workload=workload, faults="all"))
    trace = read_trace(write(tmp_path / f"{name}.jsonl", sim.header, list(sim.events)))
    one = check_trace(trace, CheckOptions(engine="tlc"))
    assert one.status is Status.ACCEPTED
    v = check_trace(trace, CheckOptions(engine="tlc", window=len(trace.events) // 4 + 1, jobs=2))
    same(one, v)
    assert (v.run_ahead, v.run_again) == (v.windows - 1, 0)


def test_a_protocol_without_a_replay_checks_its_windows_one_at_a_time(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    real = plugins.get("cone")
    get = plugins.get
    monkeypatch.setattr(plugins, "get", lambda name: attrs.evolve(real, spec_states=None) if name == "cone" else get(name))
    sim = real.simulate(SimulateOptions(seed=3, workload="album:adders=2,retaggers=1", faults="all"))
    trace = read_trace(write(tmp_path / "cone.jsonl", sim.header, list(sim.events)))
    v = check_trace(trace, CheckOptions(engine="tlc", window=len(trace.events) // 2 + 1, jobs=2))
    assert v.status is Status.ACCEPTED and v.windows == 2 and v.jobs == 1


# --- the pieces ---


def test_windows_are_balanced_for_the_jobs() -> None:
    assert balanced_size(None, 10_004, 2) == 5_002  # two windows, one per core
    assert balanced_size(None, 100_004, 2) == 5_001  # twenty
    assert balanced_size(None, 12_000, 2) == 6_000
    assert balanced_size(None, 31_000, 2) == 5_167  # six: round(6.2) = 6
    assert balanced_size(None, 7_000, 4) == 1_750  # four, one per core
    assert balanced_size(None, WINDOW, 2) == WINDOW  # one window: one run, as fast as two half windows at once
    assert balanced_size(None, 10_004, 1) == WINDOW
    assert balanced_size(700, 10_004, 2) == 700  # asked for


def _tokens(text: str) -> Iterator[tuple[int, str]]:
    """The names in a line of TLA+, primed ones with their prime; record fields (``r.f``,
    ``[f |-> v]``) are not names."""
    for m in re.finditer(r"(?<![\w.])[A-Za-z_]\w*'?(?!\s*\|->)", text):
        yield m.start(), m.group()


def history_reads(text: str, var: str) -> list[str]:
    """The lines of a module that use history variable ``var`` otherwise than primed (set by a
    step), in its declaration, in a tuple of variables, or in Init's assignment."""
    text = spec_text.COMMENT_RE.sub(lambda m: " " * len(m.group()), text)
    text = spec_text.STRING_RE.sub(lambda m: " " * len(m.group()), text)
    found = []
    definition = ""
    for line in text.splitlines():
        if (d := re.match(r"(\w+)\s*(\(.*\))?\s*==", line)) is not None:
            definition = d.group(1)
        if any(tok == var for _, tok in _tokens(line)) and not (
            line.strip() in (var, var + ",")  # a VARIABLES declaration, one per line
            or re.match(r"\s*\w+ == <<[\w, ]*>>\s*$", line)  # vars == <<..., action>>
            or (definition == "Init" and re.match(rf"\s*/\\ {var} = ", line))
        ):
            found.append(line.strip())
    return found


@pytest.mark.parametrize("name", plugins.names())
def test_no_module_reads_a_history_variable(name: str) -> None:
    """The plug-in's claim (Protocol.history) that lets a hand-off be compared without them, on
    the text of every module the trace check reads."""
    protocol: Protocol = plugins.get(name)
    if not protocol.history:
        pytest.skip(f"{name} names no history variable")
    assert set(protocol.history) <= set(handoff.state_fields(protocol))
    for module in sorted(protocol.spec_dir.glob("*.tla")):
        if not module.name.startswith("MC"):
            for var in protocol.history:
                assert history_reads(module.read_text(), var) == [], module.name


def test_a_read_of_a_history_variable_is_found() -> None:
    spec = (plugins.get("kafka").spec_dir / "KafkaTxn.tla").read_text()
    assert history_reads(spec, "action") == []
    planted = spec.replace("    /\\ ~OpenClients\n    /\\ cl[i].st = \"down\"", "    /\\ action.name # \"Drop\"\n    /\\ cl[i].st = \"down\"", 1)
    assert planted != spec
    assert history_reads(planted, "action") == ["/\\ action.name #"]  # (the string blanked)
    kept = "UNCHANGED <<coordVars, leaderVars, groupVars, faultVars>>"
    unchanged = spec.replace(kept, kept[:-2] + ", action>>", 1)
    assert len(history_reads(unchanged, "action")) == 1


def test_a_start_written_from_kept_entry_texts_is_the_start_written_whole(tmp_path: Path) -> None:
    """The replayed states become windows' starts through StartWriter, which writes a log entry
    once and keeps its text while the entry stays in its log: at every window, its text is
    as_start's, byte for byte, on a run whose unclean election cuts a log back (seed 21: event
    114), so entries it had written are dropped and new ones take their offsets."""
    from trace_check.traces.reader import windows_of
    from trace_check.traces.windows import StartWriter, as_start

    head, events = simulate(Workload.parse("transfer:ids=2,txns=6,aborts=true,resilient=true"),
                            Faults.parse("loss=1,retries=2,failovers=1,unclean"), 21, max_events=3000)
    assert any(e["action"] == "UncleanElection" for e in events)
    write_trace(tmp_path / "t.jsonl", head, events)
    trace = read_trace(tmp_path / "t.jsonl")
    protocol = trace.protocol
    replay = protocol.spec_states(dict(trace.constants))
    writer = StartWriter(protocol, protocol.history)
    kept, forgotten = [], False
    for win in windows_of(trace, 30):
        state = replay.advance([dict(e) for e in win.events])
        assert state is not None
        assert writer(state) == (None, as_start(state, protocol.history))
        forgotten = forgotten or (kept != [] and not set(kept) <= set(writer._kept))
        kept = list(writer._kept)
    assert forgotten, "the cut dropped no entry the writer had kept"
