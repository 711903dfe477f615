------------------------- MODULE YdbTopicsProperties -------------------------
(***************************************************************************)
(* The guarantees of YDB Topics transactions, each under a banner with    *)
(* what it promises. specs/ydb/models.toml names the ones each model       *)
(* checks; specs/README.md states them for the reader.                     *)
(***************************************************************************)
EXTENDS YdbTopics

\* INV: TypeOK
\* Every variable holds a value of the expected shape: one named part per variable (XTypeOK
\* for variable x), in the order of their declarations (YdbTopics), each the set its @type
\* annotation names, with the bounds the constants give, but the history variable action,
\* which no module reads (a window of a trace check starts from a state without it:
\* trace_check/traces/handoff.py). A trace check checks a part only after a step that
\* changed what it reads (trace_check/traces/invariants.py).
\* (Sequences are checked element by element and strings not at all: Apalache takes
\* neither Seq(S) nor STRING; its types say the rest.)
TxStateNames == {"NONE", "PREPARED", "PLANNED", "WAIT_RS", "EXECUTING", "WAIT_RS_ACKS", "DELETED", "EXPIRED"}
DurableStateNames == {"NONE", "PREPARED", "PLANNED", "WAIT_RS", "EXECUTED", "DELETED", "EXPIRED"}
AllMessages == Messages \cup AppMessages
Decisions == {"none", "commit", "abort"}
Steps == 0..nextStep
WorkerRecords ==
    [phase: {"idle", "open", "flushed", "committing", "plain"}, shape: {"copy", "read", "write"}, tx: 0..MaxTxns, src: 0..NumSrc, b: 0..(MsgsPerSrc + Cardinality(AppOffsets)),
     e: 0..(MsgsPerSrc + Cardinality(AppOffsets)), sent: 0..MsgsPerSrc + BatchMax, row: BOOLEAN, hung: BOOLEAN, pos: [SrcParts -> -1..MsgsPerSrc],
     ranges: 0..MaxRanges, reads: 0..MaxReads, closed: BOOLEAN, gsent: [Writers -> 0..BatchMax]]
SessionRecords ==
    [st: {"none", "open", "proposing", "planned", "done"}, shape: {"copy", "read", "write"}, w: Workers \cup {""},
     src: 0..NumSrc, b: 0..(MsgsPerSrc + Cardinality(AppOffsets)), e: 0..(MsgsPerSrc + Cardinality(AppOffsets)), dsts: SUBSET DstParts, lock: {"alive", "lost"},
     prepared: SUBSET Tablets, refused: BOOLEAN, results: SUBSET Tablets, aborted: BOOLEAN, depth: Nat, pdepth: Nat,
     named: SUBSET (0..MsgsPerSrc), bad: BOOLEAN, prods: SUBSET TxProducers, src2: 0..NumSrc,
     b2: 0..MsgsPerSrc, e2: 0..MsgsPerSrc]
NetRecords ==
    [type: {"Write", "RS", "RSAck"}, tx: Txns, from: Tablets \cup {""}, to: Tablets, dst: {0} \cup DstParts,
     m: AllMessages, dec: Decisions, depth: Nat]
SupStates == {"none", "open", "closed", "deleted", "done"}
DurableRecords == [st: DurableStateNames, step: Steps, dec: Decisions, done: SUBSET PartIds, depth: Nat]
VolatileRecords ==
    [st: TxStateNames, step: Steps, own: Decisions, dec: Decisions, rs: SUBSET Tablets, abortSeen: BOOLEAN,
     acked: SUBSET Tablets, done: SUBSET PartIds, depth: Nat, rsdepth: Nat]
\* Every element of sequence s is in S.
\* @type: (Seq(a), Set(a)) => Bool;
SeqOf(s, S) == \A i \in DOMAIN s : s[i] \in S

OwnerTypeOK == owner \in [SrcParts -> Workers]
ClTypeOK ==
    /\ cl \in [Workers -> WorkerRecords]
    /\ \A w \in Workers : cl[w].phase \notin {"idle", "plain"} => cl[w].tx \in Txns /\ (cl[w].shape # "write" => cl[w].src \in SrcParts)
    /\ \A w \in Workers : cl[w].phase = "plain" => cl[w].src \in SrcParts /\ cl[w].b < cl[w].e
KqpTypeOK == kqp \in [Txns -> SessionRecords]
NextTxTypeOK == nextTx \in 1..(MaxTxns + 1)
NetTypeOK == net \subseteq NetRecords
SupTypeOK ==
    /\ DOMAIN sup = Txns
    /\ \A tx \in Txns : DOMAIN sup[tx] = DstParts
    /\ \A tx \in Txns, d \in DstParts : sup[tx][d].st \in SupStates /\ SeqOf(sup[tx][d].data, AllMessages)
CommittedTypeOK == committed \in [SrcParts -> 0..MsgsPerSrc]
TargetTypeOK == DOMAIN target = DstParts /\ \A d \in DstParts : SeqOf(target[d], AllMessages)
RowsTypeOK == SeqOf(rows, Txns)
UrowsTypeOK == urows \in [Txns -> -1..MaxTxns]
MetaTypeOK == meta \in [Tablets -> [PartIds -> Steps \X (0..MaxTxns)]]
SealedTypeOK == sealed \in [DstParts -> -1..(MsgsPerSrc * NumSrc + Cardinality(AppMessages))]
PdurTypeOK == pdur \in [Tablets -> [Txns -> DurableRecords]]
PtxTypeOK == ptx \in [Tablets -> [Txns -> VolatileRecords]]
PlanTypeOK == plan \in [Txns -> Steps]
PendingTypeOK == pending \in [Tablets -> SUBSET ((1..nextStep) \X Txns)]
NextStepTypeOK == nextStep \in 1..(MaxTxns + 1)
ExpiredTypeOK == expired \in [Txns -> BOOLEAN]
AppliedTypeOK == applied \in [Tablets -> [Txns -> Decisions]]
VotesTypeOK == votes \in [Tablets -> [Txns -> Decisions]]
WackedTypeOK == wacked \in [Txns -> SUBSET AllMessages]
PlainTypeOK == plain \subseteq AppMessages
SkippedTypeOK == skipped \subseteq AllMessages
PlainCommitsTypeOK ==
    plainCommits \subseteq [w: Workers, src: SrcParts, b: 0..MsgsPerSrc, e: 0..MsgsPerSrc, res: {"ok", "stale", "dead"}]
ToldTypeOK == told \in [Txns -> {"none", "COMMITTED", "ABORTED", "BAD_REQUEST"}]
ToldDepthTypeOK == toldDepth \in [Txns -> Nat]
RangeBadTypeOK == rangeBad \in BOOLEAN
OrderBadTypeOK == orderBad \in BOOLEAN
HangsTypeOK == hangs \in 0..MaxHangs
RestartsTypeOK == restarts \in 0..MaxRestarts
LossesTypeOK == losses \in 0..MaxLoss
LockLossesTypeOK == lockLosses \in 0..MaxLockLosses
DeadlinesTypeOK == deadlines \in 0..MaxDeadlines
ReconnectsTypeOK == reconnects \in 0..MaxReconnects
PlainSentTypeOK == plainSent \in 0..MaxPlainWrites

TypeOK ==
    /\ OwnerTypeOK
    /\ ClTypeOK
    /\ KqpTypeOK
    /\ NextTxTypeOK
    /\ NetTypeOK
    /\ SupTypeOK
    /\ CommittedTypeOK
    /\ TargetTypeOK
    /\ RowsTypeOK
    /\ UrowsTypeOK
    /\ MetaTypeOK
    /\ SealedTypeOK
    /\ PdurTypeOK
    /\ PtxTypeOK
    /\ PlanTypeOK
    /\ PendingTypeOK
    /\ NextStepTypeOK
    /\ ExpiredTypeOK
    /\ AppliedTypeOK
    /\ VotesTypeOK
    /\ WackedTypeOK
    /\ PlainTypeOK
    /\ SkippedTypeOK
    /\ PlainCommitsTypeOK
    /\ ToldTypeOK
    /\ ToldDepthTypeOK
    /\ RangeBadTypeOK
    /\ OrderBadTypeOK
    /\ HangsTypeOK
    /\ RestartsTypeOK
    /\ LossesTypeOK
    /\ LockLossesTypeOK
    /\ DeadlinesTypeOK
    /\ ReconnectsTypeOK
    /\ PlainSentTypeOK

\* How many copies of message (p, o) topic B exposes.
\* @type: (Int, Int) => Int;
Copies(p, o) ==
    LET t == target[Dest(p, o)]
    IN Cardinality({i \in DOMAIN t : t[i] = Msg(p, o)})

\* Message (p, o) is in a supportive partition of a transaction whose commit is decided
\* (a participant applied it) but which B has not applied yet: it is on its way.
\* @type: (Int, Int) => Bool;
OnItsWay(p, o) ==
    \E tx \in Txns :
        /\ \E t \in Tablets : applied[t][tx] = "commit"
        /\ applied["B"][tx] # "commit" \/ Dest(p, o) \notin pdur["B"][tx].done
        /\ \E i \in DOMAIN sup[tx][Dest(p, o)].data : sup[tx][Dest(p, o)].data[i] = Msg(p, o)

\* How many read-only transactions consumed message (p, o): A committed their range, and
\* the application named o in it (its read, or a range of its own: the offsets it
\* processed; KQP's [min, max) may be more with range_gap_accepted).
\* @type: (Int, Int) => Int;
ReadOnlyCommits(p, o) ==
    Cardinality({tx \in Txns : /\ kqp[tx].shape = "read" /\ applied["A"][tx] = "commit"
                               /\ \/ kqp[tx].src = p /\ o \in kqp[tx].named
                                  \/ kqp[tx].src2 = p /\ o \in kqp[tx].b2..(kqp[tx].e2 - 1)})
\* How many batches read outside a transaction consumed message (p, o): the partition
\* answered their commit OK, whether it moved the offset or found it stale [ocommit] (a
\* refused commit, in a dead read session, tells the application its batch is not
\* committed, as an ABORTED transaction does).
\* @type: (Int, Int) => Int;
PlainConsumed(p, o) ==
    Cardinality({r \in plainCommits : r.res \in {"ok", "stale"} /\ r.src = p /\ o \in r.b..(r.e - 1)})
\* How many times message (p, o) was consumed: copied to B, or committed by a read-only
\* transaction (which processes its batch outside the topics), or by a commit outside a
\* transaction.
\* @type: (Int, Int) => Int;
Consumed(p, o) == Copies(p, o) + ReadOnlyCommits(p, o) + PlainConsumed(p, o)

\* INV: ExactlyOnce (the resharding example, as in specs/resharding/)
\* No message is consumed twice (in topic B twice, or in B and in a read-only
\* transaction's committed range, or in two of those), no SeqNo of the application's
\* producer is in B twice (YDB's deduplication: a transaction's write and a write outside
\* it with the same SeqNo are one message, published once), and every message below the committed read offset of topic A was
\* consumed (or, mid-commit, is in the supportive partition of a transaction whose commit
\* is decided).
\* (An application's message is in the partition of B its key routes to, or nowhere: that no
\* producer's SeqNo is in B twice is that no log of B holds an application's message twice,
\* which costs a set of the log's entries, not a scan of the log per SeqNo.)
NoDuplicates == /\ \A p \in SrcParts, o \in Offsets : Consumed(p, o) <= 1
                /\ \A d \in DstParts :
                      LET app == {i \in DOMAIN target[d] : target[d][i].src \notin SrcParts}
                      IN Cardinality({target[d][i] : i \in app}) = Cardinality(app)
NoLoss == \A p \in SrcParts, o \in Offsets : o < committed[p] => Consumed(p, o) >= 1 \/ OnItsWay(p, o)
ExactlyOnce == NoDuplicates /\ NoLoss

\* INV: OrderPreserved
\* In every partition of B, the messages of one partition of A appear in their order.
\* (The application's own messages, of independent transactions, have no order to keep.)
OrderPreserved ==
    \A d \in DstParts :
        \A i, j \in DOMAIN target[d] :
            (i < j /\ target[d][i].src = target[d][j].src /\ target[d][i].src > 0) => target[d][i].off <= target[d][j].off

\* INV: Atomicity
\* Across A's consumer offset, B's partitions and the table: if some participant committed
\* a transaction, none rolled it back; the client is told COMMITTED only when every
\* participant committed, and ABORTED or BAD_REQUEST only when none did.
Atomicity ==
    \A tx \in Txns :
        /\ (\E t \in Tablets : applied[t][tx] = "commit") => \A t \in Tablets : applied[t][tx] # "abort"
        /\ told[tx] = "COMMITTED" => \A t \in Participants(tx) : applied[t][tx] = "commit"
        /\ told[tx] \in {"ABORTED", "BAD_REQUEST"} => \A t \in Tablets : applied[t][tx] # "commit"

\* INV: ReadCommitted
\* Every message visible in B was written outside any transaction, or belongs to a
\* transaction that was planned (or committed immediately) and whose every participant's
\* predicate held.
ReadCommitted ==
    \A d \in DstParts : \A i \in DOMAIN target[d] :
        target[d][i] \in plain \/ \E tx \in Txns :
            /\ InBatch(target[d][i], tx)
            /\ plan[tx] # 0 \/ (Immediate(tx) /\ kqp[tx].st \in {"planned", "done"})
            /\ \A t \in Participants(tx) : votes[t][tx] = "commit"

\* INV: OffsetRangeCheck
\* Every offset commit applied a range [b, e) at committed = b, and the committed offsets
\* only move forward through such commits.
OffsetRangeCheck == ~rangeBad

\* INV: InactiveSealed
\* A partition of B that a split made inactive takes no more data: its log stays as it was
\* at the split (readers move on to its children once they read it to its end).
InactiveSealed == \A d \in DstParts : sealed[d] # -1 => Len(target[d]) = sealed[d]

\* INV: TableSerializable
\* Every committed write of the table's row read the version the write before it made:
\* no transaction overwrote a write it did not see (a lost update).
TableSerializable == \A i \in DOMAIN rows : urows[rows[i]] = i - 1

\* INV: DeterministicDecision
\* All participants that decided a transaction decided the same, commit only if every
\* predicate held, and every partition applied transactions in (step, txid) order, each once.
DeterministicDecision ==
    /\ \A tx \in Txns : \A t, q \in Tablets :
        /\ (ptx[t][tx].dec # "none" /\ ptx[q][tx].dec # "none") => ptx[t][tx].dec = ptx[q][tx].dec
        /\ applied[t][tx] = "commit" => votes[q][tx] \in {"none", "commit"}
    /\ ~orderBad

\* INV: AckedWritesPublished (cf. ydb PR 4758)
\* Once B applied a committed transaction on a partition, every write of it that the SDK
\* saw acknowledged for that partition is in the partition's log.
AckedWritesPublished ==
    \A tx \in Txns : \A m \in wacked[tx] :
        (applied["B"][tx] = "commit" /\ Dest(m.src, m.off) \in pdur["B"][tx].done) => Copies(m.src, m.off) >= 1

\* INV: NoCommitAfterExpire
\* A transaction that expired at one participant is committed at none.
NoCommitAfterExpire ==
    \A tx \in Txns : (\E t \in Tablets : pdur[t][tx].st = "EXPIRED") => \A q \in Tablets : applied[q][tx] # "commit"

\* INV: ReadSetRetained (cf. ydb issue 17843)
\* A participant deletes a transaction only when every peer has durably executed it: a
\* peer that still waits could lose the read set in a restart and never get it again.
ReadSetRetained ==
    \A tx \in Txns : \A t \in Tablets : \A q \in Peers(t, tx) :
        pdur[t][tx].st = "DELETED" => pdur[q][tx].st = "EXECUTED" \/ pdur[q][tx].st = "DELETED"
                                      \/ (pdur[q][tx].done # {} /\ pdur[q][tx].done = PartsOf(q, tx))

\* INV: CommitDepthWithinBound (a measurement, not a guarantee of YDB)
\* A COMMITTED answer comes after at most DepthBound sequential durable writes. A model that
\* holds it with bound N and one that violates it with N - 1 pin the commit path's depth at N.
CONSTANT
    \* @type: Int;
    DepthBound

\* @type: (Int) => Bool;
CommitDepthAtMost(n) == \A tx \in Txns : told[tx] = "COMMITTED" => toldDepth[tx] <= n
CommitDepthWithinBound == CommitDepthAtMost(DepthBound)

\* A witness: false once a transaction is committed: its counterexample is the happy path.
WitnessTransactionCommits == \A tx \in Txns : told[tx] # "COMMITTED"

\* A witness: false once a transaction that also wrote the table's row is committed.
WitnessTableTransactionCommits == \A tx \in Txns : ~(told[tx] = "COMMITTED" /\ urows[tx] # -1)

\* A witness: false once a write-only transaction that wrote nothing is committed.
WitnessEmptyCommit == \A tx \in Txns : ~(told[tx] = "COMMITTED" /\ kqp[tx].shape = "write" /\ kqp[tx].dsts = {})

\* A witness: false once a transaction whose range is longer than one batch commits (with no
\* range of its own: it read more than once, ReadMore).
WitnessReadMoreCommits == \A tx \in Txns : ~(told[tx] = "COMMITTED" /\ kqp[tx].e - kqp[tx].b > BatchMax)

\* A witness: false once a transaction that writes commits after another producer wrote
\* outside it to a partition the transaction writes (WriteToTopic_Demo_2, _7).
WitnessOtherProducerCommits ==
    \A tx \in Txns : ~(told[tx] = "COMMITTED" /\ \E d \in kqp[tx].dsts : \E i \in DOMAIN target[d] :
                            target[d][i].src = OtherProducer /\ \E j \in DOMAIN target[d] : j > i /\ target[d][j] \in Batch(tx))

\* A witness: false once a transaction that wrote a partition a split made inactive is ABORTED.
WitnessSplitAborts == \A tx \in Txns : ~(told[tx] = "ABORTED" /\ \E d \in kqp[tx].dsts : sealed[d] # -1)

\* A witness: false once KQP or a partition answered BAD_REQUEST (an offset range that
\* intersects the transaction's, or one past the partition's end).
WitnessBadRequest == \A tx \in Txns : told[tx] # "BAD_REQUEST"

\* A witness: false once a transaction whose ranges were not one interval is ABORTED by
\* KQP itself, before any participant.
WitnessRangesRefused == \A tx \in Txns : ~(told[tx] = "ABORTED" /\ RangesSplit(tx))

\* A witness: false once a transaction that wrote as two producers (two writers) commits.
WitnessWritersCommit == \A tx \in Txns : ~(told[tx] = "COMMITTED" /\ Cardinality(kqp[tx].prods) >= 2)

\* A witness: false once a transaction is ABORTED after a transaction that shares one of its
\* producers committed (Transactions_Conflict_On_SeqNo: shared write sessions).
WitnessSharedProducerAborts ==
    \A tx \in Txns : ~(told[tx] = "ABORTED" /\ kqp[tx].shape = "write" /\ Cardinality(kqp[tx].prods) >= 2 /\
                        \E x \in Txns : told[x] = "COMMITTED" /\ kqp[x].prods \cap kqp[tx].prods # {})

\* A witness: false once a SeqNo written outside a transaction is written again and the
\* partition answers AlreadyWritten (the SDK's Skipped).
WitnessPlainSkipped == skipped \cap plain = {}

\* A witness: false once a write-only transaction is ABORTED after a write outside any
\* transaction of one of its producers took a SeqNo past its own (the MinSeqNo check).
WitnessPlainAborts ==
    \A tx \in Txns : ~(told[tx] = "ABORTED" /\ kqp[tx].shape = "write" /\
                        \E m \in plain : m.src \in kqp[tx].prods /\ m.off >= kqp[tx].b)

\* A witness: false once a transaction that read two partitions of A commits [two].
WitnessTwoPartitionsCommit == \A tx \in Txns : ~(told[tx] = "COMMITTED" /\ kqp[tx].src2 # 0)

\* A witness: false once a batch read outside a transaction is committed (the offset moved).
WitnessPlainCommit == \A r \in plainCommits : r.res # "ok"

\* A witness: false once a zombie's commit outside a transaction is refused (a dead read session).
WitnessCommitRefused == \A r \in plainCommits : r.res # "dead"

\* A witness: false once a resent write is a repeat (AlreadyWritten: the SDK's Skipped).
WitnessWriteSkipped == skipped = {}

=============================================================================
