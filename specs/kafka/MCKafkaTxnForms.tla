--------------------------- MODULE MCKafkaTxnForms ---------------------------
(***************************************************************************)
(* The invariants' forms checked from a prefix (KafkaTxnSince:            *)
(* XSince) against the invariants themselves, on the states of MCKafkaTxn *)
(* models (tests/test_spec_forms.py). For TLC only: it evaluates the       *)
(* invariants on a prefix of the logs through a parametrized INSTANCE,     *)
(* which Apalache does not take, so MCKafkaTxn stays free of it.           *)
(***************************************************************************)
EXTENDS MCKafkaTxn, KafkaTxnSince

\* KafkaTxnSince (and the properties it extends) with other logs in place of plog and tlog.
WithLogs(pl, tl) == INSTANCE KafkaTxnSince WITH plog <- pl, tlog <- tl

\* The prefixes of logs the trace checker passes: the whole of every log
\* but one (a step appends to one log), and nothing of any.
\* @type: (a -> Seq(b)) => Set(a -> Int);
Prefixes(logs) ==
    {[k \in DOMAIN logs |-> 0]}
    \cup UNION {{[k \in DOMAIN logs |-> IF k = j THEN n ELSE Len(logs[k])] : n \in 0..Len(logs[j])} : j \in DOMAIN logs}

\* @type: (a -> Seq(b), a -> Int) => (a -> Seq(b));
Cut(logs, from) == [k \in DOMAIN logs |-> SubSeq(logs[k], 1, from[k])]

\* Each invariant's form checked from a prefix (KafkaTxnSince: XSince)
\* agrees with the invariant wherever the invariant held on the prefix
\* (tests/test_spec_forms.py checks it on the models of LogFormsAgree).
SinceFormsAgree ==
    \* (Each invariant, each index and each invariant of a prefix is named
    \* once in a LET: TLC evaluates a LET's definition once where it is
    \* used several times, and an operator each time it is applied. The
    \* check of SinceFormsAgree and IndexMeans on kafka_tv2_no_lowest_sequence
    \* took 19.7 s when each conjunct computed them again, 13.5 s now.)
    LET now == IndexOf_plog(plog)
        txnStateMachine == TxnStateMachine
        markerSafety == MarkerSafety
        zombieFenced == ZombieFenced
        noDuplicates == NoDuplicates
        inSequence == InSequence
        atomicityNow == AtomicityNow
        readCommitted == ReadCommitted
        atomicityWhenQuiescent == AtomicityWhenQuiescent
        producerStateInLog == ProducerStateInLog
        noHangingTransaction == NoHangingTransaction
    IN
    /\ \A from \in Prefixes(tlog) :
          WithLogs(plog, Cut(tlog, from))!TxnStateMachine => (txnStateMachine <=> TxnStateMachineSince(tlog, from))
    /\ \A from \in Prefixes(plog) :
          LET cut == Cut(plog, from)
              \* the invariants on the prefix: where one fails there, its form
              \* need not agree (the trace checker found it failing before)
              wasMarkerSafety == WithLogs(cut, tlog)!MarkerSafety
              wasZombieFenced == WithLogs(cut, tlog)!ZombieFenced
              wasNoDuplicates == WithLogs(cut, tlog)!NoDuplicates
              wasInSequence == WithLogs(cut, tlog)!InSequence
              wasAtomicityNow == WithLogs(cut, tlog)!AtomicityNow
              wasReadCommitted == WithLogs(cut, tlog)!ReadCommitted
              \* (producer states as in this state, logs from the prefix)
              wasProducerStateInLog == WithLogs(cut, tlog)!ProducerStateInLog
              before == IndexOf_plog(cut)
          IN /\ wasMarkerSafety => (markerSafety <=> MarkerSafetySince(plog, from))
             /\ wasZombieFenced => (zombieFenced <=> ZombieFencedSince(plog, from))
             /\ wasNoDuplicates => (noDuplicates <=> NoDuplicatesSince(plog, from))
             /\ wasInSequence => (inSequence <=> InSequenceSince(plog, from))
             /\ wasAtomicityNow => (atomicityNow <=> AtomicityNowSince(plog, from))
             /\ wasReadCommitted => (readCommitted <=> ReadCommittedSince(plog, from))
             /\ wasProducerStateInLog => (producerStateInLog <=> ProducerStateInLogSince(plog, from, pst, pst))
             \* (The index of a prefix updated with the entries after it is the
             \* index of the logs, and the forms that read it agree with their
             \* invariants.)
             /\ IndexOf_plogSince(plog, from, before) = now
             /\ wasReadCommitted => (readCommitted <=> ReadCommittedSinceIndexed(plog, from, before, now))
             /\ atomicityWhenQuiescent <=> AtomicityWhenQuiescentSinceIndexed(net, net, tc, tc, plog, from, before, now)
             /\ wasAtomicityNow => (atomicityNow <=> AtomicityNowSinceIndexed(plog, from, before, now))
             /\ wasNoDuplicates => (noDuplicates <=> NoDuplicatesSinceIndexed(plog, from, before, now))
             /\ wasInSequence => (inSequence <=> InSequenceSinceIndexed(plog, from, before, now))
             /\ wasProducerStateInLog => (producerStateInLog <=> ProducerStateInLogSinceIndexed(plog, from, before, now, pst, pst))
    /\ LET tlogNow == IndexOf_tlog(tlog)
       IN \A from \in Prefixes(tlog) : IndexOf_tlogSince(tlog, from, IndexOf_tlog(Cut(tlog, from))) = tlogNow
    /\ \A pfrom \in Prefixes(plog) :
          LET cut == Cut(plog, pfrom)
          IN \A tfrom \in Prefixes(tlog) :
                WithLogs(cut, Cut(tlog, tfrom))!NoHangingTransaction =>
                    (noHangingTransaction <=> NoHangingTransactionSince(tlog, tfrom, plog, pfrom))

\* The index of each partition log (KafkaTxnSince: IndexOf_plog) is
\* what it says: the producers with an open transaction and where it
\* starts (KafkaLog's FirstOpen), and the transactions with a committed
\* record and with an aborted one, and the producer epochs with a record;
\* and the LSO found through it is the partition's (PartitionLSOFromIndex);
\* the index of __transaction_state names LatestInstance.
IndexMeans ==
    LET all == IndexOf_plog(plog)
    IN
    /\ \A p \in DOMAIN plog :
          LET log == plog[p]
              idx == all[p]
          IN /\ DOMAIN idx.open = {P \in Producers(log) : HasOpen(log, P)}
             /\ \A P \in DOMAIN idx.open : idx.open[P] = FirstOpen(log, P)
             /\ \A fate \in {"committed", "aborted"} :
                   LET known == IF fate = "committed" THEN idx.committed ELSE idx.aborted
                   IN UNION {{<<t, g>> : g \in DOMAIN known[t]} : t \in DOMAIN known}
                        = {<<log[i].gtx[1], log[i].gtx>> : i \in {j \in DOMAIN log : IsData(log, j) /\ Fate(log, j) = fate}}
             /\ UNION {{<<P, e>> : e \in DOMAIN idx.epochs[P]} : P \in DOMAIN idx.epochs}
                   = {<<log[i].pid, log[i].epoch>> : i \in {j \in DOMAIN log : IsData(log, j)}}
             /\ PartitionLSOFromIndex(p, all) = PartitionLSO(p)
    /\ LET tall == IndexOf_tlog(tlog)
       IN \A t \in DOMAIN tlog : LatestInstanceFromIndex(t, tall) = LatestInstance(t)

\* What the trace checker passes for a log after a step from `before` to
\* `after`: each key's length before, or 0 where the log got shorter.
\* @type: (a -> Seq(b), a -> Seq(b)) => (a -> Int);
Kept(before, after) == [k \in DOMAIN after |-> IF k \in DOMAIN before /\ Len(after[k]) >= Len(before[k]) THEN Len(before[k]) ELSE 0]

\* KafkaTxnSince (and the properties it extends) in a state given by the values of its variables. (A
\* variable left out of WITH would keep this state's value:
\* tests/test_spec_forms.py checks that every VARIABLE of KafkaTxn is here.)
InState(n, c, t, tl, ce, pl, ps, h, lg, g, hs, rs, ls, fs, afs, a) == INSTANCE KafkaTxnSince WITH net <- n, cl <- c, tc <- t, tlog <- tl, cepoch <- ce, plog <- pl, pst <- ps,
    held <- h, lag <- lg, gc <- g, hangs <- hs, retries <- rs, losses <- ls, failovers <- fs, appendFails <- afs,
    action <- a

\* The invariants in state s, a record of the values of the variables. (A
\* step's check below reads the invariants in the state after the step
\* through these, not as X': TLC took far longer to evaluate the primed
\* definitions (five invariants primed on each step of
\* kafka_tv2_no_lowest_sequence: 36 s, through InState 6 s, unprimed in the
\* state before 4 s), and the whole check took 97 s instead of 16 s. SANY's level
\* check refuses InState the primed variables themselves, so SinceStep
\* binds their values to s with \E.)
(*
  @typeAlias: vals = {net: Set($msg), cl: $inst -> $client, tc: Str -> $coord, tlog: Str -> Seq($tentry), cepoch: Int,
    plog: Int -> Seq($entry), pst: Int -> (Str -> $pstate), held: Int -> Set($held), lag: Int -> Int, gc: $group,
    hangs: Int, retries: Int, losses: Int, failovers: Int, appendFails: Int, action: $action};
*)
MCKafkaTxnForms_typedefs == TRUE

\* @type: ($vals) => Bool;
TxnStateMachineIn(s) == InState(s.net, s.cl, s.tc, s.tlog, s.cepoch, s.plog, s.pst, s.held, s.lag, s.gc, s.hangs, s.retries, s.losses, s.failovers, s.appendFails, s.action)!TxnStateMachine
\* @type: ($vals) => Bool;
MarkerSafetyIn(s) == InState(s.net, s.cl, s.tc, s.tlog, s.cepoch, s.plog, s.pst, s.held, s.lag, s.gc, s.hangs, s.retries, s.losses, s.failovers, s.appendFails, s.action)!MarkerSafety
\* @type: ($vals) => Bool;
ZombieFencedIn(s) == InState(s.net, s.cl, s.tc, s.tlog, s.cepoch, s.plog, s.pst, s.held, s.lag, s.gc, s.hangs, s.retries, s.losses, s.failovers, s.appendFails, s.action)!ZombieFenced
\* @type: ($vals) => Bool;
NoDuplicatesIn(s) == InState(s.net, s.cl, s.tc, s.tlog, s.cepoch, s.plog, s.pst, s.held, s.lag, s.gc, s.hangs, s.retries, s.losses, s.failovers, s.appendFails, s.action)!NoDuplicates
\* @type: ($vals) => Bool;
InSequenceIn(s) == InState(s.net, s.cl, s.tc, s.tlog, s.cepoch, s.plog, s.pst, s.held, s.lag, s.gc, s.hangs, s.retries, s.losses, s.failovers, s.appendFails, s.action)!InSequence
\* @type: ($vals) => Bool;
AtomicityNowIn(s) == InState(s.net, s.cl, s.tc, s.tlog, s.cepoch, s.plog, s.pst, s.held, s.lag, s.gc, s.hangs, s.retries, s.losses, s.failovers, s.appendFails, s.action)!AtomicityNow
\* @type: ($vals) => Bool;
AtomicityWhenQuiescentIn(s) == InState(s.net, s.cl, s.tc, s.tlog, s.cepoch, s.plog, s.pst, s.held, s.lag, s.gc, s.hangs, s.retries, s.losses, s.failovers, s.appendFails, s.action)!AtomicityWhenQuiescent
\* @type: ($vals) => Bool;
ReadCommittedIn(s) == InState(s.net, s.cl, s.tc, s.tlog, s.cepoch, s.plog, s.pst, s.held, s.lag, s.gc, s.hangs, s.retries, s.losses, s.failovers, s.appendFails, s.action)!ReadCommitted
\* @type: ($vals) => Bool;
NoHangingTransactionIn(s) == InState(s.net, s.cl, s.tc, s.tlog, s.cepoch, s.plog, s.pst, s.held, s.lag, s.gc, s.hangs, s.retries, s.losses, s.failovers, s.appendFails, s.action)!NoHangingTransaction
\* @type: ($vals) => Bool;
ProducerStateInLogIn(s) == InState(s.net, s.cl, s.tc, s.tlog, s.cepoch, s.plog, s.pst, s.held, s.lag, s.gc, s.hangs, s.retries, s.losses, s.failovers, s.appendFails, s.action)!ProducerStateInLog

\* The same agreement on each step of a model, with what the trace checker
\* passes: the state before's log lengths and its other variables.
SinceStep ==
    \E s \in {[net |-> net', cl |-> cl', tc |-> tc', tlog |-> tlog', cepoch |-> cepoch', plog |-> plog', pst |-> pst',
               held |-> held', lag |-> lag', gc |-> gc', hangs |-> hangs', retries |-> retries', losses |-> losses',
               failovers |-> failovers', appendFails |-> appendFails', action |-> action']} :
    \* (each value named once, as in SinceFormsAgree; a name ending in Next: its value in the state after)
    LET pf == Kept(plog, plog')
        tf == Kept(tlog, tlog')
        before == IndexOf_plog(plog)
        after == IndexOf_plog(plog')
        readCommitted == ReadCommitted
        atomicityNow == AtomicityNow
        noDuplicates == NoDuplicates
        inSequence == InSequence
        producerStateInLog == ProducerStateInLog
        readCommittedNext == ReadCommittedIn(s)
        atomicityNowNext == AtomicityNowIn(s)
        noDuplicatesNext == NoDuplicatesIn(s)
        inSequenceNext == InSequenceIn(s)
        producerStateInLogNext == ProducerStateInLogIn(s)
    IN /\ TxnStateMachine => (TxnStateMachineIn(s) <=> TxnStateMachineSince(tlog', tf))
       /\ MarkerSafety => (MarkerSafetyIn(s) <=> MarkerSafetySince(plog', pf))
       /\ ZombieFenced => (ZombieFencedIn(s) <=> ZombieFencedSince(plog', pf))
       /\ noDuplicates => (noDuplicatesNext <=> NoDuplicatesSince(plog', pf))
       /\ inSequence => (inSequenceNext <=> InSequenceSince(plog', pf))
       /\ atomicityNow => (atomicityNowNext <=> AtomicityNowSince(plog', pf))
       /\ readCommitted => (readCommittedNext <=> ReadCommittedSince(plog', pf))
       /\ NoHangingTransaction => (NoHangingTransactionIn(s) <=> NoHangingTransactionSince(tlog', tf, plog', pf))
       /\ producerStateInLog => (producerStateInLogNext <=> ProducerStateInLogSince(plog', pf, pst', pst))
       \* (as the trace checker keeps the index: from the state before's)
       /\ IndexOf_plogSince(plog', pf, before) = after
       /\ IndexOf_tlogSince(tlog', tf, IndexOf_tlog(tlog)) = IndexOf_tlog(tlog')
       /\ readCommitted => (readCommittedNext <=> ReadCommittedSinceIndexed(plog', pf, before, after))
       /\ AtomicityWhenQuiescentIn(s) <=> AtomicityWhenQuiescentSinceIndexed(net', net, tc', tc, plog', pf, before, after)
       /\ atomicityNow => (atomicityNowNext <=> AtomicityNowSinceIndexed(plog', pf, before, after))
       /\ noDuplicates => (noDuplicatesNext <=> NoDuplicatesSinceIndexed(plog', pf, before, after))
       /\ inSequence => (inSequenceNext <=> InSequenceSinceIndexed(plog', pf, before, after))
       /\ producerStateInLog =>
             (producerStateInLogNext <=> ProducerStateInLogSinceIndexed(plog', pf, before, after, pst', pst))

SinceFormsAgreeOnSteps == [][SinceStep]_vars

\* The claim the trace checker rests on (trace_check/traces/protocol.py,
\* Protocol.logs): a step only appends at a log's end or cuts it back to a
\* prefix. It compares a log before and after a step by its lengths alone,
\* and Kept gives the XSince forms the length before as the part unchanged.
\* @type: (a -> Seq(b), a -> Seq(b)) => Bool;
GrowsOrIsCut(before, after) ==
    /\ DOMAIN after = DOMAIN before
    /\ \A k \in DOMAIN before :
          IF Len(after[k]) >= Len(before[k])
          THEN SubSeq(after[k], 1, Len(before[k])) = before[k]
          ELSE after[k] = SubSeq(before[k], 1, Len(after[k]))

LogsGrowOrAreCut == [][GrowsOrIsCut(plog, plog') /\ GrowsOrIsCut(tlog, tlog')]_vars

=============================================================================
