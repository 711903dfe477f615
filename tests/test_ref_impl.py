"""The reference broker: Kafka's behaviour step by step, determinism, and replay."""

from __future__ import annotations

from typing import Any

import attrs
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ref_impl.kafka.actions import run
from ref_impl.kafka.api import IllegalStateError, Producer
from ref_impl.kafka.cluster import Cluster
from ref_impl.kafka.constants import Constants
from ref_impl.kafka.log import Entry, PartitionLog
from ref_impl.kafka.messages import Msg
from ref_impl.kafka.replay import replay
from ref_impl.kafka.sim.faults import Fault, Faults, Schedule
from ref_impl.kafka.sim.run import simulate, write_trace
from ref_impl.kafka.sim.workloads import Workload
from ref_impl.kafka.state import Held
from ref_impl.sim.settings import SettingsError


def data(pid: str) -> Entry:
    return Entry("data", pid, 0, 0)


def marker(pid: str, commit: bool) -> Entry:
    return Entry("marker", pid, 0, commit=commit)


def test_lso_is_the_first_offset_of_the_earliest_open_transaction() -> None:
    log = PartitionLog([data("a"), data("b"), marker("a", True), data("a")])
    assert log.lso() == 1  # b's record at offset 1 is still open
    log.append(marker("b", False))
    assert log.lso() == 3  # a's second transaction, from offset 3
    assert log.aborted_index() == [("b", 1, 4)]


def test_read_committed_skips_aborted_and_stops_at_the_lso() -> None:
    log = PartitionLog([data("a"), data("b"), marker("b", False), data("b"), marker("a", True)])
    assert log.fetch("read_uncommitted", 0) == [0, 1, 3]
    assert log.fetch("read_committed", 0) == [0]  # 1 aborted; 3 open (LSO 3)
    assert log.fetch("read_committed", 0, lso_inclusive=True) == [0, 3]  # Redpanda's 2022 bug
    assert log.fetch("read_committed", 1) == []


def _lso_by_reading(entries: list[Entry]) -> int:
    """The LSO found by reading the whole log, as PartitionLog did before it kept an index."""
    open_from: dict[str, int] = {}
    for i, e in enumerate(entries):
        if e.kind == "marker":
            open_from.pop(e.pid, None)
        elif e.pid not in open_from:
            open_from[e.pid] = i
    return min(open_from.values(), default=len(entries))


def _read_committed_by_reading(entries: list[Entry], start: int, lso_inclusive: bool) -> list[int]:
    lso = _lso_by_reading(entries)
    aborted, first = [], {}
    for i, e in enumerate(entries):
        if e.kind == "data":
            first.setdefault(e.pid, i)
        elif (a := first.pop(e.pid, None)) is not None and not e.commit:
            aborted.append((e.pid, a, i))
    return [i for i, e in enumerate(entries) if e.kind == "data" and i >= start and (i <= lso if lso_inclusive else i < lso)
            and not any(pid == e.pid and a <= i <= b for pid, a, b in aborted)]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.one_of(st.tuples(st.just("data"), st.sampled_from("abc")),
                          st.tuples(st.just("marker"), st.sampled_from("abc"), st.booleans()),
                          st.tuples(st.just("cut"), st.integers(0, 30))), max_size=40),
       st.integers(0, 30), st.booleans())
def test_the_kept_index_answers_as_reading_the_whole_log_does(ops: list[tuple], start: int, inclusive: bool) -> None:
    """PartitionLog keeps its LSO and ABORT ranges as entries are appended, and builds them again
    after a cut (an unclean election): after every step its answers are those of reading the log."""
    log = PartitionLog([data("a")])
    for op in ops:
        if op[0] == "data":
            log.append(data(op[1]))
        elif op[0] == "marker":
            log.append(marker(op[1], op[2]))
        else:
            log.truncate(min(op[1], len(log)))
        assert log.lso() == _lso_by_reading(log.entries)
        assert log.fetch("read_committed", start, inclusive) == _read_committed_by_reading(log.entries, start, inclusive)
        assert log.fetch("read_uncommitted", start) == [i for i, e in enumerate(log.entries) if e.kind == "data" and i >= start]


@settings(max_examples=200, deadline=None)
@given(st.lists(st.one_of(st.tuples(st.sampled_from(["Empty", "Ongoing", "PrepareCommit", "CompleteAbort"]),
                                    st.integers(1, 3), st.integers(0, 2), st.booleans()),
                          st.just("ask"), st.just("new list")), max_size=30))
def test_latest_instance_kept_between_questions_is_the_one_read_from_the_whole_log(ops: list[Any]) -> None:
    """ClusterState.latest_instance reads only the coordinator log's entries appended since its
    last answer: after any appends, questions and a replaced log, it answers as reading all does."""
    from ref_impl.kafka.messages import is_fence
    from ref_impl.kafka.state import TxnEntry

    def by_reading(log: list[TxnEntry]) -> int:
        for e in reversed(log):
            if e.st == "Empty":
                return e.gtx[1]
            if is_fence(e.end_by):
                return e.end_by[1]
        return 0

    c = Cluster(Constants())
    t = c.k.txn_ids[0]
    for op in ops:
        if op == "new list":
            c.tlog[t] = []
        elif op != "ask":
            st_, inst, txn, fence = op
            c.tlog[t].append(TxnEntry(st_, 0, frozenset(), gtx=(t, inst, txn), end_by=(t, inst, 0) if fence else (t, inst, txn + 1)))
        assert c.latest_instance(t) == by_reading(c.tlog[t])


def started(k: Constants) -> Cluster:
    """A cluster whose instance 1 of t1 holds epoch 0 and is in a transaction."""
    c = Cluster(k)
    i = ("t1", 1)
    assert run(c, "StartInstance", i)
    m = c.net[0]
    assert run(c, "TcInitProducerId", m) and run(c, "TcAppend", "t1")
    assert run(c, "ClientReceive", c.net[0])
    assert c.cl[i].st == "ready" and c.cl[i].epoch == 0
    assert run(c, "BeginTxn", i)
    return c


def test_a_retried_batch_is_answered_as_a_duplicate_and_not_appended_again() -> None:
    c = started(Constants(version="TV1", num_partitions=1))
    i = ("t1", 1)
    assert run(c, "SendRequest", i) and run(c, "TcAddPartitionsToTxn", c.net[0]) and run(c, "TcAppend", "t1")
    assert run(c, "ClientReceive", c.net[0])
    assert run(c, "SendRequest", i)
    produce = c.net[0]
    assert produce.type == "Produce" and produce.seq == 0
    assert run(c, "LeaderProduce", produce)
    assert len(c.plog[1]) == 1
    c.send(produce)  # the same batch again (a retry)
    assert run(c, "LeaderProduce", produce)
    assert len(c.plog[1]) == 1
    assert [m.err for m in c.net if m.type == "ProduceResp"] == ["NONE"]


def test_held_batches_are_a_set_as_in_the_spec() -> None:
    """KafkaTxn's held is a set: the same batch sent again the same way (after a retriable error,
    with the same attempt number) while its first copy still waits for verification is one held
    batch, and a marker that voids two copies makes them one. As a list, the engine once answered
    the merged copy a second time (LeaderVerifyLost), which the spec rejects (simulate --seed 3099
    --workload ctp:aborts=true --faults loss=1,late=EndTxn+Produce,retries=2, event 23)."""
    c = started(Constants(version="TV2", num_partitions=1, num_instances=1, txns_per_instance=1))
    assert run(c, "SendRequest", ("t1", 1))
    produce = c.net[0]
    assert run(c, "LeaderProduce", produce)
    c.send(produce)  # the same batch again
    assert run(c, "LeaderProduce", produce)
    assert c.held[1] == [Held(produce)] and [m.type for m in c.net] == ["Verify"]
    marker = attrs.evolve(produce, type="WriteTxnMarkers", commit=False, cepoch=0)
    c.send(marker)
    assert run(c, "LeaderMarker", marker) and c.held[1] == [Held(produce, void=True)]
    c.send(produce)  # held again beside the voided copy: two batches, as in the spec
    assert run(c, "LeaderProduce", produce) and c.held[1] == [Held(produce, void=True), Held(produce)]
    c.send(marker)
    assert run(c, "LeaderMarker", marker) and c.held[1] == [Held(produce, void=True)]


def test_without_idempotence_the_retry_is_appended_twice() -> None:
    c = started(Constants(version="TV1", num_partitions=1, bugs=("no_idempotence",)))
    i = ("t1", 1)
    assert run(c, "SendRequest", i) and run(c, "TcAddPartitionsToTxn", c.net[0]) and run(c, "TcAppend", "t1")
    assert run(c, "ClientReceive", c.net[0]) and run(c, "SendRequest", i)
    produce = c.net[0]
    assert run(c, "LeaderProduce", produce)
    c.send(produce)
    assert run(c, "LeaderProduce", produce)
    assert len(c.plog[1]) == 2


def test_a_new_instance_fences_the_old_one() -> None:
    c = started(Constants(version="TV1", num_partitions=1, max_hangs=1))
    old, new = ("t1", 1), ("t1", 2)
    assert run(c, "SendRequest", old) and run(c, "TcAddPartitionsToTxn", c.net[0]) and run(c, "TcAppend", "t1")
    assert c.tc["t1"].st == "Ongoing"
    assert run(c, "Hang", old) and run(c, "StartInstance", new)
    assert run(c, "TcInitProducerId", c.net[-1])  # Ongoing: fence, answer CONCURRENT_TRANSACTIONS later
    assert c.tc[("t1")].pending[0].entry.st == "PrepareAbort"
    assert run(c, "TcAppend", "t1")
    assert c.tlog["t1"][-1].epoch == 1
    assert run(c, "Resume", old) and run(c, "ClientReceive", next(m for m in c.net if m.type == "AddPartitionsToTxnResp"))
    assert run(c, "SendRequest", old)  # the zombie's produce, with the old epoch
    produce = next(m for m in c.net if m.type == "Produce")
    markers = [m for m in c.net if m.type == "WriteTxnMarkers"]
    assert markers and not markers[0].commit and markers[0].epoch == 1
    assert run(c, "LeaderMarker", markers[0]) and run(c, "LeaderProduce", produce)
    assert any(m.type == "ProduceResp" and m.err == "INVALID_PRODUCER_EPOCH" for m in c.net)


def test_no_epoch_bump_leaves_the_zombie_its_epoch() -> None:
    c = Cluster(Constants(version="TV1", bugs=("no_epoch_bump",), max_hangs=1))
    for inst in (("t1", 1),):
        run(c, "StartInstance", inst)
        run(c, "TcInitProducerId", c.net[0])
        run(c, "TcAppend", "t1")
    run(c, "Hang", ("t1", 1))
    run(c, "StartInstance", ("t1", 2))
    run(c, "TcInitProducerId", next(m for m in c.net if m.inst == 2))
    run(c, "TcAppend", "t1")
    assert c.tlog["t1"][-1].epoch == 0


def test_guards_refuse_steps_the_spec_does_not_allow() -> None:
    c = Cluster(Constants())
    i = ("t1", 1)
    assert not c.begin_txn_enabled(i)  # no InitProducerId yet
    assert not c.start_instance_enabled(("t1", 2))  # instance 1 has not hung
    assert not c.tc_append_enabled("t1")  # nothing pending
    assert not c.leader_produce_enabled(Msg(type="Produce", tid="t1", part=1))  # not in flight
    assert not c.failover_enabled()  # MaxFailovers = 0
    assert not run(c, "BeginTxn", i) and not run(c, "Failover") and c.events == 0


def test_the_producer_api_reports_misuse_as_kafka_errors() -> None:
    c = Cluster(Constants())
    p = Producer(c, "t1", 1)
    with pytest.raises(IllegalStateError, match="begin_transaction"):
        p.begin_transaction()
    with pytest.raises(IllegalStateError, match="no transaction in progress"):
        p.send(1, "x")
    with pytest.raises(IllegalStateError):
        Producer(c, "nope", 1)


def test_same_seed_same_trace_byte_for_byte(tmp_path) -> None:
    w, f = Workload.parse("ctp:ids=2,aborts=true"), Faults.parse("all")
    paths = []
    for n in range(2):
        head, events = simulate(w, f, 11)
        paths.append(tmp_path / f"{n}.jsonl")
        write_trace(paths[-1], head, events)
    assert paths[0].read_bytes() == paths[1].read_bytes()
    _, other = simulate(w, f, 12)
    assert other != events


def test_a_fault_schedule_sets_the_budgets_and_happens() -> None:
    s = Schedule((Fault(0, "hang"), Fault(5, "failover"), Fault(3, "drop")))
    assert s.budgets() == Faults(loss=1, hangs=1, failovers=1)
    head, events = simulate(Workload(), Faults(), 1, schedule=s)
    actions = [e["action"] for e in events]
    assert "Hang" in actions and "Failover" in actions and "Drop" in actions
    assert head["constants"]["MaxFailovers"] == 1
    assert head["faults"].startswith("schedule: ")


def test_replay_reproduces_generated_runs_and_stops_at_a_tampered_event() -> None:
    head, events = simulate(Workload.parse("transfer:version=TV1,aborts=true"), Faults.parse("all"), 4)
    assert replay(head["constants"], events) is None
    tampered = [dict(e) for e in events]
    k = next(n for n, e in enumerate(tampered) if e["action"] == "TcAppend")
    tampered[k]["txn_epoch"] = 7
    assert replay(head["constants"], tampered) == k + 1


@pytest.mark.parametrize("workload", ["transfer:version=TV1,aborts=true", "transfer:version=TV2,aborts=true", "ctp:ids=2,aborts=true"])
def test_events_log_the_offset_an_append_took_and_the_partition_set_of_a_tlog_entry(workload: str) -> None:
    """Trace format version 2: append_offset where a step appended to a partition log (the log
    grew by one, from that offset), nowhere else; txn_partitions on every TcAppend."""
    ends: dict[int, int] = {}
    for seed in range(4):
        _, events = simulate(Workload.parse(workload), Faults.parse("all"), seed)
        ends.clear()
        for e in events:
            if e["action"] in ("LeaderProduce", "LeaderVerified", "LeaderMarker"):
                before = ends.get(e["partition"], 0)
                if "append_offset" in e:
                    assert e["append_offset"] == before and e["log_end"] == before + 1, e
                else:
                    assert e["log_end"] == before, e
                ends[e["partition"]] = e["log_end"]
            else:
                assert "append_offset" not in e, e
            if e["action"] == "TcAppend":
                assert e["txn_partitions"] == sorted(set(e["txn_partitions"])), e
                if e["txn_state"] in ("Empty", "CompleteCommit", "CompleteAbort"):
                    assert e["txn_partitions"] == [], e
            else:
                assert "txn_partitions" not in e, e
            if "producer_id" in e:
                assert e["producer_id"] >= 2**32, e


@pytest.mark.parametrize(
    "text, message",
    [
        ("loss=x", "loss needs a whole number"),
        ("late=Fetch", "a late request is one of"),
        ("lost=1", "unknown fault 'lost'"),
    ],
)
def test_bad_fault_specs_say_what_to_write(text: str, message: str) -> None:
    with pytest.raises(SettingsError, match=message):
        Faults.parse(text)


@pytest.mark.parametrize(
    "text, message",
    [("batch", "unknown workload"), ("transfer:txns=0", "at least 1"), ("ctp:version=TV3", "TV1, TV1V"),
     ("transfer:colour=red", "unknown workload setting"), ("transfer:max_epoch=1", "at least 2"),
     ("transfer:max_epoch=40000", "at most 32767")],
)
def test_bad_workloads_say_what_to_write(text: str, message: str) -> None:
    with pytest.raises(SettingsError, match=message):
        Workload.parse(text)


def test_workload_descriptions_round_trip() -> None:
    for text in ("transfer", "ctp:ids=2,aborts=true", "transfer:txns=3,version=TV1", "transfer:max_epoch=2"):
        w = Workload.parse(text)
        assert Workload.parse(w.describe()) == w


def test_a_lost_offset_fetch_is_sent_again() -> None:
    # the CTP owner asks for its position while "ready"; if the request is lost it must retry, or
    # the application waits forever (the model deadlocked on this before Retry allowed "ready")
    c = Cluster(Constants(version="TV1", num_instances=1, input_size=2, max_loss=1))
    i = ("t1", 1)
    assert run(c, "StartInstance", i) and run(c, "TcInitProducerId", c.net[0]) and run(c, "TcAppend", "t1")
    assert run(c, "ClientReceive", c.net[0])
    assert run(c, "JoinGroup", i) and run(c, "FetchOffset", i)
    fetch = next(m for m in c.net if m.type == "OffsetFetch")
    assert c.cl[i].st == "ready" and run(c, "Drop", fetch)
    assert run(c, "Retry", i)
    assert fetch in c.net


# --- producer-id rotation at the epoch bound (KafkaTxn: EpochOf, PidOf, Exhausted, NewPid, FenceEpoch) ---


def test_generations_split_into_producer_id_and_epoch() -> None:
    k = Constants(max_epoch=2)
    assert [(k.pid_of(g), k.epoch_of(g)) for g in (-1, 0, 1, 2, 3, 5)] == [(-1, -1), (0, 0), (0, 1), (0, 2), (1, 0), (1, 2)]
    assert [k.exhausted(g) for g in (-1, 0, 1, 2, 3)] == [False, False, True, True, False]
    assert k.new_pid(1) == 3 and k.new_pid(4) == 6
    tv1 = Constants(version="TV1", max_epoch=2)
    assert [tv1.fence_epoch(g) for g in (0, 1, 2)] == [1, 2, 2]  # never past max_epoch
    assert [k.fence_epoch(g) for g in (0, 1, 3)] == [2, 2, 5]  # TV2 bumps twice, clamped at max_epoch
    assert k.fenced_error(1, 3) == "INVALID_PRODUCER_ID_MAPPING" and k.fenced_error(0, 1) == "PRODUCER_FENCED"


def end_txn(c: Cluster, i: tuple[str, int]) -> Msg:
    """Run instance i's transaction to its EndTxn answer (TV2, one partition) and return the answer."""
    assert c.cl[i].st == "intxn" or run(c, "BeginTxn", i)
    assert run(c, "SendRequest", i)
    assert run(c, "LeaderProduce", next(m for m in c.net if m.type == "Produce"))
    assert run(c, "TcVerify", next(m for m in c.net if m.type == "Verify")) and run(c, "TcAppend", "t1")
    assert run(c, "LeaderVerified", next(m for m in c.net if m.type == "VerifyResp"))
    assert run(c, "ClientReceive", next(m for m in c.net if m.type == "ProduceResp"))
    c.cl[i].decision = True  # the application commits
    assert run(c, "SendRequest", i) and run(c, "TcEndTxn", next(m for m in c.net if m.type == "EndTxn"))
    assert run(c, "TcAppend", "t1")
    return next(m for m in c.net if m.type == "EndTxnResp")


def complete(c: Cluster) -> None:
    """Write t1's markers and log CompleteCommit / CompleteAbort."""
    assert run(c, "LeaderMarker", next(m for m in c.net if m.type == "WriteTxnMarkers"))
    assert run(c, "TcMarkerAck", next(m for m in c.net if m.type == "WriteTxnMarkersResp"))
    assert run(c, "TcComplete", "t1") and run(c, "TcAppend", "t1")


@pytest.mark.parametrize("bugs, given", [((), 3), (("tv2_overflow_wrong_pid",), 2)])
def test_the_tv2_endtxn_that_exhausts_the_epoch_hands_out_a_new_producer_id(bugs: tuple[str, ...], given: int) -> None:
    c = started(Constants(version="TV2", num_partitions=1, num_instances=1, txns_per_instance=3, max_epoch=2, bugs=bugs))
    i = ("t1", 1)
    assert run(c, "ClientReceive", end_txn(c, i)) and c.cl[i].epoch == 1  # epoch 1 = max_epoch - 1
    complete(c)
    resp = end_txn(c, i)
    assert c.tc["t1"].epoch == 2 and c.tc["t1"].st == "PrepareCommit"  # the markers carry max_epoch
    assert resp.epoch == given  # 3: producer id 1 at epoch 0; the bug (KAFKA-18660): the old id at max_epoch
    assert next(m for m in c.net if m.type == "WriteTxnMarkers").epoch == 2
    complete(c)
    assert c.tlog["t1"][-1].st == "CompleteCommit" and c.tlog["t1"][-1].epoch == 3  # rotated when complete


def test_the_next_instance_of_an_exhausted_epoch_gets_a_new_producer_id() -> None:
    c = started(Constants(version="TV1", num_partitions=1, max_hangs=1, max_epoch=2))
    old, new = ("t1", 1), ("t1", 2)
    assert run(c, "SendRequest", old) and run(c, "TcAddPartitionsToTxn", c.net[0]) and run(c, "TcAppend", "t1")
    assert run(c, "Hang", old) and run(c, "StartInstance", new)
    assert run(c, "TcInitProducerId", c.net[-1]) and run(c, "TcAppend", "t1")
    assert c.tc["t1"].epoch == 1  # the fence: epoch 1 = max_epoch - 1, exhausted
    complete(c)
    assert run(c, "ClientReceive", next(m for m in c.net if m.type == "InitProducerIdResp" and m.inst == 2))
    assert run(c, "ReInit", new) and run(c, "TcInitProducerId", c.net[-1]) and run(c, "TcAppend", "t1")
    assert c.tlog["t1"][-1].st == "Empty" and c.tlog["t1"][-1].epoch == 3  # producer id 1, epoch 0


# --- replication: an unclean election loses a marker (KAFKA-20716) ---


def test_an_unclean_election_truncates_the_log_to_the_follower_and_rebuilds_producer_state() -> None:
    c = started(Constants(version="TV1", num_partitions=1, num_instances=1, unclean_elections=True))
    i = ("t1", 1)
    assert run(c, "SendRequest", i) and run(c, "TcAddPartitionsToTxn", c.net[0]) and run(c, "TcAppend", "t1")
    assert run(c, "ClientReceive", next(m for m in c.net if m.type == "AddPartitionsToTxnResp"))
    assert run(c, "SendRequest", i) and run(c, "LeaderProduce", next(m for m in c.net if m.type == "Produce"))
    assert run(c, "FollowerLag", 1) and c.lag[1] == 1  # the record reached the follower; nothing after will
    c.cl[i].decision = True
    assert run(c, "ClientReceive", next(m for m in c.net if m.type == "ProduceResp")) and run(c, "SendRequest", i)
    assert run(c, "TcEndTxn", next(m for m in c.net if m.type == "EndTxn")) and run(c, "TcAppend", "t1")
    assert run(c, "LeaderMarker", next(m for m in c.net if m.type == "WriteTxnMarkers"))
    assert len(c.plog[1]) == 2 and c.plog[1].lso() == 2
    assert run(c, "UncleanElection", 1)
    assert len(c.plog[1]) == 1 and c.plog[1].lso() == 0  # the marker is gone: the LSO is stuck at the record
    assert c.pst[1]["t1"].open and c.lag[1] == -2
    assert not run(c, "UncleanElection", 1) and not run(c, "FollowerLag", 1)  # once per partition


# --- TV1V: TV1 clients, leaders that verify (KIP-890 part 1) ---


def test_tv1v_leaders_verify_and_the_coordinator_only_checks_the_partition() -> None:
    c = started(Constants(version="TV1V", num_partitions=1, num_instances=1))
    i = ("t1", 1)
    assert run(c, "SendRequest", i) and run(c, "TcAddPartitionsToTxn", c.net[0]) and run(c, "TcAppend", "t1")
    assert run(c, "ClientReceive", next(m for m in c.net if m.type == "AddPartitionsToTxnResp"))
    assert run(c, "SendRequest", i) and run(c, "LeaderProduce", next(m for m in c.net if m.type == "Produce"))
    assert len(c.held[1]) == 1 and not c.tc["t1"].pending  # held for the check
    verify = next(m for m in c.net if m.type == "Verify")
    assert run(c, "TcVerify", verify) and not c.tc["t1"].pending  # a check: nothing to append
    assert next(m for m in c.net if m.type == "VerifyResp").err == "NONE"
    # the same check once the transaction is over: the partition is in no transaction
    c.tc["t1"].st, c.tc["t1"].parts = "CompleteAbort", frozenset()
    assert c.verify_only(verify) == "TRANSACTION_ABORTABLE"


# --- pipelining: a batch that overtakes the one before it (KAFKA-14904, KAFKA-14920) ---


def _first(c: Cluster, type: str, part: int, seq: int = -2) -> Msg:
    return next(m for m in c.net if m.type == type and m.part == part and (seq == -2 or m.seq == seq))


@pytest.mark.parametrize("bugs", [(), ("no_lowest_sequence",)])
def test_a_pipelined_batch_cannot_overtake_one_whose_verification_was_refused(bugs: tuple[str, ...]) -> None:
    k = Constants(version="TV2", num_partitions=2, num_instances=1, txns_per_instance=1, max_in_flight=2, batches=2,
                  max_retries=2, bugs=bugs)
    c = started(k)
    i = ("t1", 1)
    for _ in range(4):  # two batches to each partition, none answered yet
        assert run(c, "SendRequest", i)
    assert [(f.part, f.seq) for f in c.cl[i].fly] == [(1, 0), (1, 1), (2, 0), (2, 1)]
    assert not run(c, "SendRequest", i)  # EndTxn waits for every batch
    assert not run(c, "LeaderProduce", _first(c, "Produce", 2, 1))  # the connection is read in order
    assert run(c, "LeaderProduce", _first(c, "Produce", 1, 0)) and run(c, "LeaderProduce", _first(c, "Produce", 2, 0))
    assert run(c, "TcVerify", _first(c, "Verify", 1))  # adds partition 1: pending
    assert run(c, "TcVerify", _first(c, "Verify", 2))  # CONCURRENT_TRANSACTIONS meanwhile
    assert run(c, "LeaderVerified", _first(c, "VerifyResp", 2))
    assert _first(c, "ProduceResp", 2).err == "NOT_ENOUGH_REPLICAS"
    assert run(c, "TcAppend", "t1")
    # the second batch to partition 2 is read next, verified, and appended or not
    assert run(c, "LeaderProduce", _first(c, "Produce", 2, 1))
    assert run(c, "TcVerify", _first(c, "Verify", 2)) and run(c, "TcAppend", "t1")
    assert run(c, "LeaderVerified", _first(c, "VerifyResp", 2))
    answer = _first(c, "ProduceResp", 2, 1)
    if bugs:  # KAFKA-14920: a leader with no state for the producer takes sequence 1
        assert answer.err == "NONE" and [e.seq for e in c.plog[2].entries] == [1]
        assert run(c, "ClientReceive", _first(c, "ProduceResp", 2, 0))  # retriable: sent again
        assert run(c, "Retry", i) and run(c, "LeaderProduce", _first(c, "Produce", 2, 0))
        assert _first(c, "ProduceResp", 2, 0).err == "OUT_OF_ORDER_SEQUENCE_NUMBER"  # for ever
    else:  # the lowest sequence under verification (0) holds sequence 1 back
        assert answer.err == "OUT_OF_ORDER_SEQUENCE_NUMBER" and len(c.plog[2]) == 0
        assert run(c, "ClientReceive", answer) and len(c.cl[i].fly) == 4  # not the next batch: retriable
        assert run(c, "ClientReceive", _first(c, "ProduceResp", 2, 0))
        assert run(c, "Retry", i) and c.net[-1].seq == 0  # the lowest sequence goes first
        assert run(c, "LeaderProduce", _first(c, "Produce", 2, 0))
        assert run(c, "TcVerify", _first(c, "Verify", 2)) and run(c, "LeaderVerified", _first(c, "VerifyResp", 2))
        assert run(c, "Retry", i) and run(c, "LeaderProduce", _first(c, "Produce", 2, 1))
        assert [e.seq for e in c.plog[2].entries] == [0, 1]


def test_a_restarted_leader_remembers_only_the_last_batch() -> None:
    c = started(Constants(version="TV1", num_partitions=1, num_instances=1, leader_restarts=True, max_in_flight=2,
                          batches=2, max_retries=2))
    i = ("t1", 1)
    assert run(c, "SendRequest", i) and run(c, "TcAddPartitionsToTxn", c.net[0]) and run(c, "TcAppend", "t1")
    assert run(c, "ClientReceive", c.net[-1]) and run(c, "SendRequest", i) and run(c, "SendRequest", i)
    assert run(c, "LeaderProduce", _first(c, "Produce", 1, 0)) and run(c, "LeaderProduce", _first(c, "Produce", 1, 1))
    assert c.pst[1]["t1"].seqs == {0, 1}
    assert run(c, "LeaderRestart", 1)
    assert c.pst[1]["t1"].seqs == {1} and c.pst[1]["t1"].last_seq == 1  # the snapshot keeps the last batch
    assert not any(m.type in ("Produce", "ProduceResp") for m in c.net)  # lost with the connection


def test_pipelining_settings_are_checked() -> None:
    with pytest.raises(ValueError, match="neither time out nor arrive late"):
        Constants(max_in_flight=2, produce_timeouts=True)
    with pytest.raises(ValueError):
        Constants(max_in_flight=6)
    with pytest.raises(SettingsError, match="at most 5"):
        Workload.parse("transfer:in_flight=6")
    with pytest.raises(SettingsError, match="a batch needs a record"):
        Workload.parse("transfer:batches=3,records=2")


# --- KIP-360: a client bumps its epoch after an abortable error ---


def test_a_kip360_client_bumps_its_epoch_after_aborting_and_a_retry_gets_the_same_epoch() -> None:
    k = Constants(version="TV1", num_partitions=1, num_instances=1, client_bumps=True, produce_timeouts=True,
                  late_requests=("Produce",), max_retries=1)
    c = started(k)
    i = ("t1", 1)
    assert run(c, "SendRequest", i) and run(c, "TcAddPartitionsToTxn", c.net[0]) and run(c, "TcAppend", "t1")
    assert run(c, "ClientReceive", c.net[-1]) and run(c, "SendRequest", i)  # the produce
    assert run(c, "ProduceTimeout", i) and c.cl[i].bump  # an abortable error: a bump is due
    c.cl[i].decision = False  # the application aborts
    assert run(c, "SendRequest", i) and run(c, "TcEndTxn", next(m for m in c.net if m.type == "EndTxn"))
    assert run(c, "TcAppend", "t1") and run(c, "ClientReceive", next(m for m in c.net if m.type == "EndTxnResp"))
    assert c.cl[i].st == "init"  # not ready: the epoch is bumped first
    complete(c)
    assert run(c, "ReInit", i)
    bump = c.net[-1]
    assert bump.type == "InitProducerId" and bump.epoch == 0  # with the producer's epoch
    assert run(c, "TcInitProducerId", bump) and run(c, "TcAppend", "t1")
    assert (c.tlog["t1"][-1].st, c.tlog["t1"][-1].epoch, c.tlog["t1"][-1].last) == ("Empty", 1, 0)
    assert run(c, "ClientReceive", next(m for m in c.net if m.type == "InitProducerIdResp"))
    assert (c.cl[i].st, c.cl[i].epoch, c.cl[i].bump) == ("ready", 1, False)
    # a copy of the bump that arrives late is a retry: it gets epoch 1 again, no second bump
    c.send(bump)
    assert run(c, "TcInitProducerId", bump) and run(c, "TcAppend", "t1")
    assert next(m for m in c.net if m.type == "InitProducerIdResp").epoch == 1 and c.tc["t1"].epoch == 1
    # an epoch that is neither the current nor the last one is fenced
    stale = attrs.evolve(bump, epoch=5)
    c.send(stale)
    assert run(c, "TcInitProducerId", stale)
    assert any(m.type == "InitProducerIdResp" and m.err == "PRODUCER_FENCED" for m in c.net)


def test_kip360_bumps_need_one_instance() -> None:
    with pytest.raises(ValueError, match="num_instances = 1"):
        Constants(client_bumps=True, num_instances=2)
    with pytest.raises(SettingsError, match="instances=1"):
        Workload.parse("transfer:bumps=true")
    assert Workload.parse("transfer:bumps=true,instances=1").bumps
