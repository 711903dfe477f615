------------------------- MODULE YdbTopicsProperties -------------------------
(***************************************************************************)
(* The guarantees of YDB Topics transactions, each under a banner with    *)
(* what it promises. specs/ydb/models.toml names the ones each model       *)
(* checks; specs/README.md states them for the reader.                     *)
(***************************************************************************)
EXTENDS YdbTopics

\* INV: TypeOK
\* Every variable holds a value of the expected shape.
TxStateNames == {"NONE", "PREPARED", "PLANNED", "WAIT_RS", "EXECUTING", "WAIT_RS_ACKS", "DELETED", "EXPIRED"}
DurableStateNames == {"NONE", "PREPARED", "PLANNED", "WAIT_RS", "EXECUTED", "DELETED", "EXPIRED"}
Decisions == {"none", "commit", "abort"}
TypeOK ==
    /\ owner \in [SrcParts -> Workers]
    /\ DOMAIN cl = Workers
    /\ \A w \in Workers :
        /\ cl[w].phase \in {"idle", "open", "flushed", "committing"}
        /\ cl[w].phase # "idle" => cl[w].tx \in Txns /\ cl[w].src \in SrcParts
        /\ cl[w].pos \in [SrcParts -> -1..MsgsPerSrc]
    /\ nextTx \in 1..(MaxTxns + 1)
    /\ \A tx \in Txns :
        /\ kqp[tx].st \in {"none", "open", "proposing", "planned", "done"}
        /\ kqp[tx].lock \in {"alive", "lost"}
        /\ kqp[tx].dsts \subseteq DstParts
        /\ kqp[tx].prepared \subseteq Tablets /\ kqp[tx].results \subseteq Tablets
        /\ \A d \in DstParts : sup[tx][d].st \in {"none", "open", "closed", "deleted", "done"}
        /\ plan[tx] \in 0..nextStep
        /\ told[tx] \in {"none", "COMMITTED", "ABORTED"}
    /\ \A m \in net : m.type \in {"Write", "RS", "RSAck"}
    /\ committed \in [SrcParts -> 0..MsgsPerSrc]
    /\ \A d \in DstParts : \A i \in DOMAIN target[d] : target[d][i] \in Messages
    /\ \A t \in Tablets : \A tx \in Txns :
        /\ ptx[t][tx].st \in TxStateNames
        /\ pdur[t][tx].st \in DurableStateNames
        /\ ptx[t][tx].dec \in Decisions /\ applied[t][tx] \in Decisions /\ votes[t][tx] \in Decisions
    /\ hangs \in 0..MaxHangs /\ restarts \in 0..MaxRestarts /\ losses \in 0..MaxLoss
    /\ lockLosses \in 0..MaxLockLosses /\ deadlines \in 0..MaxDeadlines

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

\* INV: ExactlyOnce (the resharding example, as in specs/resharding/)
\* No message is in topic B twice, and every message below the committed read offset of
\* topic A is in B (or, mid-commit, in the supportive partition of a transaction whose
\* commit is decided).
NoDuplicates == \A p \in SrcParts, o \in Offsets : Copies(p, o) <= 1
NoLoss == \A p \in SrcParts, o \in Offsets : o < committed[p] => Copies(p, o) >= 1 \/ OnItsWay(p, o)
ExactlyOnce == NoDuplicates /\ NoLoss

\* INV: OrderPreserved
\* In every partition of B, the messages of one partition of A appear in their order.
OrderPreserved ==
    \A d \in DstParts :
        \A i, j \in DOMAIN target[d] :
            (i < j /\ target[d][i].src = target[d][j].src) => target[d][i].off <= target[d][j].off

\* INV: Atomicity
\* Across A's consumer offset, B's partitions and the table: if some participant committed
\* a transaction, none rolled it back; the client is told COMMITTED only when every
\* participant committed, and ABORTED only when none did.
Atomicity ==
    \A tx \in Txns :
        /\ (\E t \in Tablets : applied[t][tx] = "commit") => \A t \in Tablets : applied[t][tx] # "abort"
        /\ told[tx] = "COMMITTED" => \A t \in Participants(tx) : applied[t][tx] = "commit"
        /\ told[tx] = "ABORTED" => \A t \in Tablets : applied[t][tx] # "commit"

\* INV: ReadCommitted
\* Every message visible in B belongs to a transaction that was planned and whose every
\* participant's predicate held.
ReadCommitted ==
    \A d \in DstParts : \A i \in DOMAIN target[d] :
        \E tx \in Txns :
            /\ target[d][i] \in Batch(tx)
            /\ plan[tx] # 0
            /\ \A t \in Participants(tx) : votes[t][tx] = "commit"

\* INV: OffsetRangeCheck
\* Every offset commit applied a range [b, e) at committed = b, and the committed offsets
\* only move forward through such commits.
OffsetRangeCheck == ~rangeBad

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

=============================================================================
