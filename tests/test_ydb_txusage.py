"""YDB's own topic-transaction tests, ported to the reference engine: each takes the steps the
test's client and server take, in the test's order, and expects the outcome YDB's test asserts
(the commit's status, what a reader of the topic sees); every run's trace is accepted by
`txconform check`. The tests are YDB's C++ `TxUsage` suite (ydb-platform/ydb
ydb/public/sdk/cpp/tests/integration/topic/topic_to_table_it.cpp and
ydb/public/sdk/cpp/src/client/topic/ut/topic_to_table_ut.cpp, helpers in ut_utils/txusage_fixture.cpp);
docs/ydb.md ("YDB's own tests") lists which of them are covered here or elsewhere, and why the
others are not.

The spec names topic A (read) and topic B (written); a test's "topic_A" that is only written is
the spec's B. A message the application writes itself is (0, o), SeqNo o + 1, of producer 0; a
transaction's second writer (a second message group) is producer -2."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from ref_impl.ydb import trace
from ref_impl.ydb.actions import run
from ref_impl.ydb.constants import Constants
from ref_impl.ydb.engine import Engine
from ref_impl.ydb.protocol import PROTOCOL
from ref_impl.ydb.replay import replay
from ref_impl.ydb.sim import GENERATOR
from ref_impl.ydb.state import Msg
from trace_check.traces import format as trace_format
from trace_check.traces.options import CheckOptions
from trace_check.traces.reader import read_trace
from trace_check.traces.validation import check_trace
from trace_check.traces.verdicts import Status

Step = tuple[str, Any]


class Run:
    """An engine and its events; ``take`` takes named steps in order, each of which must be enabled."""

    def __init__(self, **constants: Any) -> None:
        self.events: list[dict[str, Any]] = []
        self.e = Engine(Constants(**constants), emit=self.events.append)

    def take(self, *steps: Step) -> None:
        for name, arg in steps:
            assert run(self.e, name, arg), f"{name}({arg}) is not enabled"

    def write(self, w: str, g: int = 0) -> Msg:
        """The worker's writer g writes its next message and the tablet acknowledges it."""
        before = list(self.e.net)
        self.take(("TxWrite", (w, g)))
        [m] = [m for m in self.e.net if m not in before]
        self.take(("PqWrite", m))
        return m.m

    def commit_b_only(self, w: str) -> str:
        """tx.commit() of a transaction whose one participant is tablet B, on several partitions:
        proposed, planned, calculated and executed on B alone (no read sets)."""
        tx = self.e.cl[w].tx
        self.take(("Flush", w), ("CommitTx", w), ("PqPropose", ("B", tx)), ("CoordPlan", tx), ("PqPlanStep", "B"),
                  ("PqCalc", ("B", tx)), ("PqExecute", ("B", tx)))
        for d in sorted(self.e.kqp[tx].dsts):
            self.take(("PartitionApply", ("B", tx, d)))
        self.take(("PqTxDone", ("B", tx)), ("KqpResult", tx))
        return self.e.told[tx]

    def commit_immediate(self, w: str, t: str = "B") -> str:
        """tx.commit() of a transaction with one participant on one partition: KQP's immediate path."""
        tx = self.e.cl[w].tx
        self.take(("Flush", w), ("CommitTx", w), ("PqImmediate", (t, tx)), ("KqpResult", tx))
        return self.e.told[tx]

    def commit_a_and_b(self, w: str) -> str:
        """tx.commit() of a transaction over tablets A and B: proposed, planned, calculated, read
        sets exchanged, executed on every partition, answered."""
        tx = self.e.cl[w].tx
        self.take(("Flush", w), ("CommitTx", w), ("PqPropose", ("A", tx)), ("PqPropose", ("B", tx)), ("CoordPlan", tx))
        for t in ("A", "B"):
            self.take(("PqPlanStep", t), ("PqCalc", (t, tx)))
        for t, q in (("A", "B"), ("B", "A")):
            [rs] = [m for m in self.e.net if m.type == "RS" and m.to == t and m.frm == q]
            self.take(("PqReadSet", rs))
        for t in ("A", "B"):
            self.take(("PqExecute", (t, tx)))
            for k in sorted(self.e.parts_of(t, tx)):
                self.take(("PartitionApply", (t, tx, k)))
            self.take(("PqTxDone", (t, tx)))
        self.take(("KqpResult", tx))
        return self.e.told[tx]

    def accepted(self, tmp_path: Path) -> None:
        assert replay(self.e.k.to_spec(), self.events) is None, "the engine does not replay its own run"
        head = trace_format.header("ydb", trace.SPEC_DIR, trace.SPEC_MODULES, self.e.k.to_spec(), 0, GENERATOR,
                                   trace.LOGGED, workload="explicit", faults="explicit", bugs=[])
        path = tmp_path / "run.jsonl"
        trace_format.write_trace(path, head, self.events, PROTOCOL.columns.order)
        v = check_trace(read_trace(path), CheckOptions(engine="tlc"))
        assert v.status is Status.ACCEPTED, (v.status, v.at_event, v.reason)


def reasons(r: Run, action: str) -> list[tuple[int, str, str | None]]:
    return [(x["txn_id"], x["decision"], x.get("reason")) for x in r.events if x["action"] == action]


@pytest.mark.tlc
def test_write_to_topic_demo_9_two_transactions_of_one_producer_the_later_commits_first(tmp_path: Path) -> None:
    """WriteToTopic_Demo_9 (and _4 on one topic): tx_1 writes message #1, tx_2 writes #2, as the
    same producer; each writer numbers after the producer's last SeqNo at its init (none yet), so
    both messages have SeqNo 1. tx_2 commits first (SUCCESS), then tx_1 is ABORTED: its SeqNo is at
    the producer's last in the partition (partition.cpp ApplyWriteInfoResponse, MinSeqNo). A reader
    sees #2 only."""
    r = Run(workers=("w1", "w2"), max_txns=2, batch_max=1, shapes=("write",), producers="partition")
    r.take(("BeginWrites", "w1"))
    r.write("w1")  # tx_1: message #1, SeqNo 1
    r.take(("BeginWrites", "w2"))
    r.write("w2")  # tx_2: message #2, SeqNo 1 too
    assert r.e.target[1] == [], "nothing is visible before a commit"
    assert (r.commit_immediate("w2"), r.commit_immediate("w1")) == ("COMMITTED", "ABORTED")
    assert r.e.target[1] == [Msg(0, 0)]
    assert reasons(r, "PqImmediate") == [(2, "commit", None), (1, "abort", "MinSeqNo")]
    r.accepted(tmp_path)


@pytest.mark.tlc
def test_write_to_topic_demo_10_two_transactions_one_after_the_other_both_commit(tmp_path: Path) -> None:
    """WriteToTopic_Demo_10 (and _5): two transactions, one message each, one after the other:
    both SUCCESS, the reader sees #1 then #2."""
    r = Run(workers=("w1",), max_txns=2, batch_max=1, shapes=("write",), producers="partition")
    for _ in range(2):
        r.take(("BeginWrites", "w1"))
        r.write("w1")
        assert r.commit_immediate("w1") == "COMMITTED"
    assert r.e.target[1] == [Msg(0, 0), Msg(0, 1)]
    r.accepted(tmp_path)


@pytest.mark.tlc
def test_write_to_topic_demo_13_the_supportive_partition_deleted_before_the_commit_aborts_it(tmp_path: Path) -> None:
    """WriteToTopic_Demo_13: the transaction writes, its write is acknowledged, then the supportive
    partition is deleted (the test's DeleteSupportivePartition: the lock is gone, TEvCheckWriteInfo
    answers STATUS_NOT_FOUND); the commit is ABORTED and nothing is published."""
    r = Run(workers=("w1",), max_txns=1, batch_max=1, shapes=("write",), producers="partition", max_lock_losses=1)
    r.take(("BeginWrites", "w1"))
    r.write("w1")
    r.take(("LockLost", 1), ("PqLockLost", 1))
    assert r.commit_immediate("w1") == "ABORTED"
    assert r.e.target[1] == [] and reasons(r, "PqImmediate") == [(1, "abort", "WriteIdDeleted")]
    r.accepted(tmp_path)


@pytest.mark.tlc
@pytest.mark.parametrize("restart", ["RestartNo", "RestartBeforeCommit", "RestartAfterCommit"])
def test_write_to_topic_demo_16_and_18_a_pq_tablet_restart_before_or_after_the_commit(tmp_path: Path, restart: str) -> None:
    """WriteToTopic_Demo_16 (a restart of the PQ tablet before the commit) and _18 to _23 with
    _RestartNo, _RestartBeforeCommit, _RestartAfterCommit (their message sizes are not modelled):
    the transaction writes two messages, acknowledged; the commit is SUCCESS and the reader sees
    #1, #2 whenever the tablet restarts."""
    r = Run(workers=("w1",), max_txns=1, batch_max=2, shapes=("write",), producers="partition", max_restarts=1)
    r.take(("BeginWrites", "w1"))
    r.write("w1")
    r.write("w1")
    if restart == "RestartBeforeCommit":
        r.take(("TabletRestart", "B"))
    assert r.commit_immediate("w1") == "COMMITTED"
    if restart == "RestartAfterCommit":
        r.take(("TabletRestart", "B"))
    assert r.e.target[1] == [Msg(0, 0), Msg(0, 1)]
    r.accepted(tmp_path)


@pytest.mark.tlc
def test_write_to_topic_demo_25_read_in_a_transaction_and_write_what_was_read(tmp_path: Path) -> None:
    """WriteToTopic_Demo_25: topic A holds messages; a transaction reads them (as its consumer, in
    the transaction) and writes them to topic B, and commits: SUCCESS, B holds exactly them, and
    the consumer's committed offset is past them."""
    r = Run(workers=("w1",), msgs_per_src=2, max_txns=1, batch_max=2)
    r.take(("ReadBatch", ("w1", 1, 2)))
    r.write("w1")
    r.write("w1")
    assert r.commit_a_and_b("w1") == "COMMITTED"
    assert sorted(r.e.target[1]) == [Msg(1, 0), Msg(1, 1)] and r.e.committed[1] == 2
    r.accepted(tmp_path)


@pytest.mark.tlc
def test_write_to_topic_demo_7_another_producers_writes_are_visible_at_once_and_not_in_conflict(tmp_path: Path) -> None:
    """WriteToTopic_Demo_7 (and _2): the transaction writes #1 and #2 as group_1; group_2 writes #3
    and #4 outside any transaction; the transaction writes #5 and #6 as group_1 (here: its two
    writes, then the other producer's two). Before the commit a reader sees exactly #3 and #4;
    the commit is SUCCESS, and then the reader sees the transaction's after them."""
    r = Run(workers=("w1",), max_txns=1, batch_max=2, shapes=("write",), producers="partition", max_other_writes=2)
    r.take(("BeginWrites", "w1"))
    r.write("w1")
    r.take(("OtherProducerWrite", "w1"), ("OtherProducerWrite", "w1"))
    r.write("w1")
    assert r.e.target[1] == [Msg(-1, 0), Msg(-1, 1)], "before the commit: exactly the other producer's #3, #4"
    assert r.commit_immediate("w1") == "COMMITTED"
    assert r.e.target[1] == [Msg(-1, 0), Msg(-1, 1), Msg(0, 0), Msg(0, 1)]
    r.accepted(tmp_path)


@pytest.mark.tlc
def test_write_to_topic_demo_46_a_split_of_a_written_partition_aborts_the_commit(tmp_path: Path) -> None:
    """WriteToTopic_Demo_46: the transaction writes partitions 0 and 1 (here 1 and 2), the writes
    are acknowledged, partition 1 (here 2) splits, the transaction writes to it again (its
    supportive partition, created before the split, takes the write), and the commit is ABORTED:
    the partition is inactive ("Partition N is inactive. Writing is not possible",
    partition.cpp ApplyWriteInfoResponse). Nothing is published."""
    r = Run(workers=("w1",), num_dst=2, max_txns=1, batch_max=4, shapes=("write",), max_splits=1)
    r.take(("BeginWrites", "w1"))
    r.write("w1")  # (0, 0) to partition 1
    r.write("w1")  # (0, 1) to partition 2
    r.take(("Split", 2))
    r.write("w1")  # (0, 2) to partition 1
    r.write("w1")  # (0, 3) to partition 2: accepted, its supportive partition predates the split
    tx = 1
    r.take(("Flush", "w1"), ("CommitTx", "w1"), ("PqPropose", ("B", tx)), ("CoordPlan", tx), ("PqPlanStep", "B"),
           ("PqCalc", ("B", tx)))
    assert reasons(r, "PqCalc") == [(tx, "abort", "Inactive")]
    r.take(("PqExecute", ("B", tx)), ("PartitionApply", ("B", tx, 1)), ("PartitionApply", ("B", tx, 2)),
           ("PqTxDone", ("B", tx)), ("KqpResult", tx))
    assert r.e.told[tx] == "ABORTED" and r.e.target == {1: [], 2: []}
    r.accepted(tmp_path)


def test_after_a_split_a_new_supportive_partition_refuses_the_write() -> None:
    """A transaction's first write to a partition after its split: the supportive partition it
    would create is inactive, so the write is refused (PqWriteRefused), the writer has failed,
    and the application rolls back."""
    r = Run(workers=("w1",), num_dst=2, max_txns=1, batch_max=2, shapes=("write",), max_splits=1)
    r.take(("BeginWrites", "w1"), ("Split", 1), ("TxWrite", "w1"))
    [m] = r.e.net
    r.take(("PqWrite", m))
    assert r.events[-1]["action"] == "PqWriteRefused" and r.e.writer_failed("w1")
    r.take(("RollbackTx", "w1"))
    assert r.e.told[1] == "ABORTED" and r.e.target == {1: [], 2: []}


@pytest.mark.tlc
def test_write_to_topic_demo_41_a_writer_closed_by_force_gets_session_expired(tmp_path: Path) -> None:
    """WriteToTopic_Demo_41: the transaction's writes are sent, the write session is closed by
    force (Close(0)) before their acknowledgements, and the commit is SESSION_EXPIRED. The status
    is the C++ SDK's: its callback before the commit refuses a session closed with writes
    unacknowledged, and the commit is never sent. Here the writer has failed (the spec's
    WriterFailed), Flush is not enabled, and the application rolls back; the writes still in
    flight reach a tablet that has deleted the transaction's supportive partition."""
    r = Run(workers=("w1",), max_txns=1, batch_max=2, shapes=("write",), force_closes=True)
    r.take(("BeginWrites", "w1"), ("TxWrite", "w1"), ("TxWrite", "w1"), ("ForceClose", "w1"))
    assert r.e.writer_failed("w1") and not run(r.e, "Flush", "w1") and not run(r.e, "TxWrite", "w1")
    r.take(("RollbackTx", "w1"), ("PqLockLost", 1))
    for m in sorted(r.e.net, key=lambda m: m.m.off):
        r.take(("PqWrite", m))
    assert [x["action"] for x in r.events[-2:]] == ["PqWriteRefused", "PqWriteRefused"]
    assert r.e.told[1] == "ABORTED" and r.e.target[1] == []
    r.accepted(tmp_path)


@pytest.mark.tlc
def test_write_to_topic_demo_6_a_transaction_s_writes_are_invisible_until_the_commit(tmp_path: Path) -> None:
    """WriteToTopic_Demo_6: the transaction writes #1 and #2; a reader sees nothing before the
    commit; the commit is SUCCESS and the reader then sees both."""
    r = Run(workers=("w1",), max_txns=1, batch_max=2, shapes=("write",), producers="partition")
    r.take(("BeginWrites", "w1"))
    r.write("w1")
    r.write("w1")
    assert r.e.target[1] == [], "before the commit: nothing"
    assert r.commit_immediate("w1") == "COMMITTED"
    assert r.e.target[1] == [Msg(0, 0), Msg(0, 1)]
    r.accepted(tmp_path)


@pytest.mark.tlc
def test_write_to_topic_demo_15_two_writers_of_one_transaction_closed_before_the_commit(tmp_path: Path) -> None:
    """WriteToTopic_Demo_15: in one transaction, message group group_1 writes #1 and its write
    session is closed (gracefully: its write acknowledged), then group_2 writes #2 and is closed;
    the commit is SUCCESS and a reader sees #1 and #2. Two SourceIds in one supportive partition:
    each passes its own MinSeqNo check (partition.cpp ApplyWriteInfoResponse, per SourceId)."""
    r = Run(workers=("w1",), max_txns=1, batch_max=2, shapes=("write",), producers="partition", tx_writers=2)
    r.take(("BeginWrites", "w1"))
    first = r.write("w1", 0)  # group_1's #1; its close waits for this acknowledgement
    second = r.write("w1", 1)  # group_2's #2
    assert (first, second) == (Msg(0, 0), Msg(-2, 0)), "two producers, each its own SeqNo 1"
    assert r.e.target[1] == []
    assert r.commit_immediate("w1") == "COMMITTED"
    assert r.e.target[1] == [Msg(0, 0), Msg(-2, 0)]
    r.accepted(tmp_path)


@pytest.mark.tlc
def test_write_to_topic_demo_45_two_writers_to_two_partitions_in_one_transaction(tmp_path: Path) -> None:
    """WriteToTopic_Demo_45: a topic of two partitions; in one transaction group_1 writes two
    messages and group_2 one, to different partitions; the commit is SUCCESS (the test then
    reads the partitions' write-rate counters, which are not modelled). Here the spec routes
    each message by key, so group_1's two land in partitions 1 and 2 and group_2's in 1:
    tablet B commits on both partitions, each message once."""
    r = Run(workers=("w1",), num_dst=2, max_txns=1, batch_max=3, shapes=("write",), producers="partition", tx_writers=2)
    r.take(("BeginWrites", "w1"))
    r.write("w1", 0)
    r.write("w1", 0)
    r.write("w1", 1)
    assert r.e.kqp[1].dsts == {1, 2} and r.e.kqp[1].prods == {0, -2}
    assert r.commit_b_only("w1") == "COMMITTED"
    assert sorted([*r.e.target[1], *r.e.target[2]]) == [Msg(-2, 0), Msg(0, 0), Msg(0, 1)]
    r.accepted(tmp_path)


@pytest.mark.tlc
def test_transactions_conflict_on_seqno_in_small_shared_write_sessions(tmp_path: Path) -> None:
    """Transactions_Conflict_On_SeqNo in small: write sessions shared by the transactions (one per
    partition there; two producers here), two transactions each write through both (with the same
    SeqNos: each writer numbers after its producer's last, none yet), and the later one commits
    first. The earlier one's SeqNos are now at or below each producer's last: ABORTED (MinSeqNo).
    YDB's test asserts each commit SUCCESS or ABORTED and not all SUCCESS."""
    r = Run(workers=("w1", "w2"), max_txns=2, batch_max=2, shapes=("write",), producers="partition", tx_writers=2)
    r.take(("BeginWrites", "w1"))
    r.write("w1", 0)
    r.write("w1", 1)
    r.take(("BeginWrites", "w2"))
    r.write("w2", 0)
    r.write("w2", 1)
    assert (r.commit_immediate("w2"), r.commit_immediate("w1")) == ("COMMITTED", "ABORTED")
    assert r.e.target[1] == [Msg(0, 0), Msg(-2, 0)]
    assert reasons(r, "PqImmediate") == [(2, "commit", None), (1, "abort", "MinSeqNo")]
    r.accepted(tmp_path)


@pytest.mark.tlc
def test_wide_transactions_in_small_a_producer_of_its_own_per_transaction_all_commit(tmp_path: Path) -> None:
    """Write_Random_Sized_Messages_In_Wide_Transactions and Write_Only_Big_Messages_In_Wide_Transactions
    in small: each transaction writes every partition with producers of its own (`<id>_<tx>_<p>`:
    the spec's Producers = "none"), the commits go in any order, and every one is SUCCESS."""
    r = Run(workers=("w1", "w2"), num_dst=2, max_txns=2, batch_max=3, shapes=("write",), producers="none", tx_writers=2)
    for w in ("w1", "w2"):
        r.take(("BeginWrites", w))
        r.write(w, 0)
        r.write(w, 0)
        r.write(w, 1)
    assert r.e.kqp[1].dsts == {1, 2} == r.e.kqp[2].dsts
    assert (r.commit_b_only("w2"), r.commit_b_only("w1")) == ("COMMITTED", "COMMITTED")
    assert sorted([*r.e.target[1], *r.e.target[2]]) == [Msg(-2, 0), Msg(-2, 3), Msg(0, 0), Msg(0, 1), Msg(0, 3), Msg(0, 4)]
    r.accepted(tmp_path)


def test_a_transaction_opens_at_most_tx_writers_writers() -> None:
    """Writer g exists only below TxWriters, and a copy transaction has its one writer."""
    r = Run(workers=("w1",), max_txns=1, batch_max=2, shapes=("write",), tx_writers=2)
    r.take(("BeginWrites", "w1"))
    assert not run(r.e, "TxWrite", ("w1", 2)) and run(r.e, "TxWrite", ("w1", 1))
    c = Run(workers=("w1",), msgs_per_src=2, max_txns=1, batch_max=2, tx_writers=2)
    c.take(("ReadBatch", ("w1", 1, 2)))
    assert not run(c.e, "TxWrite", ("w1", 1)) and run(c.e, "TxWrite", ("w1", 0))


@pytest.mark.tlc
def test_write_to_topic_demo_47_one_transaction_reads_two_partitions(tmp_path: Path) -> None:
    """WriteToTopic_Demo_47: partitions 0 and 1 of the topic hold two messages each; one
    transaction reads partition 0 and then partition 1, and commits: SUCCESS, the consumer's
    offsets of both partitions are past them. (The test splits partition 1 before: a split of A's
    partition is not modelled, and in YDB it does not affect the reads.) Here the transaction also
    writes what it read to B, as the copy shape does."""
    r = Run(workers=("w1",), num_src=2, msgs_per_src=2, max_txns=1, batch_max=2, max_reads=2, max_parts_read=2)
    r.take(("ReadBatch", ("w1", 1, 2)), ("ReadOther", ("w1", 2, 2)))
    assert r.e.parts_of("A", 1) == {1, 2}
    for _ in range(4):
        r.write("w1")
    assert r.commit_a_and_b("w1") == "COMMITTED"
    assert r.e.committed == {1: 2, 2: 2}
    assert sorted(r.e.target[1]) == [Msg(1, 0), Msg(1, 1), Msg(2, 0), Msg(2, 1)]
    r.accepted(tmp_path)


@pytest.mark.tlc
def test_write_to_topic_demo_27_two_sources_read_in_one_transaction_and_written_to_a_third(tmp_path: Path) -> None:
    """WriteToTopic_Demo_27: one message is written outside any transaction to topic A and one to
    topic B; a transaction reads A's and B's and writes both to topic C, and commits: SUCCESS, C
    holds both. The spec reads one topic, so A and B are two partitions of its A, and C is its B."""
    r = Run(workers=("w1",), num_src=2, msgs_per_src=1, max_txns=1, batch_max=1, max_reads=2, max_parts_read=2)
    r.take(("ReadBatch", ("w1", 1, 1)))
    r.write("w1")
    r.take(("ReadOther", ("w1", 2, 1)))
    r.write("w1")
    assert r.commit_a_and_b("w1") == "COMMITTED"
    assert sorted(r.e.target[1]) == [Msg(1, 0), Msg(2, 0)] and r.e.committed == {1: 1, 2: 1}
    r.accepted(tmp_path)


@pytest.mark.tlc
def test_a_zombie_s_second_partition_aborts_the_whole_transaction(tmp_path: Path) -> None:
    """Tablet A checks each partition a transaction read: w1 reads partitions 1 and 2, hangs; w2
    takes partition 2 over and commits its batch; the zombie's commit fails on partition 2
    (Conflict) and nothing of it commits, partition 1 included."""
    r = Run(workers=("w1", "w2"), num_src=2, msgs_per_src=1, max_txns=2, batch_max=1, max_reads=2, max_parts_read=2,
            max_hangs=1)
    r.e.owner = {1: "w1", 2: "w1"}
    r.take(("ReadBatch", ("w1", 1, 1)), ("ReadOther", ("w1", 2, 1)))
    r.write("w1")
    r.write("w1")
    r.take(("Flush", "w1"), ("Hang", "w1"), ("TakeOver", ("w2", 2)), ("ReadBatch", ("w2", 2, 1)))
    r.write("w2")
    assert r.commit_a_and_b("w2") == "COMMITTED"
    r.take(("Resume", "w1"))
    tx = 1
    r.take(("CommitTx", "w1"), ("PqPropose", ("A", tx)), ("PqPropose", ("B", tx)), ("CoordPlan", tx),
           ("PqPlanStep", "A"), ("PqCalc", ("A", tx)))
    assert reasons(r, "PqCalc")[-1] == (tx, "abort", "Conflict")
    assert r.e.committed == {1: 0, 2: 1}
    r.accepted(tmp_path)


@pytest.mark.tlc
def test_session_abort_a_lost_sessions_reads_are_not_committed_and_the_next_session_reads_them(tmp_path: Path) -> None:
    """SessionAbort: block 1 reads offsets 0 and 1 of topic_A in a transaction and ends with no
    commit (the session and the transaction are dropped: the SDK rolls back, the reader reads again
    from the committed offset); block 2's new session starts at committed offset 0, reads both in a
    transaction and commits (SUCCESS); block 3's reader, outside any transaction, starts at
    committed offset 2 and has nothing to read. Then a reader outside a transaction reads on after
    more messages: here a partition of 3, its last message read and committed with CommitOffset."""
    r = Run(workers=("w1",), msgs_per_src=3, max_txns=2, batch_max=2, max_reads=2, rollbacks=True,
            shapes=("read",), max_plain_commits=1)
    r.take(("ReadOnlyBatch", ("w1", 1, 1)), ("ReadMore", ("w1", 1, 2)), ("RollbackTx", "w1"))
    assert r.e.committed[1] == 0 and r.e.read_begin("w1", 1) == 0  # block 2 starts at committed offset 0
    r.take(("ReadOnlyBatch", ("w1", 1, 2)))
    assert r.commit_immediate("w1", "A") == "COMMITTED"
    assert r.e.read_begin("w1", 1) == 2  # block 3: committed offset 2
    r.take(("PlainRead", ("w1", 1, 3)), ("CommitOffset", "w1"))
    assert r.e.committed[1] == 3 and r.events[-1]["action"] == "CommitOffset"
    r.accepted(tmp_path)


@pytest.mark.tlc
def test_write_to_topic_demo_17_writes_outside_then_in_a_transaction_of_one_producer(tmp_path: Path) -> None:
    """WriteToTopic_Demo_17 (and _18 to _20's old head), in small: the producer writes outside any
    transaction first (5 messages there, 2 here), then in a transaction (3 there, 2 here). The
    transactional writer numbers after the producer's last SeqNo, which its init returns, so the
    commit is SUCCESS and a reader sees all of them in order (their sizes are not modelled)."""
    r = Run(workers=("w1",), max_txns=1, batch_max=2, shapes=("write",), producers="partition", max_plain_writes=2)
    r.take(("PlainWrite", (0, 0)), ("PlainWrite", (0, 1)))
    r.take(("BeginWrites", "w1"))
    assert r.e.cl["w1"].b == 2  # the writer's init: last_seq_no 2
    r.write("w1")
    r.write("w1")
    assert r.commit_immediate("w1") == "COMMITTED"
    assert r.e.target[1] == [Msg(0, 0), Msg(0, 1), Msg(0, 2), Msg(0, 3)]
    r.accepted(tmp_path)


@pytest.mark.tlc
def test_seqno_conflict_two_write_sessions_of_one_producer_the_second_commit_aborts(tmp_path: Path) -> None:
    """TopicTxSkipConflictAndProducerMeta SeqNoConflict_TwoWriteSessions (topic_tx_skip_conflict_ut.cpp),
    its configurations with the server flag off, or the session's track_producer_id_in_tx true or
    absent: two transactions of one producer, each through a write session of its own, write two
    messages each (both from the producer's last SeqNo: the same SeqNos); tx1 commits (SUCCESS),
    then tx2 is ABORTED (MinSeqNo), and a reader sees tx1's two. The configuration with the flag on
    and the setting false, where KQP skips the check and both commit, is not modelled (docs/ydb.md)."""
    r = Run(workers=("w1", "w2"), max_txns=2, batch_max=2, shapes=("write",), producers="partition")
    r.take(("BeginWrites", "w1"))
    r.write("w1")
    r.write("w1")  # "m1", "m2"
    r.take(("BeginWrites", "w2"))
    r.write("w2")
    r.write("w2")  # "m3", "m4", SeqNos 1 and 2 again
    assert (r.commit_immediate("w1"), r.commit_immediate("w2")) == ("COMMITTED", "ABORTED")
    assert r.e.target[1] == [Msg(0, 0), Msg(0, 1)]
    assert reasons(r, "PqImmediate") == [(1, "commit", None), (2, "abort", "MinSeqNo")]
    r.accepted(tmp_path)
