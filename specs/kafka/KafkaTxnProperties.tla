-------------------------- MODULE KafkaTxnProperties --------------------------
(***************************************************************************)
(* What KafkaTxn promises: the invariants the models check (specs/        *)
(* models.toml names them) and the trace checker checks on every trace.   *)
(* Each starts with an INV banner and says, in a sentence or two, what a  *)
(* user of Kafka transactions is promised; the models that are expected  *)
(* to violate it are the bugs and naive designs that break the promise.   *)
(* The spec itself (variables, actions, Next) is KafkaTxn; what a log     *)
(* means (Fate, LSO, read_committed) is KafkaLog.                         *)
(***************************************************************************)
EXTENDS KafkaTxn

-----------------------------------------------------------------------------
\* INV: TypeOK
\* Every variable holds a value of the expected shape: one named part per
\* variable, in the order of their declarations (KafkaTxn), each checking
\* the variable's domain and the fields whose values come from a known set
\* or range (the rest of each shape is its @type annotation, which Apalache
\* checks). The history variable action is left out: no module reads it (a
\* window of a trace check starts from a state without it). A trace check
\* checks each part only after a step that changed what it reads
\* (trace_check/traces/invariants.py).
RequestTypes == {"InitProducerId", "AddPartitionsToTxn", "Produce", "AddOffsetsToTxn", "TxnOffsetCommit", "EndTxn",
                 "OffsetFetch", "Verify", "WriteTxnMarkers"}
MessageTypes == RequestTypes \cup {ty \o "Resp" : ty \in RequestTypes}
ClientStates == {"down", "init", "ready", "intxn", "fenced", "failed", "done"}
\* The data partitions and the consumer-offsets partition.
AllParts == {OffsetsPart} \cup Parts

\* Messages in flight: known types and error codes, known partitions.
NetTypeOK == \A m \in net : m.type \in MessageTypes /\ m.err \in Errors /\ m.tid \in TxnIds \cup {""} /\ m.part \in AllParts

\* Clients: known states, a sequence number per partition, at most
\* MaxInFlight batches in flight to each partition.
ClTypeOK ==
    /\ DOMAIN cl = Instances
    /\ \A i \in Instances :
           /\ cl[i].st \in ClientStates
           /\ DOMAIN cl[i].seq = Parts
           /\ {cl[i].out, cl[i].hung, cl[i].commit, cl[i].bump} \subseteq BOOLEAN
           /\ \A p \in Parts : Cardinality({f \in cl[i].fly : f.part = p}) <= MaxInFlight

\* The coordinator: a known state and known partitions per transactional.id.
TcTypeOK ==
    /\ DOMAIN tc = TxnIds
    /\ \A t \in TxnIds : tc[t].st \in TxnStates /\ tc[t].parts \subseteq AllParts /\ tc[t].todo \subseteq AllParts

\* __transaction_state: entries in known states naming known partitions.
TlogTypeOK ==
    /\ DOMAIN tlog = TxnIds
    /\ \A t \in TxnIds : \A k \in DOMAIN tlog[t] : tlog[t][k].st \in TxnStates /\ tlog[t][k].parts \subseteq AllParts

\* The coordinator epoch counts the failovers.
CepochTypeOK == cepoch \in Nat /\ cepoch = failovers

\* Partition logs: data batches and markers.
PlogTypeOK == DOMAIN plog = Parts /\ \A p \in Parts : \A k \in DOMAIN plog[p] : plog[p][k].kind \in {"data", "marker"}

\* Producer state: per partition (the offsets partition too), per transactional.id.
PstTypeOK == DOMAIN pst = AllParts /\ \A p \in AllParts : DOMAIN pst[p] = TxnIds /\ \A t \in TxnIds : pst[p][t].open \in BOOLEAN

\* Held for verification: produces at data partitions, TxnOffsetCommits at the offsets partition.
HeldTypeOK ==
    /\ DOMAIN held = AllParts
    /\ \A p \in AllParts : \A h \in held[p] : h.m.type = (IF p = OffsetsPart THEN "TxnOffsetCommit" ELSE "Produce") /\ h.void \in BOOLEAN

\* Replication: -1 in sync, -2 after an unclean election, else a length.
LagTypeOK == DOMAIN lag = Parts /\ \A p \in Parts : lag[p] >= -2

\* The group coordinator: offsets from 0 on, -1 for no pending offset.
GcTypeOK ==
    /\ gc.gen >= 0 /\ gc.committed >= 0 /\ gc.owner \in Instances \cup {NoInst}
    /\ DOMAIN gc.pending = TxnIds /\ \A t \in TxnIds : gc.pending[t] >= -1

\* The fault budgets used so far, within the budgets.
HangsTypeOK == hangs \in 0..MaxHangs
RetriesTypeOK == retries \in 0..MaxRetries
LossesTypeOK == losses \in 0..MaxLoss
FailoversTypeOK == failovers \in 0..MaxFailovers
AppendFailsTypeOK == appendFails \in 0..MaxAppendFails

TypeOK ==
    /\ NetTypeOK
    /\ ClTypeOK
    /\ TcTypeOK
    /\ TlogTypeOK
    /\ CepochTypeOK
    /\ PlogTypeOK
    /\ PstTypeOK
    /\ HeldTypeOK
    /\ LagTypeOK
    /\ GcTypeOK
    /\ HangsTypeOK
    /\ RetriesTypeOK
    /\ LossesTypeOK
    /\ FailoversTypeOK
    /\ AppendFailsTypeOK

-----------------------------------------------------------------------------
\* INV: TxnStateMachine
\* __transaction_state records only legal transitions (Kafka's
\* validPreviousStates, TransactionMetadata.scala; see KafkaTxnStates), a
\* transactional.id's log starts with Empty, and epochs never go back.
TxnStateMachine ==
    \A t \in TxnIds :
        LET log == Tlog(t)
        IN /\ TlogLen(t) # 0 => log[1].st = "Empty"
           /\ \A k \in 2..TlogLen(t) :
               /\ LegalTransition(log[k - 1].st, log[k].st)
               /\ log[k - 1].epoch <= log[k].epoch

-----------------------------------------------------------------------------
(* Helpers: the data records of the partition logs *)

\* The data entries of every partition, as <<partition, index>>.
DataEntries == UNION { {<<p, i>> : i \in {j \in DOMAIN Plog(p) : IsData(Plog(p), j)}} : p \in Parts }

\* @type: (<<Int, Int>>) => Str;
FateOf(e) == Fate(Plog(e[1]), e[2])

\* @type: (<<Int, Int>>) => $gtx;
GtxOf(e) == Plog(e[1])[e[2]].gtx

-----------------------------------------------------------------------------
\* INV: Atomicity
\* A transaction is all or nothing: no client transaction has one record
\* committed and another aborted, and once nothing is in flight, none has a
\* record committed and another still open. (KAFKA-17754, a late EndTxn
\* under TV1, tears a transaction: model kafka_tv1_late_endtxn_torn.)
\* (Each record's fate is computed once, and compared with the set of
\* transactions that have a committed record: the same as comparing every
\* pair of records of one transaction, without going through the pairs.)
\* @type: (Bool) => Bool;
AtomicityWith(quiescent) ==
    LET fate == [e \in DataEntries |-> FateOf(e)]
        committed == {GtxOf(e) : e \in {d \in DataEntries : fate[d] = "committed"}}
    IN \A e \in DataEntries :
           GtxOf(e) \in committed =>
               /\ fate[e] # "aborted"
               /\ quiescent => fate[e] = "committed"

\* No transaction has a record committed and another aborted (reads the logs).
AtomicityNow == AtomicityWith(FALSE)

\* Once nothing is in flight, no transaction has a record committed and
\* another still open (reads the network and the coordinator too). With
\* AtomicityNow, every record of a transaction with a committed record is
\* then committed: what AtomicityWith(TRUE) says.
AtomicityWhenQuiescent ==
    Quiescent =>
        LET committed == {GtxOf(e) : e \in {d \in DataEntries : FateOf(d) = "committed"}}
        IN \A e \in DataEntries : FateOf(e) = "open" => GtxOf(e) \notin committed

\* (In two parts, so that a trace checked after every event checks each one
\* only after a step that changed what it reads: the logs change less often
\* than the network.)
Atomicity == AtomicityNow /\ AtomicityWhenQuiescent

-----------------------------------------------------------------------------
\* INV: ReadCommitted
\* A read_committed consumer is given only records of committed
\* transactions (KafkaLog's ReadCommittedFetch: below the LSO, without
\* aborted ranges). Redpanda's 2022 inclusive LSO breaks it ("lso_inclusive").
ReadCommitted ==
    \A p \in Parts : \A i \in ReadCommittedFetch(Plog(p), Bug("lso_inclusive")) : Fate(Plog(p), i) = "committed"

-----------------------------------------------------------------------------
\* INV: NoDuplicates
\* A batch is appended at most once, however often the producer retried it
\* (the leader's sequence checks, ProducerAppendInfo). A client transaction
\* writes Batches batches per partition, with consecutive sequences, so two
\* entries of one transaction in one partition with one sequence (with one
\* batch per partition: any two) are a retried batch appended twice.
NoDuplicates ==
    \A p \in Parts :
        LET log == Plog(p)
            data == {i \in DOMAIN log : IsData(log, i)}
        IN \* (No two data entries share a transaction, and a sequence when a
           \* transaction writes several batches: what comparing every pair
           \* says, in time linear in the log; MCKafkaTxn: NoDuplicatesPairwise.)
           Cardinality({<<log[i].gtx, IF Batches > 1 THEN log[i].seq ELSE 0>> : i \in data}) = Cardinality(data)

-----------------------------------------------------------------------------
\* INV: InSequence
\* Idempotence keeps a producer's batches in order, without gaps: in each
\* partition, the batches of one producer epoch are appended with
\* sequences 0, 1, 2, ... (what enable.idempotence promises with up to
\* five requests in flight). A leader with no state for a producer takes any
\* sequence, so with pipelining a batch that overtakes an earlier one whose
\* append failed with a retriable error leaves a gap, and the earlier one
\* then fails for ever with OUT_OF_ORDER_SEQUENCE_NUMBER (KAFKA-14904,
\* KAFKA-14920). (After a producer expired, the leader takes any sequence,
\* and the client's next batch continues the sequence the log has.)
InSequence ==
    \A p \in Parts :
        LET log == Plog(p)
            data == {i \in DOMAIN log : IsData(log, i)}
        IN \* (The same as: each batch's sequence is one more than that of the
           \* producer epoch's batch before it, or 0 if it is the first: no two
           \* batches of an epoch share a sequence, and a batch with sequence
           \* s > 0 follows one with s - 1 (then the first has 0, and the
           \* rest count up from it). Linear in the log where the first form,
           \* MCKafkaTxn's InSequenceBySets, looked back over all of it.)
           /\ Cardinality({<<log[i].pid, log[i].epoch, log[i].seq>> : i \in data}) = Cardinality(data)
           /\ \A j \in data :
                  log[j].seq # 0 =>
                      LET b == LastUpTo(1, j - 1, LAMBDA i : IsData(log, i) /\ log[i].pid = log[j].pid
                                                             /\ log[i].epoch = log[j].epoch)
                      IN b >= 1 /\ log[b].seq = log[j].seq - 1

-----------------------------------------------------------------------------
\* INV: ZombieFenced
\* Nothing written by a zombie becomes committed: once another instance's
\* InitProducerId bumped the epoch (TransactionCoordinator.
\* handleInitProducerId), the old instance's records are aborted or refused.
ZombieFenced ==
    \A e \in DataEntries : Plog(e[1])[e[2]].zombie => FateOf(e) # "committed"

-----------------------------------------------------------------------------
\* INV: ClientsFenceable
\* No client holds the epoch MaxEpoch (Short.MaxValue), so the coordinator
\* can always fence it with a bump: a producer id whose epoch is exhausted
\* is replaced by a new one (TransactionMetadata.isEpochExhausted: "We do
\* not allow the client to use an epoch equal to Short.MaxValue").
\* KAFKA-18660 and KAFKA-20090 break it.
ClientsFenceable ==
    \A i \in Instances : EpochOf(cl[i].epoch) < MaxEpoch

-----------------------------------------------------------------------------
\* Producer t's open transaction on p, if it has one, is one the
\* coordinator's log says is open and includes p.
\* @type: (Str -> Seq($tentry), Int -> Seq($entry), Int, Str) => Bool;
NotHanging(tl, pl, p, t) ==
    HasOpen(pl[p], t) =>
        /\ tl[t] # <<>>
        /\ tl[t][Len(tl[t])].st \in {"Ongoing", "PrepareCommit", "PrepareAbort"}
        /\ p \in tl[t][Len(tl[t])].parts

\* INV: NoHangingTransaction
\* A partition's LSO is held back only by a transaction that the
\* coordinator's log says is open and includes that partition, so the LSO
\* (and read_committed consumers) are never stuck for good. Under TV1 a late
\* produce breaks it; TV2 (KIP-890) fixes it.
NoHangingTransaction ==
    \* (Per producer: t has an open transaction on p exactly when a data entry
    \* of t has no closer, so this says what asking every data entry says,
    \* reading only back to t's last entry; MCKafkaTxn:
    \* NoHangingTransactionByEntries, the first form.)
    \A p \in Parts, t \in TxnIds : NotHanging(Tlogs, Plogs, p, t)

-----------------------------------------------------------------------------
\* Entry c of a log, if a marker, closes only what it may (MarkerSafety).
\* @type: (Seq($entry), Int) => Bool;
MarkerSafeAt(log, c) ==
    IsMarker(log, c) =>
        \A i \in ClosedBy(log, c) :
            \/ log[i].gtx = log[c].endBy
            \/ /\ ~log[c].commit
               /\ IsFence(log[c].endBy) \/ log[c].endBy = TimeoutGtx(log[c].pid)
               /\ log[i].gtx = log[c].gtx

\* INV: MarkerSafety
\* A marker completes only the transaction whose records it covers: a
\* COMMIT only at that transaction's own EndTxn, an ABORT at its own EndTxn
\* or when the coordinator fenced it or timed it out. KAFKA-17754 (TV1) breaks it; TV2
\* (KIP-890) bumps the epoch at every EndTxn.
MarkerSafety == \A p \in Parts : \A c \in DOMAIN Plog(p) : MarkerSafeAt(Plog(p), c)

-----------------------------------------------------------------------------
\* CTP: committed output records whose input record is p's offset o.
\* @type: (Int, Int) => Int;
CommittedCopies(p, o) ==
    LET log == Plog(p)
    IN Cardinality({i \in DOMAIN log : IsData(log, i) /\ log[i].src = o /\ Fate(log, i) = "committed"})

\* INV: ExactlyOnceCTP
\* Consume-transform-produce is exactly once: no input record has its
\* output (Batches records per partition) committed twice in any output
\* partition, and once nothing is in flight, the committed output is
\* exactly that of the input below the group's committed offset. It rests
\* on the generation check of TxnOffsetCommit (KIP-447).
ExactlyOnceCTP ==
    \A p \in Parts, o \in 0..(InputSize - 1) :
        /\ CommittedCopies(p, o) <= Batches
        /\ Quiescent => (CommittedCopies(p, o) = Batches <=> o < gc.committed)

-----------------------------------------------------------------------------
\* Producer t's state on partition p is what its leader rebuilds from p's
\* log, knowing of some epochs that t has no record of them there (MayHave:
\* KafkaTxn's LoadedProducerStateKnowing).
\* @type: (Int -> Seq($entry), Int -> (Str -> $pstate), Int, Str, Int => Bool) => Bool;
StateInLogKnowing(pl, ps, p, t, MayHave(_)) ==
    LET s == ps[p][t]
        loaded == LoadedProducerStateKnowing(pl[p], t, s.from, MayHave)
    IN /\ [s EXCEPT !.seqs = loaded.seqs, !.vepoch = -1, !.vseq = -1] = loaded
       /\ loaded.seqs \subseteq s.seqs

\* The same, knowing nothing of the epochs.
\* @type: (Int -> Seq($entry), Int -> (Str -> $pstate), Int, Str) => Bool;
StateInLog(pl, ps, p, t) == StateInLogKnowing(pl, ps, p, t, LAMBDA e : TRUE)

\* INV: ProducerStateInLog
\* A leader loses nothing that fencing and ordering need when it restarts:
\* its producer state (epoch, last sequence, open transaction, coordinator
\* epoch) is what it rebuilds from its log and snapshot
\* (LoadedProducerState, as ProducerStateManager does), so fencing and the
\* sequence check survive a crash (LeaderRestart). What Kafka guarantees is
\* weaker than the whole log: a snapshot keeps only the last batch of each
\* producer (memory keeps five for duplicate detection), the verification
\* state is memory only, and a producer that expired (ProducerExpiry) is
\* rebuilt only from the entries after its expiry.
ProducerStateInLog == \A p \in Parts, t \in TxnIds : StateInLog(Plogs, pst, p, t)

-----------------------------------------------------------------------------
(* Liveness. Checked under FairSpec or FairClientsSpec (KafkaTxn), never  *)
(* with a VIEW: TLC needs whole states to find the loops.                 *)

\* Producer t's last entry in partition p is a record: its transaction is
\* open there.
\* @type: (Int, Str) => Bool;
OpenOn(p, t) ==
    LET es == {i \in DOMAIN Plog(p) : Plog(p)[i].pid = t}
    IN es # {} /\ IsData(Plog(p), MaxOf(es))

\* PROP: EventuallyEnded
\* Every transaction that has a record in a partition eventually gets its
\* marker there. Without transaction timeouts it needs clients that go on
\* (FairClientsSpec); with them, the coordinator ends what a stopped client
\* left open.
EventuallyEnded == \A p \in Parts, t \in TxnIds : OpenOn(p, t) ~> ~OpenOn(p, t)

\* PROP: LsoAdvances
\* Once the clients are done, every partition's LSO reaches its log end and
\* stays there: read_committed consumers get every record in the end. The
\* stuck LSO of TV2 before Kafka 4.0 (KAFKA-14563) breaks it, with no
\* invariant noticing.
LsoAdvances == \A p \in Parts : <>[](LSO(Plog(p)) = PlogLen(p) + 1)

\* PROP: ZombieNeverCommits
\* The coordinator never logs PrepareCommit for an instance that another
\* instance's InitProducerId has replaced (a step property: each decision to
\* commit is requested by the instance that holds the newest epoch).
\* (tlog'[t]'s last entry is the new one: a base is the same in both states.)
ZombieNeverCommits ==
    [][\A t \in TxnIds :
         (Len(tlog'[t]) > Len(tlog[t]) /\ tlog'[t][Len(tlog'[t])].st = "PrepareCommit")
            => tlog'[t][Len(tlog'[t])].endBy[2] = LatestInstance(t)]_vars

=============================================================================
