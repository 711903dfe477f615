"""Partition leader crash and restart (LeaderRestart), and standalone consumers' offset commits
(OffsetCommit): the reference broker, its traces, and what the spec accepts and rejects."""

from __future__ import annotations

import json
from pathlib import Path

import attrs
import pytest

from ref_impl.kafka import leader
from ref_impl.kafka.api import Consumer, IllegalStateError, KafkaError
from ref_impl.kafka.cluster import Cluster
from ref_impl.kafka.constants import Constants
from ref_impl.kafka.sim.faults import Fault, Faults, Schedule
from ref_impl.kafka.sim.run import simulate, write_trace
from ref_impl.kafka.sim.scheduler import Simulation
from ref_impl.kafka.sim.workloads import Workload
from trace_check.traces.reader import TraceError, read_trace
from trace_check.traces.validation import check_trace


def events_of(w: str, f: str, seed: int, schedule: Schedule | None = None) -> tuple[dict, list[dict]]:
    return simulate(Workload.parse(w), Faults.parse(f), seed, schedule=schedule)


def write(tmp: Path, head: dict, events: list[dict], name: str = "t.jsonl") -> Path:
    path = tmp / name
    write_trace(path, head, events)
    return path


def restart_with_a_held_batch() -> tuple[dict, list[dict]]:
    """A TV2 run in which a leader restarts while it holds a batch for verification."""
    for seed in range(60):
        for at in range(4, 30, 2):
            head, events = events_of("transfer", "none", seed, Schedule((Fault(at, "restart", seed),)))
            held: set[int] = set()
            for ev in events:
                if ev["action"] == "LeaderProduce" and ev.get("result") is None:
                    held.add(ev["partition"])
                elif ev["action"] in ("LeaderVerified", "LeaderVerifyLost"):
                    held.discard(ev["partition"])
                elif ev["action"] == "LeaderRestart" and ev["partition"] in held:
                    return head, events
    raise AssertionError("no run restarted a leader that held a batch")


# --- the reference broker, without TLC ---


def test_a_restarted_leader_rebuilds_what_its_snapshot_keeps_of_the_producer_state() -> None:
    """ProducerStateInLog: epoch, last sequence, open transaction and coordinator epoch as in
    memory; of the sequences only the last batch's (memory keeps five); no verification state."""
    for seed in range(30):
        sim = Simulation(Workload.parse("transfer:txns=3,aborts=true"), Faults.parse("all"), seed, lambda ev: None)
        sim.run()
        c = sim.cluster
        for p in c.parts:
            for t in c.k.txn_ids:
                s, loaded = c.pst[p][t], leader.load_producer_state(c.plog[p], t)
                assert attrs.evolve(s, seqs=loaded.seqs, vepoch=-1, vseq=-1) == loaded, (seed, p, t)
                assert loaded.seqs <= s.seqs and loaded.seqs <= {loaded.last_seq}, (seed, p, t)


def test_restart_is_a_fault_the_constants_must_allow() -> None:
    c = Cluster(Constants(version="TV2"))
    assert not c.leader_restart_enabled(1)
    assert Cluster(Constants(version="TV2", leader_restarts=True)).leader_restart_enabled(1)
    assert Faults.parse("restarts=2").restarts == 2 and Faults.parse("all").restarts == 1


def test_a_standalone_consumer_commits_and_reads_back_its_positions() -> None:
    sim = Simulation(Workload.parse("transfer:txns=2"), Faults(), 3, lambda ev: None)
    sim.run()
    c = sim.cluster
    reader = Consumer(c, "read_committed", group_id="audit")
    reader.assign(c.parts)
    assert reader.committed() == {p: None for p in c.parts}
    reader.poll()
    reader.commit()
    assert reader.committed() == {p: reader.positions[p] for p in c.parts}
    with pytest.raises(KafkaError, match="OFFSET_OUT_OF_RANGE"):
        reader.commit({1: len(c.plog[1]) + 1})
    with pytest.raises(IllegalStateError, match="group_id"):
        Consumer(c).commit()


# --- traces under the spec (TLC) ---


@pytest.mark.tlc
def test_a_restart_that_loses_a_held_batch_is_accepted(tmp_path: Path) -> None:
    head, events = restart_with_a_held_batch()
    v = check_trace(read_trace(write(tmp_path, head, events)))
    assert v.status == "accepted", v.reason or v.message


@pytest.mark.tlc
def test_a_leader_that_forgets_producer_state_on_restart_is_rejected(tmp_path: Path) -> None:
    # The bug restart_forgets_producers (model kafka_restart_forgets_producers): after a restart
    # the leader knows no producer, so the next batch of a producer whose sequence is past 0
    # fails (OUT_OF_ORDER_SEQUENCE_NUMBER) where the spec appends it.
    for seed in range(40):
        schedule = Schedule((Fault(12, "restart", 0),))
        head, events = simulate(Workload.parse("transfer:version=TV1,txns=3"), Faults(), seed, schedule=schedule,
                                bugs=("restart_forgets_producers",))
        if any(ev.get("error") == "OUT_OF_ORDER_SEQUENCE_NUMBER" for ev in events):
            break
    else:
        raise AssertionError("the broken restart never showed")
    v = check_trace(read_trace(write(tmp_path, head, events)))
    assert v.status == "rejected"
    bad = events[v.at_event - 1]
    assert bad["action"] == "LeaderProduce" and bad["result"] == "OUT_OF_ORDER_SEQUENCE_NUMBER"


@pytest.mark.tlc
def test_a_restart_the_constants_do_not_allow_is_rejected(tmp_path: Path) -> None:
    head, events = restart_with_a_held_batch()
    head = {**head, "constants": {**head["constants"], "LeaderRestarts": False}}
    v = check_trace(read_trace(write(tmp_path, head, events)))
    assert v.status == "rejected"
    assert events[v.at_event - 1]["action"] == "LeaderRestart"
    # the guard's conjunct that is false: the constant that allows restarts (guards.py, through Kafka's dispatch)
    assert v.reason.endswith("LeaderRestart is not enabled here: conjunct 1 of its guard is false in this state "
                             "(with the event's arguments): LeaderRestarts"), v.reason


@pytest.mark.tlc
def test_offset_commits_are_checked_against_the_log(tmp_path: Path) -> None:
    for seed in range(20):
        head, events = events_of("transfer:txns=3", "none", seed)
        commits = [k for k, ev in enumerate(events) if ev["action"] == "OffsetCommit"]
        if commits:
            break
    else:
        raise AssertionError("no run committed an offset")
    assert check_trace(read_trace(write(tmp_path, head, events))).status == "accepted"
    k = commits[0]
    past_end = [dict(ev) for ev in events]
    past_end[k]["committed_offset"] = 10_000  # a position the consumer cannot have reached
    v = check_trace(read_trace(write(tmp_path, head, past_end, "past.jsonl")))
    assert v.status == "rejected" and v.at_event == k + 1


def test_offset_commit_events_need_their_group_and_offset(tmp_path: Path) -> None:
    head, events = events_of("transfer:txns=3", "none", 1)
    events = [*events, {"action": "OffsetCommit", "actor": "consumer", "partition": 1, "committed_offset": 0}]
    path = write(tmp_path, head, events)
    with pytest.raises(TraceError, match=r':\d+: OffsetCommit: field "group" is missing'):
        read_trace(path)
    events[-1] = {"action": "Fetch", "actor": "consumer", "partition": 1, "isolation": "read_committed", "from": 0,
                  "committed_offset": 3}
    with pytest.raises(TraceError, match='"committed_offset" belongs to OffsetCommit'):
        read_trace(write(tmp_path, head, events))


def test_traces_written_before_restarts_existed_still_read(tmp_path: Path) -> None:
    head, events = events_of("transfer", "none", 2)
    del head["constants"]["LeaderRestarts"]
    path = write(tmp_path, head, events)
    assert read_trace(path).constants["LeaderRestarts"] is False
    assert json.loads(path.read_text().splitlines()[0])["constants"].get("LeaderRestarts") is None
