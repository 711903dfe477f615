--------------------------- MODULE ConeProperties ---------------------------
(***************************************************************************)
(* The guarantees of C*One, each under a banner with what it promises.     *)
(* specs/cone/models.toml names the ones each model checks; specs/README.md *)
(* states them for the reader. "Quiescent" means storage has nothing in    *)
(* flight: no batchlog entry, no mutation on its way, no index batch still *)
(* to be sent by a running coordinator.                                    *)
(***************************************************************************)
EXTENDS Cone

Quiescent ==
    /\ \A i \in DOMAIN batches : ~batches[i].blog /\ batches[i].pend = {}
    /\ \A x \in Coords : Running(x) => \A t \in TxnIds : txs[x][t].st # "indexing"

\* INV: TypeOK
\* Every variable holds a value of the expected shape: one named part per variable (XTypeOK
\* for variable x), in the order of their declarations (Cone), each the set its @type
\* annotation names, with the bounds the constants give, but the history variable action,
\* which no module reads (a window of a trace check starts from a state without it:
\* trace_check/traces/handoff.py). A trace check checks a part only after a step that
\* changed what it reads (trace_check/traces/invariants.py).
\* (Sequences are checked element by element and strings not at
\* all: Apalache takes neither Seq(S) nor STRING; its types say the rest.)
Writers == TxnIds \cup {InitTxn}
Reads == Keys \X Writers \X Int
Muts == Keys \X Int \X BOOLEAN
ClientRecords ==
    [st: {"idle", "begin", "open", "commit", "done"}, att: 0..MaxAttempts, co: 0..3,
     pc: {"", "read", "write", "ryw", "commit", "rollback"}, n: Int, ryw: Int]
CoordRecords == [up: BOOLEAN, paused: BOOLEAN, fenced: BOOLEAN, active: BOOLEAN, clock: Nat]
TxRecords == [st: {"none", "open", "committing", "indexing"}, ts: Nat, rd: SUBSET Reads, wr: SUBSET Muts]
BatchRecords ==
    [t: TxnIds, co: Coords, ts: Nat, muts: SUBSET Muts, logged: BOOLEAN, blog: BOOLEAN, bdc: SUBSET Coords,
     pend: SUBSET Replicas, applied: SUBSET Replicas]
CommitRecords == [t: TxnIds, ts: Nat, rd: SUBSET Reads, ks: SUBSET Keys]
\* Every element of sequence s is in S.
\* @type: (Seq(a), Set(a)) => Bool;
SeqOf(s, S) == \A i \in DOMAIN s : s[i] \in S

ClTypeOK == cl \in [Clients -> ClientRecords]
CoTypeOK == co \in [Coords -> CoordRecords]
LkTypeOK == lk \in [Coords -> SUBSET (Keys \X TxnIds)]
TxsTypeOK == txs \in [Coords -> [TxnIds -> TxRecords]]
UnbornTypeOK == unborn \in [Coords -> SUBSET TxnIds]
CutTypeOK == cut \subseteq Coords \X Coords
DeadTypeOK == dead \subseteq Coords
BatchesTypeOK ==
    /\ SeqOf(batches, BatchRecords)
    /\ \A i \in DOMAIN batches :
         /\ batches[i].pend \cap batches[i].applied = {}
         /\ batches[i].pend \cap dcDown = {}
         /\ batches[i].bdc \subseteq Coords \ dcDown
         /\ batches[i].blog => batches[i].bdc # {}
DcDownTypeOK == dcDown \subseteq Coords
HistTypeOK == hist \subseteq CommitRecords
ToldTypeOK == told \subseteq TxnIds \X {"committed", "failed", "unknown"}
FaultsTypeOK == faults \in (0..MaxCrashes) \X (0..MaxPauses) \X (0..MaxCuts) \X (0..MaxDrops) \X (0..MaxDcFails)

TypeOK ==
    /\ ClTypeOK
    /\ CoTypeOK
    /\ LkTypeOK
    /\ TxsTypeOK
    /\ UnbornTypeOK
    /\ CutTypeOK
    /\ DeadTypeOK
    /\ BatchesTypeOK
    /\ DcDownTypeOK
    /\ HistTypeOK
    /\ ToldTypeOK
    /\ FaultsTypeOK

\* INV: ExclusiveLocks
\* No split brain: no two coordinators that can act both hold a lock on one key for a live
\* transaction.
ExclusiveLocks ==
    \A k \in Keys :
        Cardinality({x \in Coords : CanAct(x) /\ \E l \in lk[x] : l[1] = k /\ txs[x][l[2]].st \in {"open", "committing"}}) <= 1

\* INV: TsMonotone
\* The group's transactions' batches carry increasing timestamps in the order they were sent,
\* whichever coordinator sent them.
TsMonotone ==
    \A i, j \in DOMAIN batches :
        i < j /\ batches[i].t # batches[j].t => batches[i].ts < batches[j].ts

\* The committed transaction (or InitTxn) with the highest timestamp below ts that wrote k.
\* @type: ($key, Int) => $txn;
LatestWriter(k, ts) ==
    LET before == {h \in hist : k \in h.ks /\ h.ts < ts}
    IN IF before = {} THEN InitTxn ELSE (CHOOSE h \in before : \A o \in before : o.ts <= h.ts).t

\* INV: Serializable
\* Every committed transaction read, for each key it read, the write of the committed
\* transaction with the highest timestamp below its own (no lost update).
Serializable ==
    \A h \in hist : \A r \in h.rd : r[2] = LatestWriter(r[1], h.ts)

\* Every QUORUM read of the replicas still up meets a replica that applied batch i.
\* @type: (Int) => Bool;
AtEveryQuorum(i) == \A Q \in LiveQuorums : Q \cap batches[i].applied # {}

\* INV: Atomicity
\* Once storage is quiescent, every batch is applied where every QUORUM read sees it, or at no
\* replica still up.
Atomicity ==
    Quiescent => \A i \in DOMAIN batches : AtEveryQuorum(i) \/ batches[i].applied \cap dcDown = batches[i].applied

\* The committed transaction that wrote k last, in the order batches were sent.
\* @type: ($key) => $txn;
LastSent(k) ==
    LET ws == {i \in DOMAIN batches : batches[i].t \in {h.t : h \in hist} /\ \E m \in batches[i].muts : m[1] = k}
    IN IF ws = {} THEN InitTxn ELSE batches[CHOOSE i \in ws : \A j \in ws : j <= i].t

\* INV: CommittedVisible
\* Once storage is quiescent, a QUORUM read of any key returns the write of the last
\* committed transaction that wrote it.
CommittedVisible ==
    Quiescent => \A k \in Keys, Q \in LiveQuorums : ReadAt(Q, k)[4] = LastSent(k)

\* INV: NoUncommittedInStorage
\* Storage holds only writes of committed transactions (the seed's Read Committed for
\* reads outside a transaction).
NoUncommittedInStorage ==
    \A i \in DOMAIN batches : batches[i].applied # {} => batches[i].t \in {h.t : h \in hist}

\* INV: ReadYourWrites
\* Inside a transaction, a read of a key the transaction wrote returns what it wrote.
ReadYourWrites ==
    \A c \in Adders : cl[c].ryw # -1 => cl[c].ryw = cl[c].n + 1

\* The photos a QUORUM read of Q sees, with their tags.
\* @type: (Set(Int)) => Set(<<Str, Int>>);
PhotosAt(Q) == {<<p, ReadAt(Q, Row(p))[1]>> : p \in {p \in Photos : Live(ReadAt(Q, Row(p)))}}
\* @type: (Set(Int)) => Set(<<Str, Int>>);
IndexAt(Q) == {<<g[2], g[1]>> : g \in {g \in Tags \X Photos : Live(ReadAt(Q, Ix(g[1], g[2])))}}

\* INV: IndexConsistent
\* Once storage is quiescent, live index entries and live photos are in bijection, each
\* entry under its photo's tag.
IndexConsistent ==
    Quiescent => \A Q \in LiveQuorums : IndexAt(Q) = PhotosAt(Q)

\* INV: ClientOutcomeHonest
\* A client told its transaction failed never sees it stored; one told it committed finds it
\* at a quorum or in the batchlog.
ClientOutcomeHonest ==
    \A o \in told :
        /\ o[2] = "failed" => \A i \in DOMAIN batches : batches[i].t # o[1]
        /\ o[2] = "committed" => \E i \in DOMAIN batches :
                batches[i].t = o[1] /\ (batches[i].blog \/ AtEveryQuorum(i))

\* INV: AlbumCountMatches
\* The seed's example: once storage is quiescent, the album's counter equals its number of
\* photos, whichever quorum is read.
AlbumCountMatches ==
    Quiescent => \A Q \in LiveQuorums : ReadAt(Q, Album)[1] = Cardinality(PhotosAt(Q))

=============================================================================
