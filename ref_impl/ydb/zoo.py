"""The bug zoo: the spec's Bugs, each switchable in the engine, with a workload and faults that
expose it, a seed whose run does, the registry model of the same bug, and the event at which
``txconform check`` (which always checks against the correct protocol) rejects its trace.

A bug makes the engine deviate from the protocol at one step: the trace is rejected at that
event. ``no_gap_check`` only shows after an SDK that keeps its position across an abort, so it
runs with ``no_reread``, which is caught first, at the re-read (the registry's model pairs them
too). ``no_seqno_check`` and ``no_producer_block`` break nothing while the read predicate stands
(the MinSeqNo check is a second line), so they run with ``no_offset_check``, as their models do.
``ack_plan_on_receipt`` shows only after a restart: the tablet, back at PREPARED with no
plan step coming, expires a planned transaction. ``immediate_no_offset_check`` and
``participants_from_offsets`` need the read-only and the write-only shapes of transaction,
``seqno_ignores_plain`` a write outside the transaction (nontx=1), ``no_write_dedup`` a lost
acknowledgement and the writer's resend (reconnects=1), ``range_gap_accepted`` read-only
transactions that name offset ranges of their own (ranges=1), ``split_ignored`` a split
(splits=1), ``seqno_first_source`` a write-only transaction with two writers and a plain write
(writers=2, nontx=1), ``plain_no_dedup`` writes outside transactions that repeat a SeqNo (plain=4),
``first_range_only`` transactions that read two partitions of A (parts=2) and a zombie,
``commit_dead_session`` batches read and committed outside transactions (commits=4) by a zombie,
``commit_unblocked`` those beside a zombie's transaction.
"""

from __future__ import annotations

import attrs


@attrs.frozen
class ZooBug:
    name: str  # the spec's bug name
    bugs: tuple[str, ...]  # the engine's bug switches
    workload: str
    faults: str
    seed: int  # a run that exposes it
    model: str  # the registry model (specs/ydb/models.toml) of the same bug
    rejected_at: str  # the action of the event the checker rejects
    what: str


ZOO = (
    ZooBug("no_offset_check", ("no_offset_check",), "copy", "hangs=1", 3, "ydb_no_offset_check", "PqCalc",
           "the read predicate is skipped: a zombie's range commits although the committed offset moved"),
    ZooBug("overlap_check", ("overlap_check",), "copy", "hangs=1", 3, "ydb_offset_overlap_check", "PqCalc",
           "a range that merely intersects the committed offset passes"),
    ZooBug("no_gap_check", ("no_reread", "no_gap_check"), "copy:workers=1", "locklosses=1", 0, "ydb_no_gap_check",
           "ReadBatch", "committed < b passes; exposed by an SDK that keeps its position after an abort"),
    ZooBug("no_reread", ("no_reread",), "copy:workers=1", "locklosses=1", 0, "ydb_no_reread", "ReadBatch",
           "the SDK keeps its read position after an abort (ydb-python-sdk PR 834)"),
    ZooBug("no_consumer_block", ("no_consumer_block",), "copy", "hangs=1", 4, "ydb_no_consumer_block", "PqCalc",
           "two transactions in flight on one consumer both pass the check"),
    ZooBug("visible_before_commit", ("visible_before_commit",), "copy:workers=1", "none", 0, "ydb_visible_before_commit",
           "PqWrite", "writes go straight to the main partition"),
    ZooBug("independent_decision", ("independent_decision",), "copy:workers=1", "none", 0, "ydb_independent_decision",
           "PqCalc", "each participant executes on its own predicate, no read sets"),
    ZooBug("partition_reapply", ("partition_reapply",), "copy:workers=1,dst=2,batch=3,msgs=6", "restarts=2", 95,
           "ydb_reapply_after_restart", "PartitionCommit", "a partition ignores the (step, txid) it already applied"),
    ZooBug("lock_race", ("lock_race",), "copy:workers=1", "locklosses=1", 0, "ydb_lock_race", "PqWrite",
           "a write after the lock loss creates a new supportive partition (ydb PR 4758)"),
    ZooBug("ack_rs_before_persist", ("ack_rs_before_persist",), "copy:workers=1", "none", 0, "ydb_ack_readset_before_persist",
           "PqReadSetAck", "a read set is acknowledged on receipt (ydb issue 17843)"),
    ZooBug("ack_plan_on_receipt", ("ack_plan_on_receipt",), "copy:workers=1", "restarts=1", 0, "ydb_ack_plan_on_receipt",
           "Expire", "a plan step is acknowledged on receipt, not once EXECUTED"),
    ZooBug("no_flush", ("no_flush",), "copy:workers=1", "none", 0, "ydb_no_flush", "Flush",
           "the SDK commits with writes unacknowledged"),
    ZooBug("rollback_while_committing", ("rollback_while_committing",), "copy:workers=1,rollback=true", "none", 6,
           "ydb_rollback_while_committing", "RollbackTx",
           "the session takes a rollback while the commit is under way (YDB refuses it: Pending previous query completion)"),
    ZooBug("no_seqno_check", ("no_offset_check", "no_seqno_check"), "copy:producers=partition", "hangs=1", 0, "ydb_no_seqno_check", "PqCalc",
           "B's predicate ignores the producer's SeqNo (the MinSeqNo check)"),
    ZooBug("no_producer_block", ("no_offset_check", "no_producer_block"), "copy:producers=partition", "hangs=1", 0, "ydb_no_producer_block",
           "PqCalc", "two transactions of one producer are calculated at once on B"),
    ZooBug("immediate_no_offset_check", ("immediate_no_offset_check",), "copy:shapes=read", "hangs=1", 3,
           "ydb_read_only_no_offset_check", "PqImmediate",
           "the immediate path commits a read-only transaction's range without the offset check: a zombie's commit"),
    ZooBug("participants_from_offsets", ("participants_from_offsets",), "copy:workers=1,shapes=write", "none", 0,
           "ydb_write_only_participants_from_offsets", "CommitTx",
           "KQP takes its participants from the read offsets only: a write-only transaction commits as an empty one"),
    ZooBug("seqno_ignores_plain", ("seqno_ignores_plain",), "copy:workers=1,dst=1,shapes=write,producers=partition,nontx=1",
           "none", 6, "ydb_nontx_seqno_ignores_plain", "PqImmediate",
           "the MinSeqNo check counts only the producer's transactional writes: a commit beside a plain write of its SeqNo"),
    ZooBug("no_write_dedup", ("no_write_dedup",), "copy:workers=1,producers=partition", "reconnects=1", 10,
           "ydb_no_write_dedup", "PqWrite",
           "a supportive partition takes a repeated SeqNo again: the writer's resend after a lost acknowledgement is stored twice"),
    ZooBug("no_table_lock", ("no_table_lock",), "copy:workers=2,src=2,table=true,txns=4", "none", 4,
           "ydb_no_table_lock", "PqCalc",
           "a committed write of the table's row does not break another transaction's lock: a lost update"),
    ZooBug("range_gap_accepted", ("range_gap_accepted",), "copy:workers=1,shapes=read,ranges=1", "none", 2,
           "ydb_range_gap_accepted", "CommitTx",
           "KQP sends [min, max) of offset ranges that leave a hole instead of refusing the commit: messages never processed are committed"),
    ZooBug("split_ignored", ("split_ignored",), "copy:workers=1,dst=2,shapes=write", "splits=1", 3,
           "ydb_split_ignored", "PqImmediate",
           "B's predicate does not ask whether the partition is still active: data lands in a partition a split made inactive"),
    ZooBug("seqno_first_source", ("seqno_first_source",),
           "copy:workers=1,dst=1,shapes=write,producers=partition,nontx=1,writers=2", "none", 9,
           "ydb_seqno_first_source", "PqImmediate",
           "one MinSeqNo per supportive partition (its first SourceId's): a second writer's SeqNo that a plain write "
           "already published passes, and is published twice"),
    ZooBug("plain_no_dedup", ("plain_no_dedup",), "copy:workers=1,dst=1,shapes=write,producers=partition,plain=4", "none",
           18, "ydb_plain_no_dedup", "PlainWrite",
           "a write outside a transaction whose SeqNo the producer already wrote is stored again (no AlreadyWritten)"),
    ZooBug("first_range_only", ("first_range_only",), "copy:workers=2,src=2,dst=1,msgs=2,batch=1,txns=4,reads=2,parts=2",
           "hangs=1", 12, "ydb_first_range_only_zombie", "PqCalc",
           "the read predicate checks a transaction's first partition of A only: a zombie's second range commits again"),
    ZooBug("commit_dead_session", ("commit_dead_session",), "copy:txns=0,batch=1,commits=4", "hangs=1", 2,
           "ydb_commit_dead_session", "CommitOffset",
           "a commit outside a transaction applies in a read session the group ended: the zombie's batch is consumed twice"),
    ZooBug("commit_unblocked", ("commit_unblocked",), "copy:txns=2,commits=3", "hangs=1", 12, "ydb_commit_unblocked",
           "CommitOffset",
           "a commit outside a transaction passes a transaction of the consumer calculated on the partition"),
)
ZOO_BY_NAME = {b.name: b for b in ZOO}
