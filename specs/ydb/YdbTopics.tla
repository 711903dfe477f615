------------------------------ MODULE YdbTopics ------------------------------
(***************************************************************************)
(* YDB Topics transactions: a worker reads a batch [b, e) from topic A as  *)
(* consumer c, writes it to topic B (and a row to a table), and commits    *)
(* the read offsets, the writes and the row in one distributed            *)
(* transaction. This is the mechanism of the YDB server and SDK, not a     *)
(* two-phase-commit cartoon. Seeds: 000 (the YDB-vs-Kafka talk: the        *)
(* resharding example, tablets as key-value state machines, deterministic  *)
(* transactions with a coordinator, uncommitted writes under special keys  *)
(* published by renaming, read offsets committed as ranges with conflict  *)
(* detection, "6 sequential disk writes") and 004 (the SDK's transactional *)
(* writer and reader). Sources in ydb-platform/ydb:                        *)
(*   [pq]    ydb/core/persqueue/pqtablet/pq_impl.cpp                       *)
(*   [tx]    ydb/core/persqueue/pqtablet/transaction.cpp                   *)
(*   [part]  ydb/core/persqueue/pqtablet/partition/partition.cpp           *)
(*   [fix]   ydb/core/persqueue/pqtablet/fix_transaction_states.cpp        *)
(*   [proto] ydb/core/protos/pqdata_transaction.proto                      *)
(*   [kqpt]  ydb/core/kqp/topics/kqp_topics.cpp                            *)
(*   [dtx]   ydb/docs/en/core/contributor/datashard-distributed-txs.md     *)
(*   [gosdk] ydb-go-sdk internal/topic/topicwriterinternal/                *)
(*           writer_transaction.go (flush before commit)                   *)
(*   [kqps]  ydb/core/kqp/session_actor/kqp_session_actor.cpp (ReplyBusy:  *)
(*           a request while the session executes another is refused)      *)
(*   [seqno] ydb/core/persqueue/pqtablet/partition/partition.cpp           *)
(*           (ApplyWriteInfoResponse: a transaction's MinSeqNo per SourceId*)
(*           at or below the partition's last SeqNo fails the predicate,   *)
(*           "MinSeqNo violation failure"; a transaction of the same       *)
(*           SourceId between predicate and persist blocks it),            *)
(*           sourceid.cpp (MinSeqNo), CommitWriteOperations (the SourceId's*)
(*           SeqNo moves with the commit); YDB's TxUsage tests             *)
(*           WriteToTopic_Demo_4 and _9                                    *)
(*   [ntx]   partition.cpp/partition_write.cpp: a write outside any        *)
(*           transaction goes to the main partition at once and moves its  *)
(*           SourceId's SeqNo; it is Blocked while a transaction of the    *)
(*           same SourceId is between predicate and persist               *)
(*           (TxAffectedSourcesIds); the SDK's automatic SeqNo continues   *)
(*           from the SourceId's last SeqNo in the main partition (writer  *)
(*           init, last_seq_no); YDB's TxUsage WriteToTopic_Demo_3 and _8: *)
(*           a transaction's write, then the same producer's write outside *)
(*           it: the plain write is visible, the commit is ABORTED         *)
(*   [imm]   ydb/core/kqp/executer_actor/kqp_data_executer.cpp (a         *)
(*           transaction with at most one shard or topic operation is      *)
(*           ImmediateTx: no coordinator), partition.cpp                   *)
(*           ProcessUserActionOrTransaction and ProcessImmediateTx (the    *)
(*           read check: "incorrect offset range (gap)" ABORTED, "begin >  *)
(*           end" and "commit to the future" BAD_REQUEST; with a WriteId   *)
(*           the supportive partition's write info is the predicate, then  *)
(*           CommitWriteOperations)                                        *)
(*   [sdkrb] ydb-python-sdk ydb/query/transaction.py (rollback and its     *)
(*           callbacks), ydb/_topic_writer/topic_writer_asyncio.py         *)
(*           (_on_before_rollback: close(flush=False)),                    *)
(*           ydb/_topic_reader/topic_reader_asyncio.py                     *)
(*           (_handle_after_tx_rollback: the reader reconnects)            *)
(*   [dedup] partition_write.cpp AnswerCurrentWrites: a write whose SeqNo  *)
(*           is at or below its SourceId's last SeqNo in the partition is  *)
(*           AlreadyWritten and not stored (a supportive partition too);   *)
(*           the SourceIds are written with the data and read back at      *)
(*           start (partition_init.cpp); the SDK reports Skipped           *)
(*           (topic_writer_asyncio.py _handle_receive_ack)                 *)
(*   [ocommit] partition.cpp PreProcessUserAct (a commit outside a       *)
(*           transaction, ESCI_OFFSET, is Blocked while a transaction of   *)
(*           the consumer is between predicate and persist:               *)
(*           TxAffectedConsumers), CommitUserAct (a commit in a read      *)
(*           session that is no longer the partition's: WRONG_COOKIE "set  *)
(*           offset in already dead session"; an offset at or below the   *)
(*           committed one: a stale request, answered OK, nothing moves;  *)
(*           else the offset moves, whatever the batch began at),         *)
(*           BeginTransactionData (a transaction waits for such a commit: *)
(*           SetOffsetAffectedConsumers); ydb_topic.proto                 *)
(*           (UpdateOffsetsInTransactionRequest has no read session; the  *)
(*           stream's CommitOffsetRequest names its partition session)    *)
(*   [init]  ydb-python-sdk ydb/_topic_writer/topic_writer_asyncio.py:    *)
(*           the writer's init answers the producer's last_seq_no, and     *)
(*           auto_seqno numbers the messages after it, in a transaction   *)
(*           too                                                          *)
(*   [resend] ydb-python-sdk topic_writer_asyncio.py: _connection_loop     *)
(*           reconnects with the same tx identity and _send_loop sends     *)
(*           every unacknowledged message again with its SeqNo             *)
(*   [tli]   optimistic locks: a transaction's read of a row takes a lock, *)
(*           another transaction's committed write to the row breaks it,   *)
(*           and the reader's commit is ABORTED, "Transaction locks        *)
(*           invalidated" (ydb/docs concepts/transactions: TLI; KQP maps    *)
(*           STATUS_LOCKS_BROKEN to ABORTED, KIKIMR_LOCKS_INVALIDATED)     *)
(*   [empty] ydb-python-sdk ydb/query/transaction.py commit(): a begun     *)
(*           transaction is committed after its BEFORE_COMMIT callbacks    *)
(*           (a writer with nothing written has nothing to flush); with no *)
(*           topic or shard operation KQP has no participant to propose to *)
(*           and answers at once (our reading of kqp_data_executer.cpp)    *)
(*   [close] ydb C++ SDK write_session_impl.cpp                           *)
(*           TrySubscribeOnTransactionCommit: the writer's callback before *)
(*           the commit answers SESSION_EXPIRED when the session was       *)
(*           closed with writes unacknowledged (Close(0): AbortImpl,       *)
(*           CancelTransactions), and the commit is not sent               *)
(*           (transaction.cpp MakeSessionExpiredError); YDB's TxUsage       *)
(*           WriteToTopic_Demo_41                                          *)
(*   [split] a partition split (autopartitioning): the parent partition    *)
(*           becomes inactive (partition.cpp IsActive, CanWrite); a plain  *)
(*           write to it is refused ("Write to inactive partition",         *)
(*           partition_write.cpp HandleOnWrite); a supportive partition    *)
(*           created before the split keeps its config and takes writes,   *)
(*           one created after it is inactive (pq_impl.cpp                 *)
(*           MakeSupportivePartitionConfig); a transaction that writes the *)
(*           partition fails its predicate at CALCULATING ("Partition N is *)
(*           inactive. Writing is not possible", ApplyWriteInfoResponse):  *)
(*           ABORTED; reads are not affected; YDB's TxUsage                 *)
(*           WriteToTopic_Demo_46 (ABORTED) and _47 (reads SUCCESS)        *)
(*   [ranges] UpdateOffsetsInTransaction: kqp_topics.cpp                   *)
(*           (TConsumerOperations: a consumer's ranges on a partition are   *)
(*           an interval set; a range that intersects one already there    *)
(*           throws "offset ranges intersect"), kqp_session_actor.cpp      *)
(*           (HandleTopicOps: that is BAD_REQUEST, and ReplyQueryError     *)
(*           invalidates the transaction; CheckTopicOperations at the      *)
(*           commit: ranges that are not one interval are ABORTED,         *)
(*           "Incorrect offset ranges in the transaction"), partition.cpp  *)
(*           (ProcessImmediateTx: begin > end BAD_REQUEST, then the gap   *)
(*           ABORTED, then "commit to the future" BAD_REQUEST); YDB's      *)
(*           TopicService unit tests (OneConsumer_TheRangesOverlap,         *)
(*           ThereAreGapsInTheOffsetRanges, OnePartitionAndNoGaps...,      *)
(*           MultiplePartitionsAndNoGaps...) expect exactly these          *)
(*   [two]   a transaction that reads two partitions: kqp_topics.cpp keeps *)
(*           a TTopicPartitionOperations per (topic, partition), each with *)
(*           its consumer's ranges, and every partition is a participant's *)
(*           operation; YDB's TxUsage WriteToTopic_Demo_47 (two partitions *)
(*           read in one transaction) and _27 (two topics read)            *)
(*   [multi] several writers in one transaction: each write session has    *)
(*           its own producer id (SourceId), and a supportive partition    *)
(*           keeps a MinSeqNo per SourceId (partition.cpp                  *)
(*           ApplyWriteInfoResponse walks TxWriteInfo's SrcIdInfo, one     *)
(*           entry per SourceId; TxAffectedSourcesIds holds each of them); *)
(*           YDB's TxUsage WriteToTopic_Demo_15 and _45 (two message       *)
(*           groups in one transaction: SUCCESS, both published),          *)
(*           Write_*_In_Wide_Transactions (a producer per partition per    *)
(*           transaction: every commit SUCCESS) and                        *)
(*           Transactions_Conflict_On_SeqNo (write sessions shared by the  *)
(*           transactions: some commits ABORTED)                           *)
(*                                                                         *)
(* Actors and what they keep:                                              *)
(*   - workers (SDK): a topic reader with its read position, a writer      *)
(*     bound to the transaction, the transaction object (cl);              *)
(*   - the KQP session: the transaction's topic operations (the read      *)
(*     range of consumer c on a partition of A, the partitions of B it     *)
(*     writes to under WriteId = the transaction's id), its table row, and *)
(*     the LongTxService lock that dies with the session (kqp);            *)
(*   - PQ tablets "A" and "B" (one per topic: a tablet hosting all of its  *)
(*     topic's partitions is an abstraction) and datashard "DS":           *)
(*     the durable key-value records of each transaction (pdur: the        *)
(*     tablet's tx_<TxId> key and the partitions' tx_<TxId>_<p> keys) and  *)
(*     their volatile state (ptx), the supportive partitions per WriteId   *)
(*     (sup: durable, invisible), the main partitions (committed offsets   *)
(*     of A, the log of B) and each partition's last applied (step, txid)  *)
(*     (meta);                                                             *)
(*   - the coordinator and mediator: plan steps, persisted, delivered to   *)
(*     each participant until it acknowledges (plan, pending).            *)
(*                                                                         *)
(* A transaction's life at a participant, with YDB's state names [proto]:  *)
(*   PqPropose      validate and persist PREPARED (PREPARING is the       *)
(*                  instant between the request and the write)            *)
(*   CoordPlan      the coordinator picks the next plan step and persists *)
(*                  it (the KQP executer asking for a plan is folded in)   *)
(*   PqPlanStep     the step arrives in order: PLANNED (persisted only in *)
(*                  Version "v25")                                         *)
(*   PqCalc         at the head of the queue, each partition computes its  *)
(*                  predicate (CALCULATING, CALCULATED) and the tablet     *)
(*                  sends its decision to every peer as a read set        *)
(*                  (WAIT_RS; the decision persisted only in "v25")        *)
(*   PqReadSet      a peer's read set is stored (volatile); its           *)
(*                  acknowledgement waits until EXECUTED is durable        *)
(*                  (the fix of ydb issue 17843, PR 17842)                 *)
(*   PqExecute      all read sets in: decision = own AND every peer's       *)
(*                  (EXECUTING)                                            *)
(*   PartitionCommit / PartitionRollback  one atomic write per partition: *)
(*                  the supportive data renamed to the end of the log, the *)
(*                  committed offset set, (step, txid) recorded as applied *)
(*                  and the partition's tx_<TxId>_<p> key written [part]    *)
(*   PqTxDone       EXECUTED: reply to KQP, acknowledge the plan step and  *)
(*                  the read sets received (WAIT_RS_ACKS)                  *)
(*   PqDelete       every peer acknowledged: the record is deleted         *)
(*                  (DELETING)                                             *)
(*   Expire         a proposal never planned before its MaxStep (or        *)
(*                  cancelled by KQP) expires (EXPIRED/CANCELED)           *)
(*                                                                         *)
(* The read predicate at CALCULATING [part]: the consumer's committed      *)
(* offset equals b (else "Gap"), b <= e <= end of the partition; a         *)
(* transaction already calculated and not yet executed on the same         *)
(* consumer and partition blocks the next one. The write predicate: every  *)
(* supportive partition of the WriteId exists and is not deleted; it is    *)
(* closed, so no later write can enter it. The table's: the lock holds.    *)
(*                                                                         *)
(* Durable-write depth (a ghost): a durable write's depth is one more than *)
(* the deepest durable write it waited for; writes made in parallel count *)
(* once. The client's COMMITTED answer carries the depth of the deepest    *)
(* write before it. Which writes the commit path makes is where versions   *)
(* differ: in "v25" the tablet persists PLANNED and the calculated          *)
(* decision (WAIT_RS) before the commit ("the last step takes three        *)
(* saves", seed 000); in "v26" only PREPARED, and each partition writes    *)
(* its EXECUTED key inside its commit write ([fix]; ydb PR 32125). Where   *)
(* the seed and the code are silent (which writes v25 made exactly) this  *)
(* is our reading, marked as such in docs/ydb.md.                          *)
(*                                                                         *)
(* A rollback (RollbackTx, the SDK's tx.rollback(): the writers closed    *)
(* without a flush, RollbackTransaction, the reader reconnected so that it *)
(* reads again from the committed offset [sdkrb]) is the application's     *)
(* own choice at any moment before the commit is sent (constant Rollbacks) *)
(* and the only way on after a write was refused or lost. KQP releases the *)
(* lock, which tablet B learns as a lock loss, so writes still in flight   *)
(* are refused. Once CommitTransaction is under way the session refuses a  *)
(* second request, RollbackTransaction included ("Pending previous query   *)
(* completion", SESSION_BUSY or PRECONDITION_FAILED [kqps]).               *)
(*                                                                         *)
(* Shapes of a transaction (constant TxShapes): "copy" reads a batch of A *)
(* and writes it to B (ReadBatch); "read" only reads a batch and commits   *)
(* its offsets (ReadOnlyBatch: receive_batch_with_tx and no writer);       *)
(* "write" only writes new messages of the application to B (BeginWrites: *)
(* tx_writer and no reader; message (0, o): with Producers = "partition" *)
(* after the producer's last SeqNo, as the SDK's writer numbers from its  *)
(* init [init], with "none" numbered per transaction; it may write        *)
(* nothing and commit as an empty transaction [empty]).                   *)
(* A copy or read-only transaction may read again (ReadMore, MaxReads):   *)
(* the SDK's reader goes on from its position in the same partition, and  *)
(* the batch joins the transaction (the SDK names every batch's offsets at *)
(* its commit; each starts where the last ended, so they are one range);  *)
(* a copy transaction writes the new messages after the others, so reads  *)
(* and writes interleave. The SDK's own test_commit reads twice in one     *)
(* transaction (ydb-python-sdk tests/topics/test_topic_transactions.py).   *)
(* With MaxPartsRead = 2 a copy or read-only transaction may also read a   *)
(* second partition of A (ReadOther) [two]: the SDK's reader holds a       *)
(* partition session per partition its group gave it. KQP commits both     *)
(* ranges; tablet A checks and applies each partition (never immediate);  *)
(* a copy writes the second range's messages after the first's, as        *)
(* producer p of their source partition. Two topics read (YDB's            *)
(* WriteToTopic_Demo_27) are two partitions here: the spec reads one topic.*)
(* A read-only transaction may also name ranges of its own (MaxRanges):   *)
(* the application processed messages it read outside the transaction and *)
(* commits their offsets with UpdateOffsetsInTransaction (UpdateOffsets)   *)
(* [ranges]. KQP keeps the ranges as an interval set: one that intersects *)
(* the set is BAD_REQUEST and ends the transaction; a set that is not one  *)
(* interval is ABORTED at the commit, with no participant asked; KQP sends *)
(* the set's [min, max) to the partition, whose immediate path answers     *)
(* BAD_REQUEST for an end past the partition's end. The ranges a          *)
(* transaction named are kept (named) so that ExactlyOnce can tell what   *)
(* the application processed from what KQP committed.                     *)
(* The participants are the tablets the transaction touches. KQP runs a    *)
(* transaction whose only operation is one partition as an immediate one  *)
(* [imm]: no proposal, plan or read sets; the tablet checks and applies it *)
(* in one write (PqImmediate) with the same checks (the committed offset   *)
(* at b; the supportive partition there, its SeqNo moving forward).        *)
(*                                                                         *)
(* Writes outside transactions [ntx] (MaxNonTxWrites, with Producers =   *)
(* "partition"): beside its open write-only transaction, the application  *)
(* writes as the same producer with no transaction (NonTxWrite): the SDK's *)
(* automatic SeqNo continues from the producer's last SeqNo in the main   *)
(* partition (the transaction's writes are invisible there), the message  *)
(* is published at once, and the transaction's MinSeqNo is now at or below *)
(* the producer's SeqNo: its commit is ABORTED. The plain write wins. A    *)
(* message is identified by its producer and SeqNo, as YDB's              *)
(* deduplication identifies it: (0, o) is the application's SeqNo o + 1.  *)
(* At any time the application may also write outside any transaction    *)
(* (PlainWrite, MaxPlainWrites) as any of its producers, with the SeqNo it *)
(* names: the partition publishes it at once, answers a SeqNo at or below *)
(* the producer's last AlreadyWritten (the SDK's Skipped), and makes it    *)
(* wait while a transaction of the producer is between its predicate and   *)
(* its commit. A SeqNo past a transaction's aborts that transaction.       *)
(* Another producer writes too (MaxOtherWrites, OtherProducerWrite): its  *)
(* messages (-1, o) go to the partition the transaction writes first and  *)
(* are visible at once; they never conflict with the transaction, whose   *)
(* messages land after them at the commit (YDB's TxUsage WriteToTopic_Demo_2*)
(* and _7: before the commit a reader sees exactly the other producer's).  *)
(*                                                                         *)
(* Reads outside transactions [ocommit] (MaxPlainCommits): an idle worker *)
(* reads a batch of its partition with no transaction (PlainRead: the     *)
(* SDK's receive_batch) and commits its end offset on its read stream     *)
(* (CommitOffset: reader.commit or commit_with_ack). The partition makes  *)
(* the commit wait while a transaction of the consumer is calculated and  *)
(* not yet executed there; it refuses it when the group gave the partition *)
(* to another reader (the read session is dead), answers an end at or     *)
(* below the committed offset as stale, and otherwise moves the offset.   *)
(* It does not check where the batch began: a commit outside a            *)
(* transaction is at least once. A zombie's transaction that committed a *)
(* range the new reader had read too is consumed twice (model             *)
(* ydb_plain_commit_duplicates); with no zombie, ExactlyOnce holds.       *)
(*                                                                         *)
(* Resends [dedup, resend] (MaxReconnects): a write or its               *)
(* acknowledgement is lost, the SDK's writer reconnects and sends every    *)
(* unacknowledged message again with its SeqNo (Resend); the supportive    *)
(* partition stores a message it already has once: AlreadyWritten, the    *)
(* SDK's Skipped (PqWrite). A writer whose deduplication is off (no       *)
(* producer id) stores the resend twice: at least once (no_write_dedup).   *)
(*                                                                         *)
(* A partition of B splits (Split, MaxSplits): it becomes inactive and     *)
(* takes no more data [split]; its children are not modelled (routing by  *)
(* key is fixed, so a later write routed to it cannot commit: the          *)
(* transaction is ABORTED and tried again). A split waits for a            *)
(* transaction calculated and not yet executed on the partition (the      *)
(* config change goes through the tablet's queue like a transaction).     *)
(*                                                                         *)
(* A write-only transaction may open several writers (TxWriters) [multi]: *)
(* writer g writes as producer Producer(g) (0, then -2, -3, ...: never a  *)
(* partition of A nor the other producer), its own SeqNos from the        *)
(* transaction's base on, routed by key like every message. The writers   *)
(* share the transaction's BatchMax writes. On tablet B each producer's   *)
(* first message in a supportive partition must be past that producer's   *)
(* last SeqNo in the main partition, and two transactions block each other *)
(* where they share a producer (TxProducersOf). Writer g of every          *)
(* transaction is the same producer: the write sessions of               *)
(* Transactions_Conflict_On_SeqNo, shared by the transactions; the wide    *)
(* transactions' producer of their own per transaction is Producers =     *)
(* "none". A writer's stream is its own (InOrder per producer); the        *)
(* writers of a transaction reconnect together (Resend: an abstraction).   *)
(*                                                                         *)
(* The application may close its transactional writer by force           *)
(* (ForceClose, ForceCloses) while writes are unacknowledged [close]: the  *)
(* writer sends nothing more and never flushes, its SDK answers the commit *)
(* SESSION_EXPIRED without sending it, and the application rolls back      *)
(* (WriterFailed). Writes already sent may still reach the tablet.         *)
(*                                                                         *)
(* Faults: a worker hangs and resumes; while it hangs the group gives its *)
(* partition to another worker (TakeOver) and the hung one resumes as a   *)
(* zombie; a lock dies (LockLost: session death or the lock service), and *)
(* tablet B then deletes the WriteId's supportive partitions (PqLockLost); *)
(* a tablet restarts at any moment (TabletRestart: volatile state lost and *)
(* the writers' streams to it broken, recovery from the durable keys as    *)
(* [fix] does, read sets resent; plan steps are                            *)
(* resent by the mediator because they are unacknowledged); a read set or *)
(* write is lost in the network (Lose) and read sets are resent until      *)
(* acknowledged (PqResendReadSet); a proposal's deadline passes before it  *)
(* is planned (PlanDeadline).                                              *)
(*                                                                         *)
(* Abstractions (each said where it is made): one consumer c; a message is *)
(* identified by its partition and offset and routed by key (as in         *)
(* Resharding.tla); GetWriteId, GetOwnership and the creation of a         *)
(* supportive partition are folded into the first write of a WriteId to a *)
(* partition (PqWrite); KQP talks to tablets over reliable pipes (its      *)
(* requests and their answers are part of the steps that take them); the  *)
(* SDK sees a write's acknowledgement when the tablet stores it; with      *)
(* Producers = "none" each writer is a producer of its own (the MinSeqNo  *)
(* check across transactions is out), with "partition" a producer's last   *)
(* SeqNo on a partition of B is read off its log (LastSeqNo); either way a *)
(* repeat within a supportive partition is read off its data              *)
(* (WriteRepeated); a reconnect and its resend are one                     *)
(* step (Resend), and so are a write and its lost acknowledgement          *)
(* (PqWriteAckLost); the datashard goes through the same states as a PQ   *)
(* tablet with one "partition" (datashard-distributed-txs.md describes the *)
(* same propose / plan / read-set protocol); the table is one row, its     *)
(* version the number of its committed writes, and a transaction's read   *)
(* and upsert of it are one step (TableWrite); time is not a variable:     *)
(* MaxStep passing is the PlanDeadline step.                               *)
(*                                                                         *)
(* Bugs (constant Bugs) are the naive designs and real bugs the models     *)
(* must keep violating a named invariant; see specs/ydb/models.toml.       *)
(***************************************************************************)
EXTENDS Integers, Sequences, FiniteSets, TLC

CONSTANTS
    \* @type: Set(Str);
    Workers,
    \* @type: Int;
    NumSrc,
    \* @type: Int;
    NumDst,
    \* @type: Int;
    MsgsPerSrc,
    \* The largest batch a read returns.
    \* @type: Int;
    BatchMax,
    \* How many transactions the workers may begin in all.
    \* @type: Int;
    MaxTxns,
    \* Whether each transaction also upserts a row of a table (datashard DS).
    \* @type: Bool;
    Table,
    \* The writers' producers: "none" (each writer a producer of its own, as the SDK's random
    \* producer id makes it: the MinSeqNo check across transactions is out) or
    \* "partition": the writer of a batch read from partition p of A writes as producer p
    \* with SeqNo = the message's offset in p plus one (the SDK's producer_id and
    \* TopicWriterMessage(seqno=...); header).
    \* @type: Str;
    Producers,
    \* Whether the application may roll a transaction back of its own accord
    \* (RollbackTx before the commit; header).
    \* @type: Bool;
    Rollbacks,
    \* The shapes of transaction the workers begin: "copy", "read", "write" (header).
    \* @type: Set(Str);
    TxShapes,
    \* "v25" or "v26": which durable writes the commit path makes (header).
    \* @type: Str;
    Version,
    \* @type: Int;
    MaxHangs,
    \* @type: Int;
    MaxRestarts,
    \* @type: Int;
    MaxLoss,
    \* @type: Int;
    MaxLockLosses,
    \* @type: Int;
    MaxDeadlines,
    \* How many writes outside any transaction the applications make (header).
    \* @type: Int;
    MaxNonTxWrites,
    \* How many times a transactional writer reconnects and resends (header).
    \* @type: Int;
    MaxReconnects,
    \* How many ranges of its own a read-only transaction names with
    \* UpdateOffsetsInTransaction (header).
    \* @type: Int;
    MaxRanges,
    \* How many batches a copy or read-only transaction reads (header; 1: one read).
    \* @type: Int;
    MaxReads,
    \* How many writes outside any transaction another producer makes (header).
    \* @type: Int;
    MaxOtherWrites,
    \* How many partitions of B split in a run (header).
    \* @type: Int;
    MaxSplits,
    \* Whether the application may close its transactional writer by force (header).
    \* @type: Bool;
    ForceCloses,
    \* How many writers (producers) a write-only transaction may open (header; 1: one).
    \* @type: Int;
    TxWriters,
    \* How many writes outside any transaction the application makes at any time, each with
    \* the SeqNo it names (PlainWrite; header).
    \* @type: Int;
    MaxPlainWrites,
    \* How many partitions of A one transaction reads: 1, or 2 (ReadOther; header).
    \* @type: Int;
    MaxPartsRead,
    \* How many producers write only outside transactions (PlainWrite; header; 1: the other
    \* producer alone). A server the SDK talks to gives each producer id of a plain writer one.
    \* @type: Int;
    Others,
    \* How many batches the workers read outside transactions and commit with CommitOffset
    \* (PlainRead; header).
    \* @type: Int;
    MaxPlainCommits,
    \* @type: Set(Str);
    Bugs

BugNames == {
    "no_offset_check",        \* the read predicate is skipped: zombies commit
    "overlap_check",          \* a range that merely intersects the committed offset passes
    "no_gap_check",           \* committed < b passes (the messages in between are lost)
    "no_reread",              \* the SDK keeps its read position after an abort (ydb-python-sdk PR 834)
    "no_consumer_block",      \* two transactions in flight on one consumer both pass the check
    "visible_before_commit",  \* writes go straight to the main partition
    "independent_decision",   \* each participant executes on its own predicate, no read sets
    "partition_reapply",      \* a partition ignores the (step, txid) it already applied
    "lock_race",              \* a write after the lock loss creates a new supportive partition (ydb PR 4758)
    "ack_rs_before_persist",  \* a read set is acknowledged on receipt (ydb issue 17843)
    "ack_plan_on_receipt",    \* a plan step is acknowledged on receipt, not once EXECUTED
    "no_flush",               \* the SDK commits with writes unacknowledged
    "rollback_while_committing", \* the session takes a rollback while the commit is under way
    "no_seqno_check",         \* B's predicate ignores the producer's SeqNo (the MinSeqNo check)
    "no_producer_block",      \* two transactions of one producer are calculated at once on B
    "immediate_no_offset_check", \* the immediate path commits a read range without the offset check
    "participants_from_offsets", \* KQP takes its participants from the read offsets only
    "seqno_ignores_plain",    \* the MinSeqNo check counts only the producer's transactional writes
    "no_write_dedup",         \* a supportive partition takes a repeated SeqNo again (no AlreadyWritten)
    "no_table_lock",          \* a committed write of the row does not break another transaction's lock
    "range_gap_accepted",     \* KQP commits [min, max) of ranges that are not one interval (no CheckTopicOperations)
    "split_ignored",          \* B's predicate does not ask whether the partition is still active (CanWrite)
    "seqno_first_source",     \* a supportive partition checks the MinSeqNo of its first SourceId only
    "plain_no_dedup",         \* a write outside a transaction with a SeqNo already written is stored again
    "first_range_only",       \* the read predicate checks a transaction's first partition of A only
    "commit_dead_session",    \* a commit outside a transaction applies in a read session the group ended
    "commit_unblocked"        \* a commit outside a transaction passes one of the consumer in flight
}

ASSUME /\ Workers # {}
       /\ NumSrc \in Nat \ {0} /\ NumDst \in Nat \ {0} /\ MsgsPerSrc \in Nat
       /\ BatchMax \in Nat \ {0} /\ MaxTxns \in Nat
       /\ Table \in BOOLEAN /\ Rollbacks \in BOOLEAN /\ Producers \in {"none", "partition"} /\ Version \in {"v25", "v26"}
       /\ MaxHangs \in Nat /\ MaxRestarts \in Nat /\ MaxLoss \in Nat
       /\ MaxLockLosses \in Nat /\ MaxDeadlines \in Nat /\ MaxNonTxWrites \in Nat /\ MaxReconnects \in Nat
       /\ MaxRanges \in Nat /\ MaxReads \in Nat \ {0} /\ MaxOtherWrites \in Nat /\ MaxSplits \in Nat /\ ForceCloses \in BOOLEAN
       /\ TxWriters \in Nat \ {0} /\ MaxPlainWrites \in Nat /\ MaxPartsRead \in {1, 2} /\ Others \in Nat \ {0}
       /\ MaxPlainCommits \in Nat
       /\ TxShapes # {} /\ TxShapes \subseteq {"copy", "read", "write"}
       /\ Bugs \subseteq BugNames

\* @type: (Str) => Bool;
Bug(b) == b \in Bugs

(*
  @typeAlias: msg = {src: Int, off: Int};
  @typeAlias: worker = {phase: Str, shape: Str, tx: Int, src: Int, b: Int, e: Int, sent: Int, row: Bool, hung: Bool, pos: Int -> Int, ranges: Int, reads: Int, closed: Bool, gsent: Int -> Int};
  @typeAlias: session = {st: Str, shape: Str, w: Str, src: Int, b: Int, e: Int, dsts: Set(Int), lock: Str, prepared: Set(Str), refused: Bool, results: Set(Str), aborted: Bool, depth: Int, pdepth: Int, named: Set(Int), bad: Bool, prods: Set(Int), src2: Int, b2: Int, e2: Int};
  @typeAlias: sup = {st: Str, data: Seq($msg)};
  @typeAlias: durable = {st: Str, step: Int, dec: Str, done: Set(Int), depth: Int};
  @typeAlias: volatile = {st: Str, step: Int, own: Str, dec: Str, rs: Set(Str), abortSeen: Bool, acked: Set(Str), done: Set(Int), depth: Int, rsdepth: Int};
  @typeAlias: net = {type: Str, tx: Int, from: Str, to: Str, dst: Int, m: $msg, dec: Str, depth: Int};
  @typeAlias: action = {name: Str, actor: Str, args: Str -> Int};
  @typeAlias: pcommit = {w: Str, src: Int, b: Int, e: Int, res: Str};
*)
YdbTopics_typedefs == TRUE

\* The variables, one group per component (the tuples after the declarations, as etcd
\* raft's and CCF's specs group theirs). An action's UNCHANGED names only groups: a
\* component that a step changes in part is split into smaller groups, each a tuple of
\* its own, and the component's group is the tuple of its parts.
VARIABLES
    \* -- clientVars: the workers and their consumer group --
    \* The group's assignment of A's partitions to workers (ownerVars).
    \* @type: Int -> Str;
    owner,
    \* Each worker: its SDK transaction, reader position per partition (-1:
    \* read from the committed offset), writes sent, and whether it hangs (workerVars).
    \* @type: Str -> $worker;
    cl,
    \* -- kqpVars: the KQP sessions --
    \* The KQP session's view of each transaction (sessionVars).
    \* @type: Int -> $session;
    kqp,
    \* The next transaction id (KQP TxId, also the WriteId) (txIdVars).
    \* @type: Int;
    nextTx,
    \* -- messageVars: the network --
    \* Messages in flight: writes to tablet B, read sets, read-set acks.
    \* @type: Set($net);
    net,
    \* -- dataVars: the tablets' data: topic A's offsets, topic B's partitions, the table, (step, txid) --
    \* Supportive partitions of tablet B per WriteId and partition of B (supVars).
    \* @type: Int -> (Int -> $sup);
    sup,
    \* Consumer c's committed offset of each partition of A (durable) (offsetVars).
    \* @type: Int -> Int;
    committed,
    \* The main partitions of B: what readers see (logVars).
    \* @type: Int -> Seq($msg);
    target,
    \* The table's row: the transactions whose writes of it committed, in order (its
    \* version is their number) (rowVars).
    \* @type: Seq(Int);
    rows,
    \* The version of the row each transaction read under its lock before writing it (-1:
    \* it did not touch the table) (urowVars).
    \* @type: Int -> Int;
    urows,
    \* Per participant and partition: the last applied <<step, txid>> (durable) (metaVars).
    \* @type: Str -> (Int -> <<Int, Int>>);
    meta,
    \* Per partition of B: -1 while it is active; once a split made it inactive, the length
    \* of its log then, which it keeps (sealVars) [split].
    \* @type: Int -> Int;
    sealed,
    \* -- tabletVars: each participant's records of each transaction --
    \* Per participant and transaction: the durable keys (durableVars).
    \* @type: Str -> (Int -> $durable);
    pdur,
    \* Per participant and transaction: the volatile state (volatileVars).
    \* @type: Str -> (Int -> $volatile);
    ptx,
    \* -- coordVars: the coordinator and the mediator --
    \* The coordinator's plan: the step of each planned transaction (0: none) (planVars).
    \* @type: Int -> Int;
    plan,
    \* The mediator's unacknowledged plan steps per participant (mediatorVars).
    \* @type: Str -> Set(<<Int, Int>>);
    pending,
    \* The coordinator's next plan step (planVars).
    \* @type: Int;
    nextStep,
    \* A transaction that can no longer be planned (MaxStep passed, or KQP cancelled it)
    \* (expiryVars).
    \* @type: Int -> Bool;
    expired,
    \* -- ghostVars: what the invariants check --
    \* Ghost: what each participant applied ("none", "commit", "abort") (appliedVars).
    \* @type: Str -> (Int -> Str);
    applied,
    \* Ghost: each participant's predicate ("none", "commit", "abort") (voteVars).
    \* @type: Str -> (Int -> Str);
    votes,
    \* Ghost: the messages the SDK saw acknowledged as written in the transaction (wackedVars).
    \* @type: Int -> Set($msg);
    wacked,
    \* Ghost: the messages written outside any transaction (plainVars).
    \* @type: Set($msg);
    plain,
    \* Ghost: the resent messages a supportive partition answered AlreadyWritten, and the
    \* writes outside a transaction a partition did (skippedVars).
    \* @type: Set($msg);
    skipped,
    \* Ghost: each commit outside a transaction, worker w's of [b, e) of partition src, and
    \* the partition's answer: "ok" (the offset moved), "stale", "dead" (plainCommitVars).
    \* @type: Set($pcommit);
    plainCommits,
    \* Ghost: what the client was told (toldVars), and the durable-write depth behind a
    \* COMMITTED (depthVars).
    \* @type: Int -> Str;
    told,
    \* @type: Int -> Int;
    toldDepth,
    \* Ghost: an offset commit applied with committed # b (rangeCheckVars), or a (step, txid)
    \* applied at or below one applied before (orderCheckVars).
    \* @type: Bool;
    rangeBad,
    \* @type: Bool;
    orderBad,
    \* -- faultVars: faults so far, one group per kind --
    \* @type: Int;
    hangs,
    \* @type: Int;
    restarts,
    \* @type: Int;
    losses,
    \* @type: Int;
    lockLosses,
    \* @type: Int;
    deadlines,
    \* @type: Int;
    reconnects,
    \* The writes outside a transaction made so far (PlainWrite's budget, like a fault's).
    \* @type: Int;
    plainSent,
    \* -- historyVars --
    \* The last step, for readable traces (history only).
    \* @type: $action;
    action

\* The groups, smallest first. Where steps change a component's variables one at a time
\* (data, ghosts, fault budgets), its parts are groups of one variable. historyVars, which
\* every step changes, is the part of vars that MCYdbTopics's View leaves out.
ownerVars == <<owner>>
workerVars == <<cl>>
clientVars == <<ownerVars, workerVars>>
sessionVars == <<kqp>>
txIdVars == <<nextTx>>
kqpVars == <<sessionVars, txIdVars>>
messageVars == <<net>>
offsetVars == <<committed>>             \* topic A: the consumer's committed offsets
supVars == <<sup>>                      \* topic B: the supportive partitions
logVars == <<target>>                   \* topic B: the main partitions
topicBVars == <<supVars, logVars>>
rowVars == <<rows>>                     \* the table: committed rows
urowVars == <<urows>>                   \* the table: rows under a lock
tableVars == <<rowVars, urowVars>>
metaVars == <<meta>>
sealVars == <<sealed>>                  \* topic B: the partitions a split made inactive
partitionVars == <<metaVars, sealVars>>
dataVars == <<offsetVars, topicBVars, tableVars, partitionVars>>
durableVars == <<pdur>>
volatileVars == <<ptx>>
tabletVars == <<durableVars, volatileVars>>
planVars == <<plan, nextStep>>
mediatorVars == <<pending>>
expiryVars == <<expired>>
coordVars == <<planVars, mediatorVars, expiryVars>>
appliedVars == <<applied>>
voteVars == <<votes>>
decisionVars == <<appliedVars, voteVars>>  \* what the participants computed and applied
wackedVars == <<wacked>>
plainVars == <<plain>>
skippedVars == <<skipped>>
plainCommitVars == <<plainCommits>>
toldVars == <<told>>
depthVars == <<toldDepth>>
answerVars == <<toldVars, depthVars>>      \* what the client was told, and the depth behind it
rangeCheckVars == <<rangeBad>>
orderCheckVars == <<orderBad>>
checkVars == <<rangeCheckVars, orderCheckVars>>
ghostVars == <<decisionVars, wackedVars, plainVars, skippedVars, plainCommitVars, answerVars, checkVars>>
hangVars == <<hangs>>
restartVars == <<restarts>>
lossVars == <<losses>>
lockLossVars == <<lockLosses>>
deadlineVars == <<deadlines>>
reconnectVars == <<reconnects>>
budgetVars == <<plainSent>>
faultVars == <<hangVars, restartVars, lossVars, lockLossVars, deadlineVars, reconnectVars, budgetVars>>
historyVars == <<action>>
vars == <<clientVars, kqpVars, messageVars, dataVars, tabletVars, coordVars, ghostVars, faultVars, historyVars>>

SrcParts == 1..NumSrc
DstParts == 1..NumDst
Offsets == 0..(MsgsPerSrc - 1)
Txns == 1..MaxTxns
PartIds == 1..(IF NumSrc > NumDst THEN NumSrc ELSE NumDst)
Tablets == IF Table THEN {"A", "B", "DS"} ELSE {"A", "B"}

\* @type: (Int, Int) => $msg;
Msg(p, o) == [src |-> p, off |-> o]
Messages == [src: SrcParts, off: Offsets]
\* The application's own messages, written by "write" transactions and outside transactions:
\* (q, o), SeqNo o + 1 of producer q (WriteBase says where a transaction's begin).
AppOffsets == 0..(MaxTxns * BatchMax + MaxNonTxWrites + MaxOtherWrites + MaxPlainWrites - 1)
\* The application's own producer (0) and another producer (-1) that writes outside
\* transactions only.
OtherProducer == -1
\* The writers of a write-only transaction [multi]: writer g writes as producer Producer(g),
\* 0 for the first, then -2, -3, ... (no partition of A, no OtherProducer).
Writers == 0..(TxWriters - 1)
\* @type: (Int) => Int;
Producer(g) == IF g = 0 THEN 0 ELSE -1 - g
TxProducers == {Producer(g) : g \in Writers}
\* The producers that write only outside transactions: OtherProducer (-1), then below the
\* writers' ids (-1 - TxWriters - k).
\* @type: (Int) => Int;
Other(k) == IF k = 0 THEN OtherProducer ELSE -1 - TxWriters - k
OtherIds == {Other(k) : k \in 0..(Others - 1)}
\* The producers that write outside transactions with PlainWrite: the writers' and the others;
\* with Producers = "none" a transaction's writer is a producer of its own, which no plain writer
\* shares, so only the others.
PlainProducers == IF Producers = "partition" THEN TxProducers \cup OtherIds ELSE OtherIds
AppMessages == [src: TxProducers \cup OtherIds, off: AppOffsets]

\* Routing by key, as in Resharding.tla.
\* @type: (Int, Int) => Int;
KeyOf(p, o) == p + o
\* @type: (Int, Int) => Int;
Dest(p, o) == (KeyOf(p, o) % NumDst) + 1

\* @type: (Int, Int) => Int;
Max2(a, b) == IF a > b THEN a ELSE b
\* @type: (Int, Int) => Int;
Min2(a, b) == IF a < b THEN a ELSE b
\* @type: (<<Int, Int>>, <<Int, Int>>) => Bool;
LessEq(x, y) == x[1] < y[1] \/ (x[1] = y[1] /\ x[2] <= y[2])

\* @type: Str -> Int;
NoArgs == [k \in {} |-> 0]
\* @type: (Str, Str, Str -> Int) => $action;
Act(name, actor, args) == [name |-> name, actor |-> actor, args |-> args]

\* @type: $worker;
IdleWorker == [phase |-> "idle", shape |-> "copy", tx |-> 0, src |-> 0, b |-> 0, e |-> 0, sent |-> 0, row |-> FALSE,
               hung |-> FALSE, pos |-> [p \in SrcParts |-> -1], ranges |-> 0,
               reads |-> 0, closed |-> FALSE, gsent |-> [g \in Writers |-> 0]]
\* @type: $session;
NoSession == [st |-> "none", shape |-> "copy", w |-> "", src |-> 0, b |-> 0, e |-> 0, dsts |-> {}, lock |-> "alive",
              prepared |-> {}, refused |-> FALSE, results |-> {}, aborted |-> FALSE, depth |-> 0, pdepth |-> 0,
              named |-> {}, bad |-> FALSE, prods |-> {}, src2 |-> 0, b2 |-> 0, e2 |-> 0]
\* @type: $sup;
NoSup == [st |-> "none", data |-> <<>>]
\* @type: $sup;
NoSupDone == [st |-> "done", data |-> <<>>]
\* @type: $durable;
NoDurable == [st |-> "NONE", step |-> 0, dec |-> "none", done |-> {}, depth |-> 0]
\* @type: $volatile;
NoVolatile == [st |-> "NONE", step |-> 0, own |-> "none", dec |-> "none", rs |-> {}, abortSeen |-> FALSE,
               acked |-> {}, done |-> {}, depth |-> 0, rsdepth |-> 0]

\* The participants of transaction tx: tablet A (the read range) unless it only writes,
\* tablet B (the writes) unless it only reads or wrote nothing, the table's shard if it
\* touched the table. A write-only transaction that wrote nothing has no topic operation
\* [empty]: with no row either it has no participant at all, and KQP commits it at once.
\* @type: (Int) => Set(Str);
Participants(tx) ==
    LET topics == CASE kqp[tx].shape = "read" -> {"A"}
                    [] kqp[tx].shape = "write" /\ kqp[tx].dsts = {} -> {}
                    [] kqp[tx].shape = "write" -> {"B"}
                    [] OTHER -> {"A", "B"}
    IN topics \cup (IF urows[tx] # -1 THEN {"DS"} ELSE {})
\* @type: (Str, Int) => Set(Str);
Peers(t, tx) == Participants(tx) \ {t}
\* The partitions of participant t that transaction tx touches.
\* @type: (Str, Int) => Set(Int);
PartsOf(t, tx) == CASE t = "A" -> {kqp[tx].src} \cup (IF kqp[tx].src2 # 0 THEN {kqp[tx].src2} ELSE {})
                    [] t = "B" -> kqp[tx].dsts
                    [] OTHER -> {1}

\* Transaction tx is immediate [imm]: one participant, on one partition.
\* @type: (Int) => Bool;
Immediate(tx) == Cardinality(Participants(tx)) = 1 /\ \A t \in Participants(tx) : Cardinality(PartsOf(t, tx)) = 1

\* The offset ranges transaction tx named are not one interval [ranges].
\* @type: (Int) => Bool;
RangesSplit(tx) == kqp[tx].shape = "read" /\ kqp[tx].named # kqp[tx].b..(kqp[tx].e - 1)

\* KQP refuses the commit before it proposes (CheckTopicOperations: "Incorrect offset ranges
\* in the transaction", ABORTED) [ranges]; range_gap_accepted sends [min, max) instead.
\* @type: (Int) => Bool;
KqpRefuses(tx) == RangesSplit(tx) /\ ~Bug("range_gap_accepted")

\* The participants KQP proposes to: none when it refuses the commit itself; with
\* participants_from_offsets, those of the read offsets only (a transaction that only
\* writes has none and commits as empty).
\* @type: (Int) => Set(Str);
KqpParticipants(tx) ==
    IF KqpRefuses(tx) \/ (Bug("participants_from_offsets") /\ kqp[tx].shape = "write") THEN {} ELSE Participants(tx)

\* How many writes worker w's transaction makes: none for a read-only one, as many as it
\* made for a write-only one (the SDK's writer does not say how many it will write), its
\* batch for a copy.
\* @type: (Str) => Int;
Writes(w) == CASE cl[w].shape = "read" -> 0
               [] cl[w].shape = "write" -> cl[w].sent
               [] OTHER -> (cl[w].e - cl[w].b) + (kqp[cl[w].tx].e2 - kqp[cl[w].tx].b2)

\* The messages of transaction tx's batch (of a write-only one: its writers' SeqNos from
\* its base on, as many as it wrote in all, a superset of what each writer wrote).
\* @type: (Int) => Set($msg);
Batch(tx) == IF kqp[tx].shape = "write" THEN {Msg(q, o) : q \in TxProducers, o \in kqp[tx].b..(kqp[tx].e - 1)}
             ELSE {Msg(kqp[tx].src, o) : o \in kqp[tx].b..(kqp[tx].e - 1)}
                  \cup {Msg(kqp[tx].src2, o) : o \in kqp[tx].b2..(kqp[tx].e2 - 1)}

\* Whether message m is in transaction tx's batch: m \in Batch(tx), without building the set
\* (the invariants ask it of every message of B's logs, after every event of a trace).
\* @type: ($msg, Int) => Bool;
InBatch(m, tx) ==
    IF kqp[tx].shape = "write" THEN m.src \in TxProducers /\ m.off \in kqp[tx].b..(kqp[tx].e - 1)
    ELSE \/ m.src = kqp[tx].src /\ m.off \in kqp[tx].b..(kqp[tx].e - 1)
         \/ m.src = kqp[tx].src2 /\ m.off \in kqp[tx].b2..(kqp[tx].e2 - 1)

\* The range [b, e) transaction tx read on partition k of A: its first partition's, or its
\* second's [two].
\* @type: (Int, Int) => <<Int, Int>>;
RangeOn(tx, k) == IF k # 0 /\ k = kqp[tx].src2 THEN <<kqp[tx].b2, kqp[tx].e2>> ELSE <<kqp[tx].b, kqp[tx].e>>

\* The producers (SourceIds) of transaction tx's writes: its writers' for a write-only one,
\* the producer of its source partition for a copy (TxAffectedSourcesIds [seqno, multi]).
\* @type: (Int) => Set(Int);
TxProducersOf(tx) == IF kqp[tx].shape = "write" THEN kqp[tx].prods ELSE PartsOf("A", tx)

\* Depth of the durable writes a commit waits for: the data written in the transaction.
\* @type: (Int) => Int;
DataDepth(tx) == IF wacked[tx] # {} THEN 1 ELSE 0

\* Producer p's last SeqNo on partition d of B, read off d's log: the largest offset + 1
\* of p's messages in it (0: none) [seqno]; its transactional writes are there once
\* committed, its writes outside transactions at once [ntx].
\* @type: (Int, Int) => Int;
ProducerLast(d, p) ==
    LET seqs == {target[d][i].off + 1 : i \in {j \in DOMAIN target[d] : target[d][j].src = p}}
    IN IF seqs = {} THEN 0 ELSE CHOOSE x \in seqs : \A y \in seqs : y <= x

\* The last SeqNo the MinSeqNo check compares with: ProducerLast, or, with
\* seqno_ignores_plain, that of the producer's transactional writes only.
\* @type: (Int, Int) => Int;
LastSeqNo(d, p) ==
    IF ~Bug("seqno_ignores_plain") THEN ProducerLast(d, p)
    ELSE LET seqs == {target[d][i].off + 1 :
                          i \in {j \in DOMAIN target[d] : target[d][j].src = p /\ target[d][j] \notin plain}}
         IN IF seqs = {} THEN 0 ELSE CHOOSE x \in seqs : \A y \in seqs : y <= x

\* @type: (Str, Str, Int, Str, Int) => $net;
ReadSet(from, to, tx, dec, depth) ==
    [type |-> "RS", tx |-> tx, from |-> from, to |-> to, dst |-> 0, m |-> Msg(0, 0), dec |-> dec, depth |-> depth]
\* @type: (Str, Str, Int) => $net;
ReadSetAck(from, to, tx) ==
    [type |-> "RSAck", tx |-> tx, from |-> from, to |-> to, dst |-> 0, m |-> Msg(0, 0), dec |-> "none", depth |-> 0]
\* @type: (Int, Int, $msg) => $net;
WriteMsg(tx, d, m) ==
    [type |-> "Write", tx |-> tx, from |-> "", to |-> "B", dst |-> d, m |-> m, dec |-> "none", depth |-> 0]

-----------------------------------------------------------------------------
(* Initial state *)

Init ==
    /\ owner \in [SrcParts -> Workers]
    /\ cl = [w \in Workers |-> IdleWorker]
    /\ kqp = [tx \in Txns |-> NoSession]
    /\ nextTx = 1
    /\ net = {}
    /\ sup = [tx \in Txns |-> [d \in DstParts |-> NoSup]]
    /\ committed = [p \in SrcParts |-> 0]
    /\ target = [d \in DstParts |-> <<>>]
    /\ rows = <<>>
    /\ urows = [tx \in Txns |-> -1]
    /\ meta = [t \in Tablets |-> [k \in PartIds |-> <<0, 0>>]]
    /\ sealed = [d \in DstParts |-> -1]
    /\ pdur = [t \in Tablets |-> [tx \in Txns |-> NoDurable]]
    /\ ptx = [t \in Tablets |-> [tx \in Txns |-> NoVolatile]]
    /\ plan = [tx \in Txns |-> 0]
    /\ pending = [t \in Tablets |-> {}]
    /\ nextStep = 1
    /\ expired = [tx \in Txns |-> FALSE]
    /\ applied = [t \in Tablets |-> [tx \in Txns |-> "none"]]
    /\ votes = [t \in Tablets |-> [tx \in Txns |-> "none"]]
    /\ wacked = [tx \in Txns |-> {}]
    /\ plain = {}
    /\ skipped = {}
    /\ plainCommits = {}
    /\ told = [tx \in Txns |-> "none"]
    /\ toldDepth = [tx \in Txns |-> 0]
    /\ rangeBad = FALSE
    /\ orderBad = FALSE
    /\ hangs = 0 /\ restarts = 0 /\ losses = 0 /\ lockLosses = 0 /\ deadlines = 0 /\ reconnects = 0 /\ plainSent = 0
    /\ action = Act("Init", "", NoArgs)

-----------------------------------------------------------------------------
(* The worker and its SDK *)

\* Where worker w's read of partition p begins: its position, or the committed offset.
\* @type: (Str, Int) => Int;
ReadFrom(w, p) == IF cl[w].pos[p] = -1 THEN committed[p] ELSE cl[w].pos[p]

\* Worker w begins a transaction of shape sh and reads a batch [b, e) of partition p as
\* consumer c, and the read range joins the transaction (BeginTx, the read, and the SDK's
\* UpdateOffsetsInTransaction folded into one step). A new partition session reads from
\* the committed offset; otherwise the reader goes on from where it is.
\* @type: (Str, Int, Int, Str) => Bool;
ReadIn(w, p, e, sh) ==
    /\ sh \in TxShapes
    /\ ~cl[w].hung
    /\ cl[w].phase = "idle"
    /\ owner[p] = w
    /\ nextTx <= MaxTxns
    /\ LET b == ReadFrom(w, p)
           tx == nextTx
       IN /\ b < MsgsPerSrc
          /\ e \in (b + 1)..Min2(b + BatchMax, MsgsPerSrc)
          /\ kqp' = [kqp EXCEPT ![tx] = [NoSession EXCEPT !.st = "open", !.shape = sh, !.w = w, !.src = p, !.b = b,
                                                          !.e = e, !.named = IF sh = "read" THEN b..(e - 1) ELSE {}]]
          /\ cl' = [cl EXCEPT ![w] = [IdleWorker EXCEPT !.phase = "open", !.shape = sh, !.tx = tx, !.src = p, !.b = b,
                                                        !.e = e, !.pos = [cl[w].pos EXCEPT ![p] = e], !.reads = 1]]
    /\ nextTx' = nextTx + 1
    /\ UNCHANGED <<ownerVars, messageVars, dataVars, tabletVars, coordVars, ghostVars, faultVars>>

\* The batch is written to B in the same transaction (the "copy" shape).
\* @type: (Str, Int, Int) => Bool;
ReadBatch(w, p, e) ==
    /\ ReadIn(w, p, e, "copy")
    /\ action' = Act("ReadBatch", w, "txn_id" :> nextTx @@ "partition" :> p @@ "b" :> ReadFrom(w, p) @@ "e" :> e)

\* A read-only transaction: the batch is processed outside the topics and only its offsets
\* commit (receive_batch_with_tx, then tx.commit() with no writer).
\* @type: (Str, Int, Int) => Bool;
ReadOnlyBatch(w, p, e) ==
    /\ ReadIn(w, p, e, "read")
    /\ action' = Act("ReadOnlyBatch", w, "txn_id" :> nextTx @@ "partition" :> p @@ "b" :> ReadFrom(w, p) @@ "e" :> e)

\* Worker w's open copy or read-only transaction reads the next batch [cl[w].e, e) of its
\* partition, where its reader is (receive_batch_with_tx again): the batch joins the
\* transaction's range, and a copy transaction will write it after what it wrote. Only the
\* partition's owner reads, and only before the transaction names ranges of its own (the
\* SDK names a batch's offsets at the commit, after any the application named).
\* @type: (Str, Int) => Bool;
ReadMore(w, e) ==
    /\ cl[w].reads < MaxReads
    /\ ~cl[w].hung
    /\ cl[w].shape \in {"copy", "read"} /\ cl[w].phase = "open" /\ cl[w].ranges = 0
    /\ owner[cl[w].src] = w
    /\ e \in (cl[w].e + 1)..Min2(cl[w].e + BatchMax, MsgsPerSrc)
    /\ kqp[cl[w].tx].src2 = 0
    /\ LET tx == cl[w].tx
       IN /\ kqp' = [kqp EXCEPT ![tx].e = e,
                                ![tx].named = IF cl[w].shape = "read" THEN @ \cup cl[w].e..(e - 1) ELSE @]
          /\ cl' = [cl EXCEPT ![w].e = e, ![w].reads = @ + 1, ![w].pos = [@ EXCEPT ![cl[w].src] = e]]
          /\ action' = Act("ReadMore", w, "txn_id" :> tx @@ "partition" :> cl[w].src @@ "b" :> cl[w].e @@ "e" :> e)
    /\ UNCHANGED <<ownerVars, txIdVars, messageVars, dataVars, tabletVars, coordVars, ghostVars, faultVars>>

\* Worker w's open copy or read-only transaction reads a batch [b, e) of a second partition p
\* of A [two] (MaxPartsRead = 2): the SDK's reader has a partition session on each partition
\* the group gave it, and receive_batch_with_tx returns a batch of any of them; the batch
\* joins the transaction as a second range, KQP commits both (PartsOf: tablet A on two
\* partitions, never immediate), and a copy transaction writes it after the first range's
\* messages. The first partition is not read again once a second was (ReadMore). YDB's TxUsage
\* WriteToTopic_Demo_47 reads two partitions in one transaction, _27 two topics.
\* @type: (Str, Int, Int) => Bool;
ReadOther(w, p, e) ==
    /\ MaxPartsRead >= 2
    /\ cl[w].reads < MaxReads
    /\ ~cl[w].hung
    /\ cl[w].shape \in {"copy", "read"} /\ cl[w].phase = "open" /\ cl[w].ranges = 0
    /\ p # cl[w].src /\ owner[p] = w
    /\ LET tx == cl[w].tx
           b == ReadFrom(w, p)
       IN /\ kqp[tx].src2 = 0
          /\ e \in (b + 1)..Min2(b + BatchMax, MsgsPerSrc)
          /\ kqp' = [kqp EXCEPT ![tx].src2 = p, ![tx].b2 = b, ![tx].e2 = e]
          /\ cl' = [cl EXCEPT ![w].reads = @ + 1, ![w].pos = [@ EXCEPT ![p] = e]]
          /\ action' = Act("ReadOther", w, "txn_id" :> tx @@ "partition" :> p @@ "b" :> b @@ "e" :> e)
    /\ UNCHANGED <<ownerVars, txIdVars, messageVars, dataVars, tabletVars, coordVars, ghostVars, faultVars>>

\* The reader's positions after transaction tx ended without a commit: it reads again from
\* the committed offset in every partition tx read.
\* @type: (Int -> Int, Int) => (Int -> Int);
Reread(pos, tx) == [p \in DOMAIN pos |-> IF p \in PartsOf("A", tx) THEN -1 ELSE pos[p]]

\* The application of worker w's open read-only transaction names a range [b, e) of its
\* partition of A as processed: UpdateOffsetsInTransaction [ranges] (it read those
\* messages outside the transaction). A range that intersects one the transaction has is
\* BAD_REQUEST ("offset ranges intersect"): KQP invalidates the transaction, and the reader
\* reads again from the committed offset. Otherwise it joins the transaction's interval set,
\* whose [min, max) KQP will send. e may pass the partition's end by one ("commit to the
\* future"), which only the partition finds.
\* @type: (Str, Int, Int) => Bool;
UpdateOffsets(w, b, e) ==
    /\ cl[w].ranges < MaxRanges
    /\ ~cl[w].hung
    /\ cl[w].shape = "read" /\ cl[w].phase = "open"
    /\ b \in 0..MsgsPerSrc
    /\ e \in (b + 1)..Min2(b + BatchMax, MsgsPerSrc + 1)
    /\ LET tx == cl[w].tx
           r == b..(e - 1)
           ok == r \cap kqp[tx].named = {}
       IN /\ IF ok
             THEN /\ kqp' = [kqp EXCEPT ![tx].named = @ \cup r, ![tx].b = Min2(@, b), ![tx].e = Max2(@, e)]
                  /\ cl' = [cl EXCEPT ![w].ranges = @ + 1]
                  /\ UNCHANGED toldVars
             ELSE /\ kqp' = [kqp EXCEPT ![tx].st = "done", ![tx].lock = "lost"]
                  /\ told' = [told EXCEPT ![tx] = "BAD_REQUEST"]
                  /\ cl' = [cl EXCEPT ![w] = [IdleWorker EXCEPT !.pos = Reread(cl[w].pos, tx)]]
          /\ action' = Act("UpdateOffsets", w, "txn_id" :> tx @@ "b" :> b @@ "e" :> e @@ "ok" :> IF ok THEN 1 ELSE 0)
    /\ UNCHANGED <<ownerVars, txIdVars, messageVars, dataVars, tabletVars, coordVars, decisionVars,
                   wackedVars, plainCommitVars, plainVars, skippedVars, depthVars, checkVars, faultVars>>

\* Where write-only transaction tx's writers begin their SeqNos [init]. With Producers =
\* "partition" the application's producers are shared, and the SDK's transactional writer
\* numbers its messages after the producer's last SeqNo in B, which its init returns
\* (ydb-python-sdk topic_writer_asyncio.py: last_seq_no, auto_seqno): here after the highest
\* last SeqNo of the transaction's producers (an abstraction: the SDK starts each writer after
\* its own producer's). Two transactions begun from the same state take the same SeqNos, and
\* the MinSeqNo check commits one of them (TxUsage WriteToTopic_Demo_4, _9; the
\* TopicTxSkipConflictAndProducerMeta suite with its flag off); one begun after writes outside
\* a transaction of its producer numbers after them (WriteToTopic_Demo_17, _18 to _20's old
\* head). With "none" each writer is a producer of its own (random producer ids), and a
\* transaction's SeqNos are numbered BatchMax apart per transaction, so that messages of
\* different transactions are different messages.
\* @type: (Int) => Int;
WriteBase(tx) ==
    IF Producers = "partition"
    THEN LET lasts == {ProducerLast(d, q) : d \in DstParts, q \in TxProducers}
         IN CHOOSE x \in lasts : \A y \in lasts : y <= x
    ELSE (tx - 1) * BatchMax

\* A write-only transaction: worker w begins a transaction and opens a transactional
\* writer (tx_writer) for new messages of its own, (0, o) for o from b = WriteBase(tx) on,
\* as many as it writes (at most BatchMax: [b, e) grows with each write), with no read. Its
\* SeqNos must fit the model's AppOffsets (a bound, like the budgets).
\* @type: (Str) => Bool;
BeginWrites(w) ==
    /\ "write" \in TxShapes
    /\ ~cl[w].hung
    /\ cl[w].phase = "idle"
    /\ nextTx <= MaxTxns
    /\ LET tx == nextTx
           b == WriteBase(tx)
       IN /\ b + BatchMax <= Cardinality(AppOffsets)
          /\ kqp' = [kqp EXCEPT ![tx] = [NoSession EXCEPT !.st = "open", !.shape = "write", !.w = w, !.b = b,
                                                          !.e = b]]
          /\ cl' = [cl EXCEPT ![w] = [IdleWorker EXCEPT !.phase = "open", !.shape = "write", !.tx = tx, !.b = b,
                                                        !.e = b, !.pos = cl[w].pos]]
          /\ action' = Act("BeginWrites", w, "txn_id" :> tx @@ "b" :> b @@ "e" :> b)
    /\ nextTx' = nextTx + 1
    /\ UNCHANGED <<ownerVars, messageVars, dataVars, tabletVars, coordVars, ghostVars, faultVars>>

\* The k-th message (from 0) a copy transaction of worker w writes: its first partition's
\* range, then its second's [two].
\* @type: (Str, Int) => $msg;
CopyMsg(w, k) ==
    LET first == cl[w].e - cl[w].b
    IN IF k < first THEN Msg(cl[w].src, cl[w].b + k) ELSE Msg(kqp[cl[w].tx].src2, kqp[cl[w].tx].b2 + k - first)

\* The writes worker w's transaction has sent so far: its batch's first `sent` messages,
\* or, for a write-only one, each writer's first gsent[g] SeqNos [multi].
\* @type: (Str) => Set($msg);
SentWrites(w) ==
    IF cl[w].shape = "write"
    THEN UNION {{Msg(Producer(g), cl[w].b + k) : k \in 0..(cl[w].gsent[g] - 1)} : g \in Writers}
    ELSE {CopyMsg(w, k) : k \in 0..(cl[w].sent - 1)}

\* The stream of worker w's writer of producer q to partition d of B is broken: a write
\* sent on it is neither acknowledged nor on its way (it, or its acknowledgement, was lost,
\* or it was refused). Each writer has a stream of its own [multi].
\* @type: (Str, Int, Int) => Bool;
StreamBroken(w, q, d) ==
    \E m \in SentWrites(w) :
        /\ m.src = q /\ Dest(m.src, m.off) = d
        /\ m \notin wacked[cl[w].tx]
        /\ ~\E n \in net : n.type = "Write" /\ n.tx = cl[w].tx /\ n.m = m

\* The transactional writer sends the batch's next message to the partition of B its key
\* routes to; the partition joins the transaction's write operations (GetOwnership: the
\* writer reports the supportive partition to KQP, [kqpt]). On a broken stream the
\* message goes nowhere: the SDK keeps it until it reconnects (Resend) [resend], so no
\* write arrives after one that was lost. A write-only transaction writes with any of its
\* writers g, as producer Producer(g), that writer's next SeqNo [multi]; a copy has one
\* writer (g = 0).
\* @type: (Str, Int) => Bool;
TxWrite(w, g) ==
    /\ ~cl[w].hung
    /\ cl[w].phase = "open" /\ ~cl[w].closed
    /\ cl[w].sent < IF cl[w].shape = "write" THEN BatchMax ELSE Writes(w)
    /\ g = 0 \/ cl[w].shape = "write"
    /\ LET tx == cl[w].tx
           write == cl[w].shape = "write"
           m == IF write THEN Msg(Producer(g), cl[w].b + cl[w].gsent[g]) ELSE CopyMsg(w, cl[w].sent)
           d == Dest(m.src, m.off)
           more == IF write THEN 1 ELSE 0   \* a write-only transaction's [b, e) grows
       IN /\ net' = IF StreamBroken(w, m.src, d) THEN net ELSE net \cup {WriteMsg(tx, d, m)}
          /\ kqp' = [kqp EXCEPT ![tx].dsts = @ \cup {d}, ![tx].e = @ + more,
                                ![tx].prods = IF write THEN @ \cup {m.src} ELSE @]
          /\ action' = Act("TxWrite", w, "txn_id" :> tx @@ "partition" :> d @@ "off" :> m.off
                                          @@ (IF g = 0 THEN NoArgs ELSE "producer" :> m.src))
          /\ cl' = [cl EXCEPT ![w].sent = @ + 1, ![w].e = @ + more,
                              ![w].gsent = IF write THEN [@ EXCEPT ![g] = @ + 1] ELSE @]
    /\ UNCHANGED <<ownerVars, txIdVars, dataVars, tabletVars, coordVars, ghostVars, faultVars>>

\* The worker reads the table's row and upserts it (a read-modify-write of one row, as
\* an application keeps its progress beside the topics): the read takes an optimistic
\* lock on the row at its current version [tli]. A transaction may leave the table out.
\* @type: (Str) => Bool;
TableWrite(w) ==
    /\ Table
    /\ ~cl[w].hung
    /\ cl[w].phase = "open"
    /\ ~cl[w].row
    /\ cl' = [cl EXCEPT ![w].row = TRUE]
    /\ urows' = [urows EXCEPT ![cl[w].tx] = Len(rows)]
    /\ action' = Act("TableWrite", w, "txn_id" :> cl[w].tx)
    /\ UNCHANGED <<ownerVars, kqpVars, messageVars, offsetVars, topicBVars, rowVars, partitionVars, tabletVars,
                   coordVars, ghostVars, faultVars>>

\* The SDK's flush before commit [gosdk]: every write of the transaction acknowledged.
\* With no_flush, the SDK goes on as soon as every write is sent.
\* @type: (Str) => Bool;
Flush(w) ==
    /\ ~cl[w].hung
    /\ cl[w].phase = "open" /\ ~cl[w].closed
    /\ cl[w].sent = Writes(w)
    /\ Bug("no_flush") \/ Cardinality(wacked[cl[w].tx]) = Writes(w)
    /\ cl' = [cl EXCEPT ![w].phase = "flushed"]
    /\ action' = Act("Flush", w, "txn_id" :> cl[w].tx)
    /\ UNCHANGED <<ownerVars, kqpVars, messageVars, dataVars, tabletVars, coordVars, ghostVars, faultVars>>

\* tx.commit(): KQP proposes the transaction to every participant (or, immediate, sends
\* it to its one participant [imm]). With participants_from_offsets a transaction that
\* only writes has none: KQP ends it at once as an empty one. KQP refuses a transaction
\* whose offset ranges are not one interval before it proposes [ranges]: ABORTED.
\* @type: (Str) => Bool;
CommitTx(w) ==
    /\ ~cl[w].hung
    /\ cl[w].phase = "flushed"
    /\ LET tx == cl[w].tx
       IN /\ kqp' = [kqp EXCEPT ![tx].st = IF KqpParticipants(tx) = {} THEN "planned" ELSE "proposing",
                                ![tx].depth = DataDepth(tx), ![tx].aborted = KqpRefuses(tx)]
          /\ action' = Act("CommitTx", w, "txn_id" :> tx)
    /\ cl' = [cl EXCEPT ![w].phase = "committing"]
    /\ UNCHANGED <<ownerVars, txIdVars, messageVars, dataVars, tabletVars, coordVars, ghostVars, faultVars>>

\* The KQP session answers the client: COMMITTED once every participant executed the
\* commit, ABORTED once one refused the proposal, the proposal expired, or a participant
\* executed a rollback; BAD_REQUEST when the immediate path found the range past the
\* partition's end [ranges]. After an abort the reader re-reads from the committed offset.
\* @type: (Int) => Bool;
KqpResult(tx) ==
    LET w == kqp[tx].w
        done == kqp[tx].st = "planned" /\ kqp[tx].results = KqpParticipants(tx)
        early == kqp[tx].st = "proposing" /\ (kqp[tx].refused \/ expired[tx])
        ok == done /\ ~kqp[tx].aborted
    IN /\ done \/ early
       /\ ~cl[w].hung
       /\ cl[w].phase = "committing" /\ cl[w].tx = tx
       /\ kqp' = [kqp EXCEPT ![tx].st = "done"]
       /\ told' = [told EXCEPT ![tx] = CASE ok -> "COMMITTED" [] kqp[tx].bad -> "BAD_REQUEST" [] OTHER -> "ABORTED"]
       /\ toldDepth' = [toldDepth EXCEPT ![tx] = IF ok THEN kqp[tx].depth ELSE 0]
       /\ expired' = IF early THEN [expired EXCEPT ![tx] = TRUE] ELSE expired   \* CancelProposal
       /\ cl' = [cl EXCEPT ![w] = [IdleWorker EXCEPT !.pos =
                    IF ok \/ Bug("no_reread") \/ kqp[tx].shape = "write" THEN cl[w].pos
                    ELSE Reread(cl[w].pos, tx)]]
       /\ action' = Act("KqpResult", w, "txn_id" :> tx @@ "committed" :> IF ok THEN 1 ELSE 0)
       /\ UNCHANGED <<ownerVars, txIdVars, messageVars, dataVars, tabletVars, planVars, mediatorVars,
                      decisionVars, wackedVars, plainCommitVars, plainVars, skippedVars, checkVars, faultVars>>

\* The writer failed: a write was refused or lost, so it can never be acknowledged.
\* @type: (Str) => Bool;
WriterFailed(w) ==
    /\ cl[w].phase = "open"
    /\ \/ cl[w].closed   \* closed by force: SESSION_EXPIRED at the commit [close]
       \/ /\ cl[w].sent = Writes(w)
          /\ Cardinality(wacked[cl[w].tx]) < Writes(w)
          /\ ~\E m \in net : m.type = "Write" /\ m.tx = cl[w].tx

\* The application closes worker w's transactional writer by force while a write is
\* unacknowledged [close]: nothing more is sent, and the writer never flushes.
\* @type: (Str) => Bool;
ForceClose(w) ==
    /\ ForceCloses
    /\ ~cl[w].hung
    /\ cl[w].phase = "open" /\ cl[w].shape # "read" /\ ~cl[w].closed
    /\ SentWrites(w) \ wacked[cl[w].tx] # {}
    /\ cl' = [cl EXCEPT ![w].closed = TRUE]
    /\ action' = Act("ForceClose", w, "txn_id" :> cl[w].tx)
    /\ UNCHANGED <<ownerVars, kqpVars, messageVars, dataVars, tabletVars, coordVars, ghostVars, faultVars>>

\* The SDK's writer reconnects [resend]: a write of the transaction is neither acknowledged
\* nor on its way (it was lost, or its acknowledgement was: PqWriteAckLost), so the writer
\* opens a new stream with the same transaction and sends every unacknowledged message
\* again, with the SeqNo it had (a write-only transaction's writers reconnect together:
\* an abstraction [multi]). A fault: at most MaxReconnects times in a run.
\* @type: (Str) => Bool;
Resend(w) ==
    /\ reconnects < MaxReconnects
    /\ ~cl[w].hung
    /\ cl[w].phase = "open" /\ ~cl[w].closed
    /\ LET tx == cl[w].tx
           unacked == SentWrites(w) \ wacked[tx]
       IN /\ unacked # {}
          /\ ~\E m \in net : m.type = "Write" /\ m.tx = tx
          /\ net' = net \cup {WriteMsg(tx, Dest(m.src, m.off), m) : m \in unacked}
          /\ action' = Act("Resend", w, "txn_id" :> tx)
    /\ reconnects' = reconnects + 1
    /\ UNCHANGED <<clientVars, kqpVars, dataVars, tabletVars, coordVars, ghostVars, hangVars, restartVars,
                   lossVars, lockLossVars, deadlineVars, budgetVars>>

\* tx.rollback() [sdkrb]: after a writer failure, or (Rollbacks) whenever the application
\* chooses before the commit is sent. KQP ends the transaction and releases its lock,
\* which tablet B learns as a lock loss (PqLockLost), so its supportive partitions are
\* deleted and writes still in flight are refused; the reader reconnects and reads
\* again from the committed offset. With rollback_while_committing the session also
\* takes the rollback while CommitTransaction is under way, where YDB answers "Pending
\* previous query completion" [kqps]: the client is told ABORTED, and the proposal goes on.
\* @type: (Str) => Bool;
RollbackTx(w) ==
    /\ ~cl[w].hung
    /\ \/ WriterFailed(w)
       \/ Rollbacks /\ cl[w].phase \in {"open", "flushed"}
       \/ Bug("rollback_while_committing") /\ cl[w].phase = "committing" /\ kqp[cl[w].tx].st # "done"
    /\ LET tx == cl[w].tx
       IN /\ kqp' = [kqp EXCEPT ![tx].st = "done", ![tx].lock = "lost"]
          /\ told' = [told EXCEPT ![tx] = "ABORTED"]
          /\ cl' = [cl EXCEPT ![w] = [IdleWorker EXCEPT !.pos =
                       IF Bug("no_reread") \/ cl[w].shape = "write" THEN cl[w].pos
                       ELSE Reread(cl[w].pos, tx)]]
          /\ action' = Act("RollbackTx", w, "txn_id" :> tx)
    /\ UNCHANGED <<ownerVars, txIdVars, messageVars, dataVars, tabletVars, coordVars, decisionVars,
                   wackedVars, plainCommitVars, plainVars, skippedVars, depthVars, checkVars, faultVars>>

\* A write outside any transaction [ntx]: beside its open write-only transaction, worker
\* w's application writes as the same producer (0) to the partition of B its
\* transaction writes first. The SDK's automatic SeqNo continues from the producer's last
\* SeqNo in the main partition; tablet B publishes the message at once (the write and its
\* acknowledgement folded into one step), unless a transaction of the producer is
\* calculated and not yet executed there (TxAffectedSourcesIds: Blocked, it waits).
\* @type: (Str) => Bool;
NonTxWrite(w) ==
    /\ Producers = "partition"
    /\ Cardinality({m \in plain : m.src = 0}) < MaxNonTxWrites
    /\ ~cl[w].hung
    /\ cl[w].shape = "write" /\ cl[w].phase \in {"open", "flushed"} /\ cl[w].sent >= 1
    /\ LET d == Dest(0, cl[w].b)
           m == Msg(0, ProducerLast(d, 0))
       IN /\ ~\E x \in Txns : ptx["B"][x].st \in {"WAIT_RS", "EXECUTING"} /\ 0 \in TxProducersOf(x) /\ d \in kqp[x].dsts
          /\ sealed[d] = -1   \* "Write to inactive partition" [split]
          /\ target' = [target EXCEPT ![d] = Append(@, m)]
          /\ plain' = plain \cup {m}
          /\ action' = Act("NonTxWrite", w, "txn_id" :> cl[w].tx @@ "partition" :> d @@ "off" :> m.off)
    /\ UNCHANGED <<clientVars, kqpVars, messageVars, offsetVars, supVars, tableVars, partitionVars, tabletVars, coordVars,
                   decisionVars, wackedVars, plainCommitVars, skippedVars, answerVars, checkVars, faultVars>>

\* Another producer writes a message outside any transaction [ntx] to the partition of B
\* that worker w's open transaction wrote first: its own SeqNo (the producer's last in the
\* main partition, plus one), published at once. A different SourceId: it neither waits for
\* the transaction nor moves its MinSeqNo (WriteToTopic_Demo_2, _7).
\* @type: (Str) => Bool;
OtherProducerWrite(w) ==
    /\ Cardinality({m \in plain : m.src = OtherProducer}) < MaxOtherWrites
    /\ cl[w].phase \in {"open", "flushed"} /\ cl[w].sent >= 1
    /\ LET d == Dest(cl[w].src, cl[w].b)
           m == Msg(OtherProducer, ProducerLast(d, OtherProducer))
       IN /\ sealed[d] = -1
          /\ target' = [target EXCEPT ![d] = Append(@, m)]
          /\ plain' = plain \cup {m}
          /\ action' = Act("OtherProducerWrite", w, "txn_id" :> cl[w].tx @@ "partition" :> d @@ "off" :> m.off)
    /\ UNCHANGED <<clientVars, kqpVars, messageVars, offsetVars, supVars, tableVars, partitionVars, tabletVars, coordVars,
                   decisionVars, wackedVars, plainCommitVars, skippedVars, answerVars, checkVars, faultVars>>

\* A write outside any transaction, at any time [ntx, dedup] (MaxPlainWrites): producer q,
\* one of the application's (its writers' or the other producer), writes message (q, o),
\* SeqNo o + 1, with the SeqNo the application names (TopicWriterMessage(seqno=...) with
\* auto_seqno=False) or the SDK's automatic one, the producer's last in the partition plus
\* one. The message goes to the partition of B its key routes to (a write session writes
\* one partition; the spec routes by key). The partition publishes it at once, unless a
\* transaction of the producer is calculated and not yet executed there (Blocked: it waits);
\* a SeqNo at or below the producer's last in the partition is AlreadyWritten and not stored
\* (the SDK's Skipped; with plain_no_dedup it is stored again); a partition a split made
\* inactive refuses it ("Write to inactive partition": not a step here). The SDK's own
\* tests write this way (ydb-python-sdk tests/topics/test_topic_writer.py:
\* test_wait_last_seqno names SeqNo 5 first, a gap).
\* @type: (Int, Int) => Bool;
PlainWrite(q, o) ==
    /\ plainSent < MaxPlainWrites
    /\ q \in PlainProducers /\ o \in AppOffsets
    /\ LET d == Dest(q, o)
           m == Msg(q, o)
           repeat == o < ProducerLast(d, q) /\ ~Bug("plain_no_dedup")
       IN /\ sealed[d] = -1
          /\ ~\E x \in Txns : ptx["B"][x].st \in {"WAIT_RS", "EXECUTING"} /\ q \in TxProducersOf(x) /\ d \in kqp[x].dsts
          /\ target' = IF repeat THEN target ELSE [target EXCEPT ![d] = Append(@, m)]
          /\ plain' = IF repeat THEN plain ELSE plain \cup {m}
          /\ skipped' = IF repeat THEN skipped \cup {m} ELSE skipped
          /\ action' = Act(IF repeat THEN "PlainWriteSkipped" ELSE "PlainWrite", "application",
                           "partition" :> d @@ "off" :> o @@ "producer" :> q)
    /\ plainSent' = plainSent + 1
    /\ UNCHANGED <<clientVars, kqpVars, messageVars, offsetVars, supVars, tableVars, partitionVars, tabletVars, coordVars,
                   decisionVars, wackedVars, plainCommitVars, answerVars, checkVars, hangVars, restartVars, lossVars, lockLossVars,
                   deadlineVars, reconnectVars>>

\* The SeqNos model checking tries for producer q: every repeat, the automatic one, and a gap
\* of one (a trace may name any).
\* @type: (Int) => Set(Int);
PlainSeqNos(q) == {o \in AppOffsets : o <= ProducerLast(Dest(q, o), q) + 1}

-----------------------------------------------------------------------------
(* Reads outside a transaction, their offsets committed on the read stream *)

\* Worker w reads a batch [b, e) of its partition p outside any transaction [ocommit] (the
\* SDK's receive_batch with no transaction), to process it and commit its end (CommitOffset).
\* A new partition session reads from the committed offset; otherwise the reader goes on from
\* where it is. At most MaxPlainCommits such batches in a run.
\* @type: (Str, Int, Int) => Bool;
PlainRead(w, p, e) ==
    /\ Cardinality(plainCommits) + Cardinality({x \in Workers : cl[x].phase = "plain"}) < MaxPlainCommits
    /\ ~cl[w].hung
    /\ cl[w].phase = "idle"
    /\ owner[p] = w
    /\ LET b == ReadFrom(w, p)
       IN /\ b < MsgsPerSrc
          /\ e \in (b + 1)..Min2(b + BatchMax, MsgsPerSrc)
          /\ cl' = [cl EXCEPT ![w] = [IdleWorker EXCEPT !.phase = "plain", !.src = p, !.b = b, !.e = e,
                                                        !.pos = [cl[w].pos EXCEPT ![p] = e]]]
          /\ action' = Act("PlainRead", w, "partition" :> p @@ "b" :> b @@ "e" :> e)
    /\ UNCHANGED <<ownerVars, kqpVars, messageVars, dataVars, tabletVars, coordVars, ghostVars, faultVars>>

\* Worker w commits the end e of the batch [b, e) it read outside a transaction, on its read
\* stream (reader.commit(batch); commit_with_ack waits for the answer) [ocommit]. Partition p
\* makes the commit wait while a transaction of the consumer is calculated and not yet
\* executed there (TxAffectedConsumers; unless commit_unblocked). If the group gave p to
\* another reader meanwhile, w's read session is dead: WRONG_COOKIE, nothing moves (unless
\* commit_dead_session). An end at or below the committed offset is stale: OK, nothing moves.
\* Otherwise the committed offset moves to e, wherever the batch began (no range check: a
\* commit outside a transaction is at least once).
\* @type: (Str) => Bool;
CommitOffset(w) ==
    /\ ~cl[w].hung
    /\ cl[w].phase = "plain"
    /\ LET p == cl[w].src
           dead == owner[p] # w /\ ~Bug("commit_dead_session")
           stale == ~dead /\ cl[w].e <= committed[p]
           res == CASE dead -> "dead" [] stale -> "stale" [] OTHER -> "ok"
       IN /\ Bug("commit_unblocked") \/ ~\E x \in Txns : ptx["A"][x].st \in {"WAIT_RS", "EXECUTING"} /\ p \in PartsOf("A", x)
          /\ committed' = IF res = "ok" THEN [committed EXCEPT ![p] = cl[w].e] ELSE committed
          /\ plainCommits' = plainCommits \cup {[w |-> w, src |-> p, b |-> cl[w].b, e |-> cl[w].e, res |-> res]}
          /\ cl' = [cl EXCEPT ![w] = [IdleWorker EXCEPT !.pos = cl[w].pos]]
          /\ action' = Act(CASE dead -> "CommitOffsetRefused" [] stale -> "CommitOffsetStale" [] OTHER -> "CommitOffset", w, "partition" :> p @@ "b" :> cl[w].b @@ "e" :> cl[w].e)
    /\ UNCHANGED <<ownerVars, kqpVars, messageVars, topicBVars, tableVars, partitionVars, tabletVars, coordVars,
                   decisionVars, wackedVars, plainVars, skippedVars, answerVars, checkVars, faultVars>>

-----------------------------------------------------------------------------
(* Tablet B: writes into supportive partitions *)

\* Tablet B takes write m: the supportive partition of (m.tx, partition) is there or not
\* yet created (a write to one that is closed, "forbidden to write after a commit", or
\* deleted, "lost messages", is refused [pq]).
\* @type: ($net) => Bool;
WriteAccepted(m) ==
    LET s == sup[m.tx][m.dst]
    IN \/ s.st = "open"
       \/ s.st = "none" /\ sealed[m.dst] = -1   \* created after a split, it is inactive [split]
       \/ Bug("lock_race") /\ s.st = "deleted"

\* Write m repeats a SeqNo its producer already wrote to the supportive partition [dedup]:
\* the partition answers AlreadyWritten, which the SDK reports as Skipped, and stores
\* nothing. With Producers = "none" each writer is a producer of its own (the SDK gives
\* a writer without one a random producer id), so its resends are repeats too; a writer
\* whose deduplication is off (no producer id, as the C++ SDK allows) is no_write_dedup.
\* @type: ($net) => Bool;
WriteRepeated(m) ==
    LET s == sup[m.tx][m.dst]
    IN /\ ~Bug("no_write_dedup") /\ s.st = "open"
       /\ \E i \in DOMAIN s.data : s.data[i].src = m.m.src /\ s.data[i].off >= m.m.off

\* The effect of storing write m, durably and invisibly, in the supportive partition of
\* (m.tx, partition), created by the first write (with visible_before_commit, in the main
\* partition). A repeat stores nothing.
\* @type: ($net) => Bool;
StoreWrite(m) ==
    LET tx == m.tx
        d == m.dst
        s == sup[tx][d]
    IN IF WriteRepeated(m) THEN UNCHANGED topicBVars
       ELSE IF Bug("visible_before_commit")
       THEN /\ target' = [target EXCEPT ![d] = Append(@, m.m)]
            /\ sup' = [sup EXCEPT ![tx][d] = [st |-> "open", data |-> <<>>]]
       ELSE /\ sup' = [sup EXCEPT ![tx][d] = [st |-> "open",
                                               data |-> IF s.st = "deleted" THEN <<m.m>> ELSE Append(s.data, m.m)]]
            /\ UNCHANGED logVars

\* The writer's session is a stream: a partition gets a transaction's writes in order.
\* @type: ($net) => Bool;
InOrder(m) == ~\E m2 \in net : m2.type = "Write" /\ m2.tx = m.tx /\ m2.dst = m.dst /\ m2.m.src = m.m.src /\ m2.m.off < m.m.off

\* The writes after write m on its stream: where m or its acknowledgement is lost, the
\* stream is broken, and they are lost with it (none of them arrives after a gap).
\* @type: ($net) => Set($net);
StreamRest(m) == {m2 \in net : m2.type = "Write" /\ m2.tx = m.tx /\ m2.dst = m.dst /\ m2.m.src = m.m.src /\ m2.m.off > m.m.off}

\* Tablet B takes a write of WriteId tx and the SDK sees it acknowledged: stored
\* (WrittenInTx, no offset: seed 004), a repeat (Skipped [dedup]), or refused.
\* @type: ($net) => Bool;
PqWrite(m) ==
    /\ m \in net /\ m.type = "Write"
    /\ InOrder(m)
    /\ LET accept == WriteAccepted(m)
       IN /\ IF accept THEN StoreWrite(m) ELSE UNCHANGED topicBVars
          /\ wacked' = IF accept THEN [wacked EXCEPT ![m.tx] = @ \cup {m.m}] ELSE wacked
          /\ skipped' = IF accept /\ WriteRepeated(m) THEN skipped \cup {m.m} ELSE skipped
          /\ action' = Act(CASE ~accept -> "PqWriteRefused"
                              [] WriteRepeated(m) -> "PqWriteSkipped"
                              [] OTHER -> "PqWrite", "B",
                           "txn_id" :> m.tx @@ "partition" :> m.dst @@ "off" :> m.m.off)
    /\ net' = net \ {m}
    /\ UNCHANGED <<clientVars, kqpVars, offsetVars, tableVars, partitionVars, tabletVars, coordVars, decisionVars,
                   plainVars, plainCommitVars, answerVars, checkVars, faultVars>>

\* A fault [resend]: tablet B stores write m, but its acknowledgement never reaches the SDK
\* (the connection broke, or B restarted after the write: a partition's SourceIds are
\* durable with its data and read back when it starts, so the SeqNo is known after a
\* restart too). The SDK's writer then reconnects (Resend). Only where a reconnect is
\* left: without one, the SDK's writer fails, as a lost write makes it.
\* @type: ($net) => Bool;
PqWriteAckLost(m) ==
    /\ reconnects < MaxReconnects
    /\ m \in net /\ m.type = "Write"
    /\ InOrder(m)
    /\ WriteAccepted(m)
    /\ StoreWrite(m)
    /\ net' = net \ ({m} \cup StreamRest(m))
    /\ action' = Act("PqWriteAckLost", "B", "txn_id" :> m.tx @@ "partition" :> m.dst @@ "off" :> m.m.off)
    /\ UNCHANGED <<clientVars, kqpVars, offsetVars, tableVars, partitionVars, tabletVars, coordVars, ghostVars,
                   faultVars>>

\* Tablet B learns that WriteId tx's lock is gone (LockStatus) and deletes its supportive
\* partitions, unless the transaction was already proposed [pq].
\* @type: (Int) => Bool;
PqLockLost(tx) ==
    /\ kqp[tx].st # "none"
    /\ kqp[tx].lock = "lost"
    /\ pdur["B"][tx].st = "NONE"
    /\ \E d \in DstParts : sup[tx][d].st \in {"none", "open"}
    /\ sup' = [sup EXCEPT ![tx] = [d \in DstParts |-> IF @[d].st \in {"none", "open"}
                                                        THEN [st |-> "deleted", data |-> <<>>] ELSE @[d]]]
    /\ action' = Act("PqLockLost", "B", "txn_id" :> tx)
    /\ UNCHANGED <<clientVars, kqpVars, messageVars, offsetVars, logVars, tableVars, partitionVars, tabletVars,
                   coordVars, ghostVars, faultVars>>

-----------------------------------------------------------------------------
(* Proposal and plan *)

\* Participant t validates the proposal and persists PREPARED (tx_<TxId> [pq]). Tablet B
\* refuses a WriteId whose supportive partitions are deleted or missing; the datashard
\* refuses a transaction whose session's lock is gone (a write that broke the lock is found
\* by the predicate, TablePredicate).
\* @type: (Str, Int) => Bool;
PqPropose(t, tx) ==
    /\ kqp[tx].st = "proposing"
    /\ ~Immediate(tx)
    /\ ~expired[tx]
    /\ t \in Participants(tx) \ kqp[tx].prepared
    /\ ~kqp[tx].refused
    /\ pdur[t][tx].st = "NONE"
    /\ LET ok == CASE t = "B" -> \A d \in kqp[tx].dsts : sup[tx][d].st = "open"
                   [] t = "DS" -> kqp[tx].lock = "alive"
                   [] OTHER -> TRUE
           depth == kqp[tx].depth + 1
       IN IF ok
          THEN /\ pdur' = [pdur EXCEPT ![t][tx] = [NoDurable EXCEPT !.st = "PREPARED", !.depth = depth]]
               /\ ptx' = [ptx EXCEPT ![t][tx] = [NoVolatile EXCEPT !.st = "PREPARED", !.depth = depth]]
               /\ kqp' = [kqp EXCEPT ![tx].prepared = @ \cup {t}]
               /\ action' = Act("PqPropose", t, "txn_id" :> tx @@ "prepared" :> 1)
          ELSE /\ kqp' = [kqp EXCEPT ![tx].refused = TRUE]
               /\ UNCHANGED tabletVars
               /\ action' = Act("PqPropose", t, "txn_id" :> tx @@ "prepared" :> 0)
    /\ UNCHANGED <<clientVars, txIdVars, messageVars, dataVars, coordVars, ghostVars, faultVars>>

\* Every participant is PREPARED: the coordinator picks the next plan step (within every
\* MinStep..MaxStep: the proposal has not expired), persists it, and the mediator starts
\* delivering it to each participant [dtx].
\* @type: (Int) => Bool;
CoordPlan(tx) ==
    /\ kqp[tx].st = "proposing"
    /\ kqp[tx].prepared = Participants(tx)
    /\ ~expired[tx]
    /\ plan[tx] = 0
    /\ plan' = [plan EXCEPT ![tx] = nextStep]
    /\ pending' = [t \in Tablets |-> IF t \in Participants(tx) THEN pending[t] \cup {<<nextStep, tx>>} ELSE pending[t]]
    /\ nextStep' = nextStep + 1
    /\ LET depth == 1 + kqp[tx].depth + 1   \* after the PREPARED writes, made in parallel
       IN kqp' = [kqp EXCEPT ![tx].st = "planned", ![tx].depth = depth, ![tx].pdepth = depth]
    /\ action' = Act("CoordPlan", "coordinator", "txn_id" :> tx @@ "step" :> nextStep)
    /\ UNCHANGED <<clientVars, txIdVars, messageVars, dataVars, tabletVars, expiryVars, ghostVars, faultVars>>

\* MaxStep passes before the transaction was planned (the mediator's time moved on).
\* @type: (Int) => Bool;
PlanDeadline(tx) ==
    /\ deadlines < MaxDeadlines
    /\ kqp[tx].st = "proposing"
    /\ ~Immediate(tx)
    /\ plan[tx] = 0
    /\ ~expired[tx]
    /\ expired' = [expired EXCEPT ![tx] = TRUE]
    /\ deadlines' = deadlines + 1
    /\ action' = Act("PlanDeadline", "coordinator", "txn_id" :> tx)
    /\ UNCHANGED <<clientVars, kqpVars, messageVars, dataVars, tabletVars, planVars, mediatorVars, ghostVars,
                   hangVars, restartVars, lossVars, lockLossVars, reconnectVars, budgetVars>>

\* A proposal still PREPARED when the mediator's time passed its MaxStep expires [pq]:
\* either it was never planned, or (only if its plan step was acknowledged without being
\* executed: ack_plan_on_receipt) the tablet lost the step in a restart and the mediator
\* has moved past it. Tablet B drops the WriteId's supportive data.
\* @type: (Str, Int) => Bool;
Expire(t, tx) ==
    /\ ptx[t][tx].st = "PREPARED"
    /\ \/ expired[tx] /\ plan[tx] = 0
       \/ plan[tx] # 0 /\ <<plan[tx], tx>> \notin pending[t]
    /\ ptx' = [ptx EXCEPT ![t][tx].st = "EXPIRED"]
    /\ pdur' = [pdur EXCEPT ![t][tx].st = "EXPIRED"]
    /\ sup' = IF t = "B" THEN [sup EXCEPT ![tx] = [d \in DstParts |-> NoSupDone]] ELSE sup
    /\ action' = Act("Expire", t, "txn_id" :> tx)
    /\ UNCHANGED <<clientVars, kqpVars, messageVars, offsetVars, logVars, tableVars, partitionVars, coordVars,
                   ghostVars, faultVars>>

\* The mediator delivers participant t's next plan step, in step order; the tablet takes
\* it if the transaction is still PREPARED in its memory (a resent step is ignored).
\* In v25 the tablet persists PLANNED.
\* @type: (Str) => Bool;
PqPlanStep(t) ==
    \E s \in pending[t] :
        LET tx == s[2]
        IN /\ ptx[t][tx].st = "PREPARED"
           /\ \A x \in pending[t] : ptx[t][x[2]].st = "PREPARED" => s[1] <= x[1]
           /\ LET depth == IF Version = "v25" THEN kqp[tx].pdepth + 1 ELSE kqp[tx].pdepth
              IN /\ ptx' = [ptx EXCEPT ![t][tx].st = "PLANNED", ![t][tx].step = s[1], ![t][tx].depth = depth]
                 /\ pdur' = IF Version = "v25"
                            THEN [pdur EXCEPT ![t][tx].st = "PLANNED", ![t][tx].step = s[1], ![t][tx].depth = depth]
                            ELSE pdur
           /\ pending' = IF Bug("ack_plan_on_receipt") THEN [pending EXCEPT ![t] = @ \ {s}] ELSE pending
           /\ action' = Act("PqPlanStep", t, "txn_id" :> tx @@ "step" :> s[1])
    /\ UNCHANGED <<clientVars, kqpVars, messageVars, dataVars, planVars, expiryVars, ghostVars, faultVars>>

-----------------------------------------------------------------------------
(* Calculation, read sets, execution *)

\* Has partition k of participant t already applied transaction tx (its (step, txid) is at
\* or below the partition's last applied one)?
\* @type: (Str, Int, Int) => Bool;
AppliedAt(t, k, tx) == LessEq(<<ptx[t][tx].step, tx>>, meta[t][k])

\* The read predicate on partition k of A [part]: the committed offset is b ("Gap" if it is
\* behind, a conflict if ahead), b <= e <= the end of the partition.
\* @type: (Int, Int) => Bool;
RangeOk(tx, k) ==
    LET c == committed[k]
        b == RangeOn(tx, k)[1]
        e == RangeOn(tx, k)[2]
    IN \/ AppliedAt("A", k, tx)
       \/ Bug("no_offset_check")
       \/ (Bug("overlap_check") /\ b <= c /\ c < e)
       \/ (Bug("no_gap_check") /\ c <= b /\ e <= MsgsPerSrc)
       \/ (c = b /\ b <= e /\ e <= MsgsPerSrc)
       \/ (Bug("first_range_only") /\ k # kqp[tx].src)

\* Every partition of A the transaction read passes (a partition's check [part]; with
\* first_range_only, only its first partition is checked).
\* @type: (Int) => Bool;
ReadPredicate(tx) == \A k \in PartsOf("A", tx) : RangeOk(tx, k)

\* The MinSeqNo check [seqno] on d, per SourceId [multi]: for each producer of the
\* transaction's writes to d (the source partition; 0, -2, ... for the application's own
\* messages), the first SeqNo it wrote there is above its last SeqNo on d. With
\* seqno_first_source, only the producer of the supportive partition's first message.
\* @type: (Int, Int) => Bool;
SeqNoOk(tx, d) ==
    LET s == sup[tx][d].data
    IN \A i \in DOMAIN s :
           (IF Bug("seqno_first_source") THEN i = 1 ELSE \A j \in 1..(i - 1) : s[j].src # s[i].src)
               => s[i].off + 1 > LastSeqNo(d, s[i].src)
\* @type: (Int) => Bool;
SeqNoPredicate(tx) ==
    \/ Producers = "none"
    \/ Bug("no_seqno_check")
    \/ \A d \in kqp[tx].dsts : AppliedAt("B", d, tx) \/ SeqNoOk(tx, d)

\* Partition d of B still takes data: no split made it inactive (CanWrite [split]); with
\* split_ignored, always.
\* @type: (Int) => Bool;
Active(d) == sealed[d] = -1 \/ Bug("split_ignored")

\* The write predicate on B [pq]: every supportive partition of the WriteId is there, its
\* partition is active [split], and its producer's SeqNo moves forward.
\* @type: (Int) => Bool;
WritePredicate(tx) ==
    /\ \A d \in kqp[tx].dsts : AppliedAt("B", d, tx) \/ (sup[tx][d].st \in {"open", "closed"} /\ Active(d))
    /\ SeqNoPredicate(tx)

\* The datashard's predicate [tli]: the lock holds (the session lives) and nobody committed
\* a write of the row since this transaction read it; with no_table_lock, the lock's
\* liveness only (a write of another transaction does not break it).
\* @type: (Int) => Bool;
TablePredicate(tx) ==
    /\ kqp[tx].lock = "alive"
    /\ Bug("no_table_lock") \/ urows[tx] = Len(rows)

\* Participant t's predicate for transaction tx.
\* @type: (Str, Int) => Bool;
Predicate(t, tx) ==
    CASE t = "A" -> ReadPredicate(tx)
      [] t = "B" -> WritePredicate(tx)
      [] OTHER -> TablePredicate(tx)

\* Transactions in t's queue that are planned and not yet executed.
\* @type: (Str) => Set(Int);
InQueue(t) == {x \in Txns : ptx[t][x].st \in {"PLANNED", "WAIT_RS", "EXECUTING"}}

\* Transaction x is calculated and not yet executed on the same consumer and a partition tx
\* reads too (each partition has its queue: tx waits where they share one [two]).
\* @type: (Int, Int) => Bool;
BlocksConsumer(x, tx) ==
    /\ x # tx
    /\ ptx["A"][x].st \in {"WAIT_RS", "EXECUTING"}
    /\ PartsOf("A", x) \cap PartsOf("A", tx) # {}

\* Transaction x, of the same producer, is calculated and not yet executed on a partition
\* of B that tx writes to (TxAffectedSourcesIds: tx is Blocked [seqno]).
\* @type: (Int, Int) => Bool;
BlocksProducer(x, tx) ==
    /\ x # tx
    /\ ptx["B"][x].st \in {"WAIT_RS", "EXECUTING"}
    /\ TxProducersOf(x) \cap TxProducersOf(tx) # {}
    /\ kqp[x].dsts \cap kqp[tx].dsts # {}

\* Transaction x is calculated and not yet executed on the datashard: its writes of the
\* row are still to come, so another transaction's check of the row waits (the
\* datashard orders the transactions that touch the same keys [tli]).
\* @type: (Int, Int) => Bool;
BlocksRow(x, tx) ==
    /\ x # tx
    /\ ptx["DS"][x].st \in {"WAIT_RS", "EXECUTING"}

\* At the head of the planned transactions, participant t computes its predicate
\* (CALCULATING, CALCULATED), closes the supportive partitions, and sends its decision to
\* every peer as a read set (WAIT_RS; persisted in v25). A read operation waits while
\* another transaction is in flight on the same consumer (unless no_consumer_block), a
\* write operation while one of the same producer is (unless no_producer_block).
\* @type: (Str, Int) => Bool;
PqCalc(t, tx) ==
    /\ ptx[t][tx].st = "PLANNED"
    /\ \A x \in Txns : ptx[t][x].st = "PLANNED" => ptx[t][tx].step <= ptx[t][x].step
    /\ (t = "A" /\ ~Bug("no_consumer_block")) => ~\E x \in Txns : BlocksConsumer(x, tx)
    /\ (t = "B" /\ Producers = "partition" /\ ~Bug("no_producer_block")) => ~\E x \in Txns : BlocksProducer(x, tx)
    /\ t = "DS" => ~\E x \in Txns : BlocksRow(x, tx)
    /\ LET own == IF Predicate(t, tx) THEN "commit" ELSE "abort"
           depth == IF Version = "v25" THEN ptx[t][tx].depth + 1 ELSE ptx[t][tx].depth
           solo == Bug("independent_decision")
       IN /\ ptx' = [ptx EXCEPT ![t][tx].st = IF solo THEN "EXECUTING" ELSE "WAIT_RS", ![t][tx].own = own,
                                ![t][tx].dec = IF solo THEN own ELSE "none", ![t][tx].depth = depth]
          /\ pdur' = IF Version = "v25"
                     THEN [pdur EXCEPT ![t][tx].st = "WAIT_RS", ![t][tx].dec = own, ![t][tx].depth = depth]
                     ELSE pdur
          /\ net' = IF solo THEN net ELSE net \cup {ReadSet(t, q, tx, own, depth) : q \in Peers(t, tx)}
          /\ votes' = [votes EXCEPT ![t][tx] = own]
          /\ sup' = IF t = "B" THEN [sup EXCEPT ![tx] = [d \in DstParts |->
                                        IF @[d].st = "open" THEN [@[d] EXCEPT !.st = "closed"] ELSE @[d]]]
                    ELSE sup
          /\ action' = Act("PqCalc", t, "txn_id" :> tx @@ "step" :> ptx[t][tx].step @@ "commit" :> IF own = "commit" THEN 1 ELSE 0)
    /\ UNCHANGED <<clientVars, kqpVars, offsetVars, logVars, tableVars, partitionVars, coordVars, appliedVars,
                   wackedVars, plainCommitVars, plainVars, skippedVars, answerVars, checkVars, faultVars>>

\* Participant t receives a peer's read set. It keeps the decision in memory and
\* acknowledges it once its own EXECUTED is durable (PqTxDone); a read set for a
\* transaction it has already executed durably, or deleted, is acknowledged at once.
\* With ack_rs_before_persist it is acknowledged on receipt.
\* @type: ($net) => Bool;
PqReadSet(m) ==
    /\ m \in net /\ m.type = "RS"
    /\ LET t == m.to
           tx == m.tx
           v == ptx[t][tx]
           waiting == v.st \in {"PREPARED", "PLANNED", "WAIT_RS"}
           executing == v.st = "EXECUTING"
       IN /\ ptx' = IF waiting
                    THEN [ptx EXCEPT ![t][tx].rs = @ \cup {m.from}, ![t][tx].abortSeen = @ \/ m.dec = "abort",
                                     ![t][tx].rsdepth = Max2(@, m.depth)]
                    ELSE IF executing THEN [ptx EXCEPT ![t][tx].rs = @ \cup {m.from}]
                    ELSE ptx
          /\ net' = IF (~waiting /\ ~executing) \/ Bug("ack_rs_before_persist")
                    THEN (net \ {m}) \cup {ReadSetAck(t, m.from, tx)}
                    ELSE net \ {m}
          /\ action' = Act("PqReadSet", t, "txn_id" :> tx @@ "commit" :> IF m.dec = "commit" THEN 1 ELSE 0)
    /\ UNCHANGED <<clientVars, kqpVars, dataVars, durableVars, coordVars, ghostVars, faultVars>>

\* Every peer's read set is in (and the transactions planned before it are executed):
\* the decision is the own predicate and every peer's (EXECUTING).
\* @type: (Str, Int) => Bool;
PqExecute(t, tx) ==
    /\ ptx[t][tx].st = "WAIT_RS"
    /\ ptx[t][tx].rs = Peers(t, tx)
    /\ \A x \in InQueue(t) : ptx[t][tx].step <= ptx[t][x].step
    /\ LET dec == IF ptx[t][tx].own = "commit" /\ ~ptx[t][tx].abortSeen THEN "commit" ELSE "abort"
       IN /\ ptx' = [ptx EXCEPT ![t][tx].st = "EXECUTING", ![t][tx].dec = dec]
          /\ action' = Act("PqExecute", t, "txn_id" :> tx @@ "commit" :> IF dec = "commit" THEN 1 ELSE 0)
    /\ UNCHANGED <<clientVars, kqpVars, messageVars, dataVars, durableVars, coordVars, ghostVars, faultVars>>

\* The effect of applying transaction tx's decision on partition k of participant t.
\* @type: (Str, Int, Int, Bool) => Bool;
ApplyData(t, k, tx, commit) ==
    CASE t = "A" -> /\ committed' = IF commit THEN [committed EXCEPT ![k] = RangeOn(tx, k)[2]] ELSE committed
                    /\ rangeBad' = (rangeBad \/ (commit /\ committed[k] # RangeOn(tx, k)[1]))
                    /\ UNCHANGED <<topicBVars, rowVars>>
      [] t = "B" -> /\ target' = IF commit THEN [target EXCEPT ![k] = @ \o sup[tx][k].data] ELSE target
                    /\ sup' = [sup EXCEPT ![tx][k].st = "done"]
                    /\ UNCHANGED <<offsetVars, rowVars, rangeCheckVars>>
      [] OTHER -> /\ rows' = IF commit THEN Append(rows, tx) ELSE rows
                  /\ UNCHANGED <<offsetVars, topicBVars, rangeCheckVars>>

\* Partition k of participant t applies the decision in one atomic write [part]: B's
\* supportive data is renamed to the end of the log (its offsets are assigned now), A's
\* committed offset moves to e, the table's row is committed; (step, txid) is recorded as
\* applied and the partition's tx_<TxId>_<p> key written. A partition that has already
\* applied tx skips it (unless partition_reapply).
\* @type: (Str, Int, Int) => Bool;
PartitionApply(t, tx, k) ==
    LET v == ptx[t][tx]
        commit == v.dec = "commit"
        skip == AppliedAt(t, k, tx) /\ ~Bug("partition_reapply")
        depth == Max2(v.depth, v.rsdepth) + 1   \* partitions write in parallel: counted once
    IN /\ v.st = "EXECUTING"
       /\ k \in PartsOf(t, tx) \ v.done
       /\ IF skip
          THEN UNCHANGED <<offsetVars, topicBVars, rowVars, metaVars, checkVars>>
          ELSE /\ ApplyData(t, k, tx, commit)
               /\ orderBad' = (orderBad \/ LessEq(<<v.step, tx>>, meta[t][k]))
               /\ meta' = [meta EXCEPT ![t][k] = <<v.step, tx>>]
       /\ ptx' = [ptx EXCEPT ![t][tx].done = @ \cup {k}]
       /\ pdur' = [pdur EXCEPT ![t][tx].done = @ \cup {k}, ![t][tx].dec = v.dec, ![t][tx].step = v.step,
                               ![t][tx].depth = depth]
       /\ applied' = [applied EXCEPT ![t][tx] = v.dec]
       /\ action' = Act(IF commit THEN "PartitionCommit" ELSE "PartitionRollback", t,
                        "txn_id" :> tx @@ "partition" :> k @@ "step" :> v.step)
       /\ UNCHANGED <<clientVars, kqpVars, messageVars, urowVars, sealVars, coordVars, voteVars, wackedVars, plainCommitVars, plainVars,
                      skippedVars, answerVars, faultVars>>

\* The immediate path [imm]: the one participant of an immediate transaction checks it and
\* applies it in one write, and answers KQP. Tablet A: the committed offset is b
\* ("incorrect offset range (gap)": ABORTED) and e is within the partition ("commit to the
\* future": BAD_REQUEST [ranges]), unless immediate_no_offset_check; tablet B: the supportive partition is there and its
\* producer's SeqNo moves forward. Like a calculated transaction, it waits for one of the
\* same consumer or producer in flight.
\* @type: (Str, Int) => Bool;
PqImmediate(t, tx) ==
    /\ kqp[tx].st = "proposing"
    /\ Immediate(tx)
    /\ t \in Participants(tx)
    /\ (t = "A" /\ ~Bug("no_consumer_block")) => ~\E x \in Txns : BlocksConsumer(x, tx)
    /\ (t = "B" /\ Producers = "partition" /\ ~Bug("no_producer_block")) => ~\E x \in Txns : BlocksProducer(x, tx)
    /\ t = "DS" => ~\E x \in Txns : BlocksRow(x, tx)
    /\ LET k == CHOOSE x \in PartsOf(t, tx) : TRUE
           c == committed[kqp[tx].src]
           ok == CASE t = "A" -> Bug("immediate_no_offset_check") \/ (c = kqp[tx].b /\ kqp[tx].e <= MsgsPerSrc)
                   [] t = "B" -> /\ \A d \in kqp[tx].dsts : sup[tx][d].st = "open" /\ Active(d)
                                 /\ Producers = "none" \/ Bug("no_seqno_check") \/ \A d \in kqp[tx].dsts : SeqNoOk(tx, d)
                   [] OTHER -> Predicate(t, tx)   \* the datashard alone: an empty write-only transaction's row
           dec == IF ok THEN "commit" ELSE "abort"
       IN /\ ApplyData(t, k, tx, ok)
          /\ applied' = [applied EXCEPT ![t][tx] = dec]
          /\ votes' = [votes EXCEPT ![t][tx] = dec]
          /\ kqp' = [kqp EXCEPT ![tx].st = "planned", ![tx].results = {t}, ![tx].aborted = ~ok,
                                ![tx].bad = (t = "A" /\ ~ok /\ c = kqp[tx].b), ![tx].depth = @ + 1]
          /\ action' = Act("PqImmediate", t, "txn_id" :> tx @@ "partition" :> k @@ "commit" :> IF ok THEN 1 ELSE 0)
    /\ UNCHANGED <<clientVars, txIdVars, messageVars, urowVars, partitionVars, tabletVars, coordVars, wackedVars, plainCommitVars,
                   plainVars, skippedVars, answerVars, orderCheckVars, faultVars>>

\* Every partition applied: EXECUTED. The tablet answers KQP (COMPLETE or ABORTED),
\* acknowledges the plan step, acknowledges the read sets it received, and drops the
\* WriteId's supportive partitions (WAIT_RS_ACKS).
\* @type: (Str, Int) => Bool;
PqTxDone(t, tx) ==
    LET v == ptx[t][tx]
    IN /\ v.st = "EXECUTING"
       /\ v.done = PartsOf(t, tx)
       /\ ptx' = [ptx EXCEPT ![t][tx].st = "WAIT_RS_ACKS"]
       /\ pdur' = [pdur EXCEPT ![t][tx].st = "EXECUTED"]
       /\ kqp' = [kqp EXCEPT ![tx].results = @ \cup {t}, ![tx].aborted = @ \/ v.dec = "abort",
                             ![tx].depth = Max2(@, Max2(v.depth, v.rsdepth) + 1)]   \* after the partitions' commit writes
       /\ pending' = [pending EXCEPT ![t] = @ \ {<<v.step, tx>>}]
       /\ net' = IF Bug("ack_rs_before_persist") THEN net ELSE net \cup {ReadSetAck(t, q, tx) : q \in v.rs}
       /\ sup' = IF t = "B" THEN [sup EXCEPT ![tx] = [d \in DstParts |-> IF d \in v.done THEN NoSupDone ELSE @[d]]] ELSE sup
       /\ action' = Act("PqTxDone", t, "txn_id" :> tx @@ "commit" :> IF v.dec = "commit" THEN 1 ELSE 0)
       /\ UNCHANGED <<clientVars, txIdVars, offsetVars, logVars, tableVars, partitionVars, planVars, expiryVars,
                      ghostVars, faultVars>>

\* A peer acknowledged t's read set.
\* @type: ($net) => Bool;
PqReadSetAck(m) ==
    /\ m \in net /\ m.type = "RSAck"
    /\ ptx' = IF ptx[m.to][m.tx].st \in {"WAIT_RS", "EXECUTING", "WAIT_RS_ACKS"}
              THEN [ptx EXCEPT ![m.to][m.tx].acked = @ \cup {m.from}] ELSE ptx
    /\ net' = net \ {m}
    /\ action' = Act("PqReadSetAck", m.to, "txn_id" :> m.tx)
    /\ UNCHANGED <<clientVars, kqpVars, dataVars, durableVars, coordVars, ghostVars, faultVars>>

\* Every peer acknowledged t's read set: the transaction's keys are deleted (DELETING).
\* @type: (Str, Int) => Bool;
PqDelete(t, tx) ==
    /\ ptx[t][tx].st = "WAIT_RS_ACKS"
    /\ Bug("independent_decision") \/ ptx[t][tx].acked = Peers(t, tx)
    /\ ptx' = [ptx EXCEPT ![t][tx].st = "DELETED"]
    /\ pdur' = [pdur EXCEPT ![t][tx].st = "DELETED"]
    /\ action' = Act("PqDelete", t, "txn_id" :> tx)
    /\ UNCHANGED <<clientVars, kqpVars, messageVars, dataVars, coordVars, ghostVars, faultVars>>

\* A read set from t to q, or q's acknowledgement of it, went missing (lost, or q
\* restarted): t sends it again, until q acknowledges it. The pipe's reconnect is
\* abstracted as: q does not have it, or q has executed (so it acknowledges at once) and
\* no acknowledgement is on its way.
\* @type: (Str, Int, Str) => Bool;
PqResendReadSet(t, tx, q) ==
    /\ ~Bug("independent_decision")
    /\ ptx[t][tx].st \in {"WAIT_RS", "EXECUTING", "WAIT_RS_ACKS"}
    /\ q \in Peers(t, tx) \ ptx[t][tx].acked
    /\ ptx[q][tx].st # "NONE"
    /\ \/ t \notin ptx[q][tx].rs
       \/ ptx[q][tx].st \in {"WAIT_RS_ACKS", "DELETED"}
          /\ ~\E m \in net : m.type = "RSAck" /\ m.tx = tx /\ m.from = q /\ m.to = t
    /\ ~\E m \in net : m.type = "RS" /\ m.tx = tx /\ m.from = t /\ m.to = q
    /\ net' = net \cup {ReadSet(t, q, tx, ptx[t][tx].own, ptx[t][tx].depth)}
    /\ action' = Act("PqResendReadSet", t, "txn_id" :> tx)
    /\ UNCHANGED <<clientVars, kqpVars, dataVars, tabletVars, coordVars, ghostVars, faultVars>>

-----------------------------------------------------------------------------
(* Faults *)

\* Worker w hangs mid-transaction (a GC pause, a stalled VM).
\* @type: (Str) => Bool;
Hang(w) ==
    /\ hangs < MaxHangs
    /\ ~cl[w].hung
    /\ cl[w].phase # "idle"
    /\ hangs' = hangs + 1
    /\ cl' = [cl EXCEPT ![w].hung = TRUE]
    /\ action' = Act("Hang", w, NoArgs)
    /\ UNCHANGED <<ownerVars, kqpVars, messageVars, dataVars, tabletVars, coordVars, ghostVars, restartVars,
                   lossVars, lockLossVars, deadlineVars, reconnectVars, budgetVars>>

\* The group gives partition p of a hung worker to w; w's new partition session reads
\* from the committed offset.
\* @type: (Str, Int) => Bool;
TakeOver(w, p) ==
    /\ owner[p] # w
    /\ cl[owner[p]].hung
    /\ ~cl[w].hung
    /\ owner' = [owner EXCEPT ![p] = w]
    /\ cl' = [cl EXCEPT ![w].pos[p] = -1]
    /\ action' = Act("TakeOver", w, "partition" :> p)
    /\ UNCHANGED <<kqpVars, messageVars, dataVars, tabletVars, coordVars, ghostVars, faultVars>>

\* A hung worker resumes where it stopped: a zombie until it next asks the group.
\* @type: (Str) => Bool;
Resume(w) ==
    /\ cl[w].hung
    /\ cl' = [cl EXCEPT ![w].hung = FALSE]
    /\ action' = Act("Resume", w, NoArgs)
    /\ UNCHANGED <<ownerVars, kqpVars, messageVars, dataVars, tabletVars, coordVars, ghostVars, faultVars>>

\* The transaction's lock dies (the session died, or the lock service lost it) before it
\* was proposed.
\* @type: (Int) => Bool;
LockLost(tx) ==
    /\ lockLosses < MaxLockLosses
    /\ kqp[tx].st = "open"
    /\ kqp[tx].lock = "alive"
    /\ kqp' = [kqp EXCEPT ![tx].lock = "lost"]
    /\ lockLosses' = lockLosses + 1
    /\ action' = Act("LockLost", "session", "txn_id" :> tx)
    /\ UNCHANGED <<clientVars, txIdVars, messageVars, dataVars, tabletVars, coordVars, ghostVars, hangVars,
                   restartVars, lossVars, deadlineVars, reconnectVars, budgetVars>>

\* What participant t recovers of transaction tx from its durable keys [fix]: EXECUTED ->
\* EXECUTED (it waits for the read-set acks again); every partition key written ->
\* EXECUTING with the decision they record (PqTxDone follows); some ->
\* PLANNED (calculated again; the partitions that applied it skip it); the calculated
\* decision (v25) -> WAIT_RS with no peer read set (volatile); PLANNED (v25) and
\* PREPARED as they were (the mediator resends the unacknowledged plan step).
\* @type: (Str, Int) => $volatile;
Recover(t, tx) ==
    LET d == pdur[t][tx]
    IN CASE d.st \in {"NONE", "DELETED", "EXPIRED"} -> [NoVolatile EXCEPT !.st = d.st]
         [] d.st = "EXECUTED" ->
                [NoVolatile EXCEPT !.st = "WAIT_RS_ACKS", !.step = d.step, !.own = d.dec, !.dec = d.dec,
                                   !.done = d.done, !.depth = d.depth - 1]
         [] d.done # {} /\ d.done = PartsOf(t, tx) ->
                [NoVolatile EXCEPT !.st = "EXECUTING", !.step = d.step, !.own = d.dec, !.dec = d.dec,
                                   !.done = d.done, !.depth = d.depth - 1]
         [] d.done # {} -> [NoVolatile EXCEPT !.st = "PLANNED", !.step = d.step, !.depth = d.depth - 1]
         [] d.st = "WAIT_RS" -> [NoVolatile EXCEPT !.st = "WAIT_RS", !.step = d.step, !.own = d.dec, !.depth = d.depth]
         [] d.st = "PLANNED" -> [NoVolatile EXCEPT !.st = "PLANNED", !.step = d.step, !.depth = d.depth]
         [] OTHER -> [NoVolatile EXCEPT !.st = "PREPARED", !.depth = d.depth]

\* Participant t restarts, at any moment (before a transaction reaches it, while it holds
\* a transaction's records, after they are gone): its volatile state is lost and rebuilt
\* from the durable keys; it resends its read sets for the transactions whose decision it
\* recovered. The writers' streams to it break: the writes in flight to it are lost (the
\* SDK's writer reconnects and sends them again, Resend, or fails).
\* @type: (Str) => Bool;
TabletRestart(t) ==
    /\ restarts < MaxRestarts
    /\ ptx' = [ptx EXCEPT ![t] = [tx \in Txns |-> Recover(t, tx)]]
    /\ net' = {m \in net : m.type # "Write" \/ m.to # t} \cup UNION {{ReadSet(t, q, tx, Recover(t, tx).own, Recover(t, tx).depth) : q \in Peers(t, tx)} :
                                tx \in {x \in Txns : Recover(t, x).st \in {"WAIT_RS", "EXECUTING", "WAIT_RS_ACKS"}}}
    /\ restarts' = restarts + 1
    /\ action' = Act("TabletRestart", t, NoArgs)
    /\ UNCHANGED <<clientVars, kqpVars, dataVars, durableVars, coordVars, ghostVars, hangVars, lossVars,
                   lockLossVars, deadlineVars, reconnectVars, budgetVars>>

\* The network loses a message (a write, a read set or an acknowledgement); a lost write
\* breaks its stream, so the writes after it on the stream are lost too (StreamRest).
\* Partition d of B splits [split]: it becomes inactive and keeps the log it has. It waits
\* for a transaction calculated and not yet executed on d. A fault: at most MaxSplits.
\* @type: (Int) => Bool;
Split(d) ==
    /\ Cardinality({x \in DstParts : sealed[x] # -1}) < MaxSplits
    /\ sealed[d] = -1
    /\ ~\E x \in Txns : ptx["B"][x].st \in {"WAIT_RS", "EXECUTING"} /\ d \in kqp[x].dsts \ ptx["B"][x].done
    /\ sealed' = [sealed EXCEPT ![d] = Len(target[d])]
    /\ action' = Act("Split", "B", "partition" :> d)
    /\ UNCHANGED <<clientVars, kqpVars, messageVars, offsetVars, topicBVars, tableVars, metaVars, tabletVars, coordVars,
                   ghostVars, faultVars>>

\* @type: ($net) => Bool;
Lose(m) ==
    /\ losses < MaxLoss
    /\ m \in net
    /\ net' = net \ ({m} \cup IF m.type = "Write" THEN StreamRest(m) ELSE {})
    /\ losses' = losses + 1
    /\ action' = Act("Lose", "network", "txn_id" :> m.tx)
    /\ UNCHANGED <<clientVars, kqpVars, dataVars, tabletVars, coordVars, ghostVars, hangVars, restartVars,
                   lockLossVars, deadlineVars, reconnectVars, budgetVars>>

\* Nothing left to do: every transaction ended and every worker is idle (or out of
\* transactions to begin). An explicit terminal step keeps TLC's deadlock check meaningful.
Finished ==
    /\ \A w \in Workers : cl[w].phase = "idle" \/ cl[w].hung
    /\ \A tx \in Txns : kqp[tx].st \in {"none", "done"}
    /\ UNCHANGED vars

Next ==
    \/ \E w \in Workers, p \in SrcParts : \E e \in 1..MsgsPerSrc : ReadBatch(w, p, e) \/ ReadOnlyBatch(w, p, e)
    \/ \E w \in Workers : BeginWrites(w)
    \/ \E w \in Workers, b \in 0..MsgsPerSrc : \E e \in (b + 1)..(MsgsPerSrc + 1) : UpdateOffsets(w, b, e)
    \/ \E w \in Workers, e \in 1..MsgsPerSrc : ReadMore(w, e)
    \/ \E w \in Workers, p \in SrcParts : \E e \in 1..MsgsPerSrc : ReadOther(w, p, e)
    \/ \E w \in Workers, p \in SrcParts : TakeOver(w, p)
    \/ \E w \in Workers, p \in SrcParts : \E e \in 1..MsgsPerSrc : PlainRead(w, p, e)
    \/ \E w \in Workers : CommitOffset(w)
    \/ \E w \in Workers, g \in Writers : TxWrite(w, g)
    \/ \E w \in Workers : NonTxWrite(w) \/ OtherProducerWrite(w) \/ Resend(w) \/ ForceClose(w) \/ TableWrite(w) \/ Flush(w)
                        \/ CommitTx(w) \/ RollbackTx(w) \/ Hang(w) \/ Resume(w)
    \/ \E q \in PlainProducers : \E o \in PlainSeqNos(q) : PlainWrite(q, o)
    \/ \E tx \in Txns : KqpResult(tx) \/ CoordPlan(tx) \/ PlanDeadline(tx) \/ PqLockLost(tx) \/ LockLost(tx)
    \/ \E m \in net : PqWrite(m) \/ PqWriteAckLost(m) \/ PqReadSet(m) \/ PqReadSetAck(m) \/ Lose(m)
    \/ \E t \in Tablets :
        \/ PqPlanStep(t)
        \/ TabletRestart(t)
        \/ \E d \in DstParts : t = "B" /\ Split(d)
        \/ \E tx \in Txns :
            \/ PqPropose(t, tx) \/ PqImmediate(t, tx) \/ Expire(t, tx) \/ PqCalc(t, tx) \/ PqExecute(t, tx) \/ PqTxDone(t, tx)
            \/ PqDelete(t, tx)
            \/ \E k \in PartIds : PartitionApply(t, tx, k)
            \/ \E q \in Tablets : PqResendReadSet(t, tx, q)
    \/ Finished

Spec == Init /\ [][Next]_vars

=============================================================================
