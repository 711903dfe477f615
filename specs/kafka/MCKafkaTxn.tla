---------------------------- MODULE MCKafkaTxn ----------------------------
(***************************************************************************)
(* Model of KafkaTxn, with its invariants (KafkaTxnProperties), for the    *)
(* model checkers. Constants come from specs/kafka/models.toml.            *)
(***************************************************************************)
\* KafkaTxn before KafkaTxnProperties: TLC orders strings and record fields by when it
\* first reads them, and this keeps the order it had when the invariants were in KafkaTxn
\* (specs/README.md).
EXTENDS KafkaTxn, KafkaTxnProperties

\* The client-step (pc) that response m answers.
\* @type: ($msg) => Int;
RespPc(m) ==
    CASE m.type = "AddPartitionsToTxnResp" -> 1
      [] m.type = "ProduceResp" -> 1 + m.part * Batches  \* the partition's last batch
      [] m.type = "AddOffsetsToTxnResp" -> AddOffsetsPc
      [] m.type = "TxnOffsetCommitResp" -> OffsetCommitPc
      [] OTHER -> EndPc

\* Can message m still have an effect? A response whose client has moved
\* past the request can only be discarded; a marker acknowledgement of an
\* earlier coordinator epoch can only be ignored.
\* @type: ($msg) => Bool;
Live(m) ==
    LET c == cl[<<m.tid, m.inst>>]
    IN CASE m.type = "InitProducerIdResp" -> c.st = "init"
         [] m.type = "OffsetFetchResp" -> c.st = "ready" /\ m.gtx[3] = c.txn
         [] m.type \in {"AddPartitionsToTxnResp", "ProduceResp", "AddOffsetsToTxnResp", "TxnOffsetCommitResp", "EndTxnResp"} ->
              c.st = "intxn" /\ m.gtx[3] = c.txn /\ (RespPc(m) >= c.pc \/ AnsweredBatch(<<m.tid, m.inst>>, m) # {})
         [] m.type = "WriteTxnMarkersResp" -> m.cepoch = cepoch
         [] OTHER -> TRUE

\* TLC: states that differ only in the history variable `action`, or in
\* messages that can no longer have an effect (Live), are the same state of
\* the protocol: each has the same futures, up to discarding those messages.
View == <<{m \in net : Live(m)}, clientVars, coordVars, leaderVars, groupVars, faultVars>>

\* Atomicity as it was first written, through every pair of records
\* (KafkaTxnProperties now compares each record's fate with the set of
\* transactions that have a committed record).
AtomicityPairwise ==
    \A e1, e2 \in DataEntries :
        GtxOf(e1) = GtxOf(e2) /\ FateOf(e1) = "committed" =>
            /\ FateOf(e2) # "aborted"
            /\ Quiescent => FateOf(e2) = "committed"

\* The two forms of Atomicity agree in every state (tests/test_spec_forms.py
\* checks it on the states of kafka_tv1_late_endtxn_torn, which include
\* states where both fail).
AtomicityFormsAgree == Atomicity = AtomicityPairwise

\* The log operators as first written, through sets of every entry
\* (KafkaLog, KafkaTxnProperties and LoadedProducerState now look only as
\* far as the entry they need, so that a long trace's log costs time linear
\* in its length).
\* @type: (Seq($entry), Int) => Int;
CloserOfBySets(log, i) ==
    LET later == {j \in DOMAIN log : j > i /\ IsMarker(log, j) /\ log[j].pid = log[i].pid}
    IN IF later = {} THEN 0 ELSE MinOf(later)

\* @type: (Seq($entry), Int) => Int;
PrevMarkerBySets(log, c) ==
    LET before == {j \in 1..(c - 1) : IsMarker(log, j) /\ log[j].pid = log[c].pid}
    IN IF before = {} THEN 0 ELSE MaxOf(before)

\* @type: (Seq($entry), Int) => Set(Int);
ClosedByBySets(log, c) == {i \in (PrevMarkerBySets(log, c) + 1)..(c - 1) : IsData(log, i) /\ log[i].pid = log[c].pid}

\* @type: (Seq($entry), Str) => Int;
FirstOpenBySets(log, P) ==
    LET markers == {j \in DOMAIN log : IsMarker(log, j) /\ log[j].pid = P}
        last == IF markers = {} THEN 0 ELSE MaxOf(markers)
        open == {i \in (last + 1)..Len(log) : IsData(log, i) /\ log[i].pid = P}
    IN IF open = {} THEN Len(log) + 1 ELSE MinOf(open)

\* @type: (Seq($entry)) => Int;
LSOBySets(log) ==
    LET firsts == {FirstOpenBySets(log, P) : P \in Producers(log)}
    IN IF firsts = {} THEN Len(log) + 1 ELSE MinOf(firsts)

\* @type: (Seq($entry)) => Set($aborted);
AbortedIndexBySets(log) ==
    LET closing == {c \in DOMAIN log : IsMarker(log, c) /\ ~log[c].commit}
    IN { [pid |-> log[c].pid, first |-> MinOf(ClosedByBySets(log, c)), last |-> c] :
           c \in {m \in closing : ClosedByBySets(log, m) # {}} }

\* @type: (Seq($entry), Bool) => Set(Int);
ReadCommittedFetchBySets(log, inclusive) ==
    LET lso == LSOBySets(log)
        index == AbortedIndexBySets(log)
    IN { i \in DOMAIN log :
           /\ IsData(log, i)
           /\ IF inclusive THEN i <= lso ELSE i < lso
           /\ ~\E a \in index : a.pid = log[i].pid /\ a.first <= i /\ i <= a.last }

\* @type: (Seq($entry), Str, Int) => $pstate;
LoadedProducerStateBySets(log, t, from) ==
    LET es == {i \in DOMAIN log : i > from /\ log[i].pid = t}
    IN IF es = {} THEN [FreshProducerState[t] EXCEPT !.from = from]
       ELSE LET last == MaxOf(es)
                epoch == log[last].epoch
                cur == {i \in es : IsData(log, i) /\ log[i].epoch = epoch}
                lastSeq == IF cur = {} THEN -1 ELSE log[MaxOf(cur)].seq
                markers == {i \in es : IsMarker(log, i)}
            IN [epoch |-> epoch, lastSeq |-> lastSeq,
                seqs |-> IF cur = {} THEN {} ELSE {lastSeq},
                open |-> IsData(log, last),
                cepoch |-> IF markers = {} THEN -1 ELSE log[MaxOf(markers)].cepoch,
                from |-> from, vepoch |-> -1, vseq |-> -1]

NoDuplicatesPairwise ==
    \A p \in Parts : \A i, j \in DOMAIN plog[p] :
        (i < j /\ IsData(plog[p], i) /\ IsData(plog[p], j)) =>
            plog[p][i].gtx # plog[p][j].gtx \/ (Batches > 1 /\ plog[p][i].seq # plog[p][j].seq)

InSequenceBySets ==
    \A p \in Parts : \A j \in DOMAIN plog[p] :
        IsData(plog[p], j) =>
            LET before == {i \in 1..(j - 1) : IsData(plog[p], i) /\ plog[p][i].pid = plog[p][j].pid
                                                /\ plog[p][i].epoch = plog[p][j].epoch}
            IN plog[p][j].seq = IF before = {} THEN 0 ELSE plog[p][MaxOf(before)].seq + 1

\* @type: (Str) => Int;
LatestInstanceBySets(t) ==
    LET grants == {j \in DOMAIN tlog[t] : tlog[t][j].st = "Empty" \/ IsFence(tlog[t][j].endBy)}
        last == IF grants = {} THEN 0 ELSE MaxOf(grants)
    IN IF last = 0 THEN 0
       ELSE IF tlog[t][last].st = "Empty" THEN tlog[t][last].gtx[2] ELSE tlog[t][last].endBy[2]

NoHangingTransactionByEntries ==
    \A p \in Parts : \A i \in DOMAIN plog[p] :
        (IsData(plog[p], i) /\ Fate(plog[p], i) = "open") =>
            LET t == plog[p][i].pid
            IN /\ tlog[t] # <<>>
               /\ tlog[t][Len(tlog[t])].st \in {"Ongoing", "PrepareCommit", "PrepareAbort"}
               /\ p \in tlog[t][Len(tlog[t])].parts

\* Both forms of each log operator agree in every state (tests/test_spec_forms.py
\* checks it on the states of models that reach aborts, duplicates, gaps in
\* sequences, restarts, expiry and unclean elections), for every argument the
\* operators take there.
LogFormsAgree ==
    /\ \A p \in Parts :
          LET log == plog[p]
          IN /\ \A i \in DOMAIN log : CloserOf(log, i) = CloserOfBySets(log, i) /\ PrevMarker(log, i) = PrevMarkerBySets(log, i)
             /\ \A P \in TxnIds : FirstOpen(log, P) = FirstOpenBySets(log, P) /\ HasOpen(log, P) = (FirstOpenBySets(log, P) <= Len(log))
             /\ LSO(log) = LSOBySets(log)
             /\ AbortedIndex(log) = AbortedIndexBySets(log)
             /\ \A inclusive \in BOOLEAN : ReadCommittedFetch(log, inclusive) = ReadCommittedFetchBySets(log, inclusive)
             \* from a prefix and from an offset on, with the transactional.ids for the producers
             /\ \A n \in 0..Len(log) : LSOAmong(log, n, TxnIds) = LSOBySets(SubSeq(log, 1, n))
             /\ \A after \in 0..(Len(log) + 1), inclusive \in BOOLEAN :
                    ReadCommittedFetchAfter(log, after, inclusive, TxnIds) = {j \in ReadCommittedFetchBySets(log, inclusive) : j > after}
             /\ \A t \in TxnIds, from \in 0..(Len(log) + 1) :
                    LoadedProducerState(log, t, from) = LoadedProducerStateBySets(log, t, from)
    /\ NoDuplicates = NoDuplicatesPairwise
    /\ InSequence = InSequenceBySets
    /\ NoHangingTransaction = NoHangingTransactionByEntries
    /\ \A t \in TxnIds : LatestInstance(t) = LatestInstanceBySets(t)

\* A witness, not a guarantee: false once some transaction is complete and
\* committed, so that its counterexample is the protocol's happy path,
\* request by request.
WitnessTransactionCommits ==
    \A t \in TxnIds : \A k \in DOMAIN tlog[t] : tlog[t][k].st # "CompleteCommit"

\* A witness: false once the coordinator has logged a KIP-360 epoch bump (an
\* Empty entry that keeps the epoch before it, lastProducerEpoch), so that
\* its counterexample shows a client's bump after an abortable error.
WitnessClientBumps ==
    \A t \in TxnIds : \A k \in DOMAIN tlog[t] : ~(tlog[t][k].st = "Empty" /\ tlog[t][k].last # -1)

\* A witness: false once a retried KIP-360 bump was answered with the epoch
\* the first copy got (an Empty entry at the epoch of the entry before it).
WitnessBumpRetried ==
    \A t \in TxnIds : \A k \in DOMAIN tlog[t] :
        ~(k > 1 /\ tlog[t][k].st = "Empty" /\ tlog[t][k].last # -1 /\ tlog[t][k].epoch = tlog[t][k - 1].epoch)

\* A witness: false once a client goes on with a second producer id, so
\* that its counterexample shows a producer-id rotation at MaxEpoch.
WitnessProducerIdRotates ==
    \A i \in Instances : PidOf(cl[i].epoch) < 1

-----------------------------------------------------------------------------
(* ReducedView: a coarser view for the holding models, sound for their     *)
(* invariants. TLC explores one state per view value and checks the        *)
(* invariants of each state it explores, so merging two states is sound  *)
(* when (a) they have the same enabled steps, up to the view, and (b) the *)
(* invariants of their successors agree. Both need hold only between     *)
(* states where every invariant holds: a first violation is always        *)
(* reached from such a state, and is then found. What is left out:       *)
(*                                                                         *)
(*  - Clients: a finished, fenced or failed client keeps only st and hung  *)
(*    (no step reads more of it); a client with no outstanding request     *)
(*    forgets its last request (only Retry, ProduceTimeout and responses   *)
(*    read it, all while out); outside a transaction pc and the commit     *)
(*    flag are reset by BeginTxn, sequences outside "ready" by the         *)
(*    InitProducerId answer.                                               *)
(*  - Coordinator: the ghost gtx/endBy of a transactional.id that is       *)
(*    Empty or Complete* (only Ongoing and Prepare* read them).            *)
(*  - __transaction_state: only its last entry (Failover reloads it,       *)
(*    NoHangingTransaction reads it) and LatestInstance (the zombie flag   *)
(*    of appends). TxnStateMachine compares each new entry with the last   *)
(*    one, so it holds of the whole log if it held before.                 *)
(*  - Partition logs: below the LSO every record is decided and no step    *)
(*    reads the log (leaders keep pst; LeaderRestart, the index of a       *)
(*    producer's expiry and UncleanElection's truncation are the           *)
(*    exceptions, hence the condition). Decided records keep only what    *)
(*    invariants of                                                         *)
(*    later states can still ask: each one's client transaction, fate and  *)
(*    input offset (Atomicity, NoDuplicates, ExactlyOnceCTP). ReadCommitted, *)
(*    ZombieFenced and MarkerSafety cannot change below the LSO (later     *)
(*    markers close only later records; aborted ranges start at open       *)
(*    records), and ProducerStateInLog of the next state follows from pst  *)
(*    and the new entry. The log from the LSO on is kept as it is.         *)
(*    Two bugs break this argument, and so keep whole logs: an LSO taken  *)
(*    as inclusive (ReadCommitted reads at the LSO) and appends without   *)
(*    sequence checks (the rebuilt producer state is no longer a function *)
(*    of the previous one).                                                *)
(* Every violating model is also checked under ReducedView by the tests    *)
(* (tests/test_reduced_view.py): it must still find its violation.         *)

\* Do the partition and transaction logs reduce to their summaries?
SummarizeLogs == ~LeaderRestarts /\ ~ProducerExpiry /\ ~UncleanElections /\ Bugs \cap {"lso_inclusive", "no_idempotence"} = {}

\* @type: $client;
NoClient == [st |-> "", epoch |-> -1, txn |-> 0, pc |-> 0, out |-> FALSE, req |-> NoMsg,
             seq |-> [p \in Parts |-> 0], hung |-> FALSE, commit |-> TRUE, pos |-> -1, gen |-> -1,
             fly |-> {}, sent |-> 0, bump |-> FALSE]

\* @type: ($inst) => $client;
ClientView(i) ==
    LET c == cl[i]
    IN CASE c.st \in {"done", "fenced", "failed"} ->
              [NoClient EXCEPT !.st = c.st, !.hung = c.hung]
         [] c.st \in {"down", "init", "ready"} ->
              [c EXCEPT !.req = IF c.out THEN @ ELSE NoMsg, !.pc = 0, !.commit = TRUE,
                        !.seq = IF c.st = "ready" THEN @ ELSE [p \in Parts |-> 0]]
         [] OTHER ->
              [c EXCEPT !.req = IF c.out THEN @ ELSE NoMsg]

\* Is a transaction open in coordinator state st?
\* @type: (Str) => Bool;
HasOpenTxn(st) == st \in {"Ongoing", "PrepareCommit", "PrepareAbort"}

\* @type: (Str) => $coord;
CoordView(t) ==
    IF HasOpenTxn(tc[t].st) THEN tc[t] ELSE [tc[t] EXCEPT !.gtx = NoGtx, !.endBy = NoGtx]

\* The last entry of __transaction_state (none, or one), with the ghosts that
\* no step reads blanked; the whole log when the logs are not summarised.
\* @type: (Str) => <<Seq($tentry), Int>>;
TlogView(t) ==
    LET last == tlog[t][Len(tlog[t])]
    IN <<IF ~SummarizeLogs THEN tlog[t]
         ELSE IF tlog[t] = <<>> THEN <<>>
         ELSE IF HasOpenTxn(last.st) THEN <<last>>
         ELSE <<[last EXCEPT !.gtx = NoGtx, !.endBy = NoGtx]>>,
         LatestInstance(t)>>

\* A partition log: what invariants can still ask of its decided records
\* below the LSO, and the log from the LSO on.
\* @type: (Int) => <<Set(<<$gtx, Str, Int>>), Seq($entry)>>;
PlogView(p) ==
    LET log == plog[p]
        from == IF SummarizeLogs THEN LSO(log) ELSE 1
    IN <<{<<log[i].gtx, Fate(log, i), log[i].src>> : i \in {j \in 1..(from - 1) : IsData(log, j)}},
         SubSeq(log, from, Len(log))>>

\* TLC 2.15 builds functions lazily and makes them concrete when it
\* fingerprints a state; under a view it fingerprints only the view, and
\* writing a state with a still-lazy function to its disk queue fails
\* ("fcnRcd is null"). Comparing each variable with itself makes every
\* function in it concrete; the value is always TRUE.
ValuesConcrete == net = net /\ cl = cl /\ tc = tc /\ tlog = tlog /\ plog = plog /\ pst = pst /\ held = held /\ lag = lag /\ gc = gc

ReducedView ==
    <<ValuesConcrete, {m \in net : Live(m)}, [i \in Instances |-> ClientView(i)], [t \in TxnIds |-> CoordView(t)],
      [t \in TxnIds |-> TlogView(t)], cepoch, [p \in Parts |-> PlogView(p)], pst, held, lag, gc, faultVars>>

-----------------------------------------------------------------------------
(* ReducedNext: Next with a partial-order reduction, for the holding       *)
(* models. TLC has none built in, so it is written as a priority: in a     *)
(* state where marker acknowledgements are in flight, the only steps     *)
(* taken are their deliveries (TcMarkerAck) or losses (Drop); else, where  *)
(* prepared transactions have every marker acknowledged, the only steps   *)
(* are TcComplete; else a client's own steps (below). Everywhere else all  *)
(* of Next. Soundness, for invariants and deadlocks (an ample-set          *)
(* argument; a is a priority step in state s):                             *)
(*                                                                         *)
(*  1. a commutes with every step b that can happen before it: b never     *)
(*     disables a, and a then b reaches the state b then a does.           *)
(*     TcMarkerAck(m) takes m off the network and p out of todo. Only      *)
(*     TcComplete and TcResendMarker read todo, both disabled while p is   *)
(*     in todo and m (same coordinator epoch) is in flight; Failover       *)
(*     rebuilds todo from the log either way; nothing else reads marker    *)
(*     acknowledgements, and none can re-create m while it is in flight.   *)
(*     TcComplete(t) only queues the Complete entry: with the pending      *)
(*     check, nothing else queues one while t is prepared (Busy), and the  *)
(*     entry answers nobody. One step does not commute: Failover drops the *)
(*     queue, so TcComplete then Failover is the state Failover alone      *)
(*     gives; the reduced graph reaches it too.                            *)
(*  2. a never repairs a violation: if x violates an invariant, so does    *)
(*     a(x). The invariants read marker acknowledgements and the queue     *)
(*     only through Quiescent, which is false while t is prepared (for     *)
(*     TcComplete) and can only become true when a message leaves the      *)
(*     network (for TcMarkerAck, Drop); each invariant is weaker when      *)
(*     Quiescent is false.                                                 *)
(*  3. every priority step lowers the number of live messages plus the    *)
(*     number of prepared transactions with nothing queued, so no cycle of *)
(*     the reduced graph consists of priority steps only,                  *)
(*     and a deadlock or violation reachable in the full graph is reached  *)
(*     in the reduced graph (by induction on the path length, then on     *)
(*     that measure).                                                      *)
(*  4. TLC explores the graph up to the view, so 3 must hold there too:    *)
(*     every priority step changes the view (it takes a message the view   *)
(*     keeps off the network, or queues an entry), else TLC would take its *)
(*     successor for the state it came from and explore nothing further.   *)
(*     Hence only acknowledgements of the current coordinator epoch (Live) *)
(*     go first; older ones are delivered in any order, as in Next.        *)
(* The pending check is what makes 1 hold for TcComplete; the bug that     *)
(* removes it ("no_pending_check") turns the reduction off.                *)
(* tests/test_reduced_view.py checks every violating Kafka model under     *)
(* ReducedNext and ReducedView: each must still find its violation.        *)

\* Marker acknowledgements in flight, of the current coordinator epoch. (An
\* older one is outside the view: taking it first would lead back to a state
\* TLC has seen, whose other steps it would then never take; see 4.)
\* @type: Set($msg);
MarkerAcks == {m \in net : m.type = "WriteTxnMarkersResp" /\ Live(m)}

\* Prepared transactions whose every marker is acknowledged.
\* @type: Set(Str);
ReadyToComplete ==
    {t \in TxnIds : tc[t].st \in {"PrepareCommit", "PrepareAbort"} /\ tc[t].todo = {} /\ tc[t].pending = <<>>}

\* A witness for the tests of ReducedNext, not a guarantee: false once an
\* acknowledgement from before a failover and one from after it are in
\* flight together (a reduction that stopped after a stale one would miss it).
NoStaleAndLiveAcks ==
    ~\E m, n \in net : /\ m.type = "WriteTxnMarkersResp" /\ n.type = "WriteTxnMarkersResp"
                      /\ m.cepoch < cepoch /\ n.cepoch = cepoch

-----------------------------------------------------------------------------
(* Client steps first. A client's own steps (Resume, BeginTxn,            *)
(* SendRequest, ReInit, ClientReceive) write only its record cl[i] and put *)
(* or take a message only it sends or consumes. ReducedNext takes them     *)
(* next, the steps of one client i at a time (the ample set), where the    *)
(* argument above holds for them:                                          *)
(*                                                                         *)
(*  1. Other steps read of cl[i] only hung and, in JoinGroup, whether i   *)
(*     finished (a receipt can only enable it). Two steps read hung:       *)
(*     StartInstance of i's successor and JoinGroup while i owns the      *)
(*     input; so Resume(i) goes first only once neither can happen         *)
(*     (ResumesFirst), and the other steps leave hung alone.               *)
(*     Hang(i) disables i's steps, so either i cannot hang (CannotHang),  *)
(*     which stays so while i takes no step (the hang budget never grows   *)
(*     back, a successor never returns to "down", the group gives i the    *)
(*     input only at i's own JoinGroup), or Hang(i) is in the ample set    *)
(*     too, which needs every other instance unable to hang (OnlyHanger:   *)
(*     hangs share one budget). Within i: a request                        *)
(*     goes first only when no answer to i is in flight (a stale one would *)
(*     answer it, so sending would disable DiscardStale); an answer only   *)
(*     where i cannot time out or retry with a copy in flight (the receipt *)
(*     disables those), and then every answer to i is in the ample set,    *)
(*     received or lost (Drop). A Drop of another message may use up the  *)
(*     loss budget, but ClientReceive stays enabled and commutes with it.  *)
(*     A request lost for good (nothing of it in flight) is sent again     *)
(*     first under the same conditions; nothing but i's own steps can      *)
(*     bring a copy back.                                                  *)
(*  2. No invariant reads cl or a message other than markers and their     *)
(*     acknowledgements, so these steps are invisible.                     *)
(*  3. A client step never creates an answer, a client hangs and resumes  *)
(*     within the hang budget, and between two answers it begins and sends *)
(*     at most once each: no cycle of them.                                *)
(*  4. Each changes the view: the client's state, or a live message.       *)
(* All priority steps leave plog, pst, tlog, gc and cepoch alone; the      *)
(* tests compare the values of those that Next and ReducedNext reach.      *)

\* Can instance i never hang from here on (while it takes no step)?
\* @type: ($inst) => Bool;
CannotHang(i) ==
    \/ hangs >= MaxHangs
    \/ ~((i[2] < NumInstances /\ cl[<<i[1], i[2] + 1>>].st = "down") \/ (CTP /\ gc.owner = i))

\* Is i the only instance that can hang, now or later while i takes no step?
\* Then Hang(i) joins i's steps in the ample set. (In consume-transform-
\* produce, another instance may become the group's owner and hang.)
\* @type: ($inst) => Bool;
OnlyHanger(i) == ~CTP /\ \A j \in Instances \ {i} : CannotHang(j)

\* Answers to instance i in flight, current or stale.
\* @type: ($inst) => Bool;
AnswerInFlight(i) ==
    \E n \in net : /\ n.type \in {"InitProducerIdResp", "AddPartitionsToTxnResp", "ProduceResp", "EndTxnResp",
                                  "AddOffsetsToTxnResp", "TxnOffsetCommitResp", "OffsetFetchResp"}
                  /\ n.tid = i[1] /\ n.inst = i[2]

\* Could instance i time out or retry while a copy of its request is in flight?
\* @type: ($inst) => Bool;
MayRetryLate(i) ==
    /\ retries < MaxRetries
    /\ \/ cl[i].req.type \in LateRequests
       \/ ProduceTimeouts /\ cl[i].req.type = "Produce"

\* A hung instance whose hang has had its effect: its successor started (or
\* it has none), and it does not own the group's input (the group may still
\* give that away while it hangs). Nothing else reads that it is hung.
\* @type: ($inst) => Bool;
ResumesFirst(i) ==
    /\ cl[i].hung
    /\ i[2] = NumInstances \/ cl[<<i[1], i[2] + 1>>].st # "down"
    /\ gc.owner # i

\* Instances whose own next step goes first. Not with pipelining: the
\* argument above is made for one request at a time.
\* @type: Set($inst);
LocalClients ==
    IF Pipelined THEN {} ELSE
    {i \in Instances :
        \/ ResumesFirst(i)
        \/ /\ ~cl[i].hung /\ (CannotHang(i) \/ OnlyHanger(i))
           /\ \/ /\ cl[i].st = "ready" /\ ~cl[i].out /\ cl[i].txn < TxnsPerInstance
                 /\ CTP => OwnsInput(i) /\ cl[i].pos \in 0..(InputSize - 1)
              \/ cl[i].st \in {"init", "intxn"} /\ ~cl[i].out /\ ~AnswerInFlight(i)
              \/ cl[i].out /\ ~MayRetryLate(i) /\ \E n \in net : Answers(i, n)
              \/ cl[i].out /\ ~MayRetryLate(i) /\ ~InFlight(cl[i].req)}

\* @type: ($inst) => Bool;
ClientStep(i) ==
    \/ Resume(i) \/ Hang(i) \/ BeginTxn(i) \/ SendRequest(i) \/ ReInit(i) \/ Retry(i)
    \/ \E n \in net : Answers(i, n) /\ (ClientReceive(i, n) \/ Drop(n))

ReducedNext ==
    IF Bug("no_pending_check") THEN Next
    ELSE IF MarkerAcks # {} THEN \E m \in MarkerAcks : TcMarkerAck(m) \/ Drop(m)
    ELSE IF ReadyToComplete # {} THEN \E t \in ReadyToComplete : TcComplete(t)
    ELSE IF LocalClients # {} THEN ClientStep(CHOOSE i \in LocalClients : TRUE)
    ELSE Next

=============================================================================
