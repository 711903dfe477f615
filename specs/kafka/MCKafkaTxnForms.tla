--------------------------- MODULE MCKafkaTxnForms ---------------------------
(***************************************************************************)
(* The invariants' forms checked from a prefix (KafkaTxnProperties:       *)
(* XSince) against the invariants themselves, on the states of MCKafkaTxn *)
(* models (tests/test_spec_forms.py). For TLC only: it evaluates the       *)
(* invariants on a prefix of the logs through a parametrized INSTANCE,     *)
(* which Apalache does not take, so MCKafkaTxn stays free of it.           *)
(***************************************************************************)
EXTENDS MCKafkaTxn

\* KafkaTxnProperties with other logs in place of plog and tlog.
WithLogs(pl, tl) == INSTANCE KafkaTxnProperties WITH plog <- pl, tlog <- tl

\* The prefixes of logs the trace checker passes: the whole of every log
\* but one (a step appends to one log), and nothing of any.
\* @type: (a -> Seq(b)) => Set(a -> Int);
Prefixes(logs) ==
    {[k \in DOMAIN logs |-> 0]}
    \cup UNION {{[k \in DOMAIN logs |-> IF k = j THEN n ELSE Len(logs[k])] : n \in 0..Len(logs[j])} : j \in DOMAIN logs}

\* @type: (a -> Seq(b), a -> Int) => (a -> Seq(b));
Cut(logs, from) == [k \in DOMAIN logs |-> SubSeq(logs[k], 1, from[k])]

\* Each invariant's form checked from a prefix (KafkaTxnProperties: XSince)
\* agrees with the invariant wherever the invariant held on the prefix
\* (tests/test_spec_forms.py checks it on the models of LogFormsAgree).
SinceFormsAgree ==
    /\ \A from \in Prefixes(tlog) :
          WithLogs(plog, Cut(tlog, from))!TxnStateMachine => (TxnStateMachine <=> TxnStateMachineSince(tlog, from))
    /\ \A from \in Prefixes(plog) :
          /\ WithLogs(Cut(plog, from), tlog)!MarkerSafety => (MarkerSafety <=> MarkerSafetySince(plog, from))
          /\ WithLogs(Cut(plog, from), tlog)!ZombieFenced => (ZombieFenced <=> ZombieFencedSince(plog, from))
          /\ WithLogs(Cut(plog, from), tlog)!NoDuplicates => (NoDuplicates <=> NoDuplicatesSince(plog, from))
          /\ WithLogs(Cut(plog, from), tlog)!InSequence => (InSequence <=> InSequenceSince(plog, from))
          /\ WithLogs(Cut(plog, from), tlog)!AtomicityNow => (AtomicityNow <=> AtomicityNowSince(plog, from))
          /\ WithLogs(Cut(plog, from), tlog)!ReadCommitted => (ReadCommitted <=> ReadCommittedSince(plog, from))
    \* (The index of a prefix updated with the entries after it is the index
    \* of the logs, and the forms that read it agree with their invariants.)
    /\ \A from \in Prefixes(tlog) : IndexOf_tlogSince(tlog, from, IndexOf_tlog(Cut(tlog, from))) = IndexOf_tlog(tlog)
    /\ \A from \in Prefixes(plog) :
          LET before == IndexOf_plog(Cut(plog, from))
          IN /\ IndexOf_plogSince(plog, from, before) = IndexOf_plog(plog)
             /\ WithLogs(Cut(plog, from), tlog)!ReadCommitted =>
                   (ReadCommitted <=> ReadCommittedSinceIndexed(plog, from, before, IndexOf_plog(plog)))
             /\ AtomicityWhenQuiescent <=> AtomicityWhenQuiescentSinceIndexed(net, net, tc, tc, plog, from, before, IndexOf_plog(plog))
             /\ WithLogs(Cut(plog, from), tlog)!AtomicityNow =>
                   (AtomicityNow <=> AtomicityNowSinceIndexed(plog, from, before, IndexOf_plog(plog)))
             /\ WithLogs(Cut(plog, from), tlog)!NoDuplicates =>
                   (NoDuplicates <=> NoDuplicatesSinceIndexed(plog, from, before, IndexOf_plog(plog)))
             /\ WithLogs(Cut(plog, from), tlog)!InSequence =>
                   (InSequence <=> InSequenceSinceIndexed(plog, from, before, IndexOf_plog(plog)))
             /\ WithLogs(Cut(plog, from), tlog)!ProducerStateInLog =>
                   (ProducerStateInLog <=> ProducerStateInLogSinceIndexed(plog, from, before, IndexOf_plog(plog), pst, pst))
    \* (Producer states as in this state, logs from a prefix.)
    /\ \A from \in Prefixes(plog) :
          WithLogs(Cut(plog, from), tlog)!ProducerStateInLog => (ProducerStateInLog <=> ProducerStateInLogSince(plog, from, pst, pst))
    /\ \A tfrom \in Prefixes(tlog), pfrom \in Prefixes(plog) :
          WithLogs(Cut(plog, pfrom), Cut(tlog, tfrom))!NoHangingTransaction =>
              (NoHangingTransaction <=> NoHangingTransactionSince(tlog, tfrom, plog, pfrom))

\* The index of each partition log (KafkaTxnProperties: IndexOf_plog) is
\* what it says: the producers with an open transaction and where it
\* starts (KafkaLog's FirstOpen), and the transactions with a committed
\* record and with an aborted one, and the producer epochs with a record;
\* and the LSO found through it is the partition's (PartitionLSOFromIndex);
\* the index of __transaction_state names LatestInstance.
IndexMeans ==
    \A p \in DOMAIN plog :
          LET log == plog[p]
              idx == IndexOf_plog(plog)[p]
          IN /\ DOMAIN idx.open = {P \in Producers(log) : HasOpen(log, P)}
             /\ \A P \in DOMAIN idx.open : idx.open[P] = FirstOpen(log, P)
             /\ \A fate \in {"committed", "aborted"} :
                   LET known == IF fate = "committed" THEN idx.committed ELSE idx.aborted
                   IN UNION {{<<t, g>> : g \in DOMAIN known[t]} : t \in DOMAIN known}
                        = {<<log[i].gtx[1], log[i].gtx>> : i \in {j \in DOMAIN log : IsData(log, j) /\ Fate(log, j) = fate}}
             /\ UNION {{<<P, e>> : e \in DOMAIN idx.epochs[P]} : P \in DOMAIN idx.epochs}
                   = {<<log[i].pid, log[i].epoch>> : i \in {j \in DOMAIN log : IsData(log, j)}}
             /\ PartitionLSOFromIndex(p, IndexOf_plog(plog)) = PartitionLSO(p)
    /\ \A t \in DOMAIN tlog : LatestInstanceFromIndex(t, IndexOf_tlog(tlog)) = LatestInstance(t)

\* What the trace checker passes for a log after a step from `before` to
\* `after`: each key's length before, or 0 where the log got shorter.
\* @type: (a -> Seq(b), a -> Seq(b)) => (a -> Int);
Kept(before, after) == [k \in DOMAIN after |-> IF k \in DOMAIN before /\ Len(after[k]) >= Len(before[k]) THEN Len(before[k]) ELSE 0]

\* The same agreement on each step of a model, with what the trace checker
\* passes: the state before's log lengths and its other variables.
SinceStep ==
    LET pf == Kept(plog, plog')
        tf == Kept(tlog, tlog')
    IN /\ TxnStateMachine => (TxnStateMachine' <=> TxnStateMachineSince(tlog', tf))
       /\ MarkerSafety => (MarkerSafety' <=> MarkerSafetySince(plog', pf))
       /\ ZombieFenced => (ZombieFenced' <=> ZombieFencedSince(plog', pf))
       /\ NoDuplicates => (NoDuplicates' <=> NoDuplicatesSince(plog', pf))
       /\ InSequence => (InSequence' <=> InSequenceSince(plog', pf))
       /\ AtomicityNow => (AtomicityNow' <=> AtomicityNowSince(plog', pf))
       /\ ReadCommitted => (ReadCommitted' <=> ReadCommittedSince(plog', pf))
       /\ NoHangingTransaction => (NoHangingTransaction' <=> NoHangingTransactionSince(tlog', tf, plog', pf))
       /\ ProducerStateInLog => (ProducerStateInLog' <=> ProducerStateInLogSince(plog', pf, pst', pst))
       \* (as the trace checker keeps the index: from the state before's)
       /\ IndexOf_plogSince(plog', pf, IndexOf_plog(plog)) = IndexOf_plog(plog')
       /\ IndexOf_tlogSince(tlog', tf, IndexOf_tlog(tlog)) = IndexOf_tlog(tlog')
       /\ ReadCommitted => (ReadCommitted' <=> ReadCommittedSinceIndexed(plog', pf, IndexOf_plog(plog), IndexOf_plog(plog')))
       /\ AtomicityWhenQuiescent' <=> AtomicityWhenQuiescentSinceIndexed(net', net, tc', tc, plog', pf, IndexOf_plog(plog), IndexOf_plog(plog'))
       /\ AtomicityNow => (AtomicityNow' <=> AtomicityNowSinceIndexed(plog', pf, IndexOf_plog(plog), IndexOf_plog(plog')))
       /\ NoDuplicates => (NoDuplicates' <=> NoDuplicatesSinceIndexed(plog', pf, IndexOf_plog(plog), IndexOf_plog(plog')))
       /\ InSequence => (InSequence' <=> InSequenceSinceIndexed(plog', pf, IndexOf_plog(plog), IndexOf_plog(plog')))
       /\ ProducerStateInLog =>
             (ProducerStateInLog' <=> ProducerStateInLogSinceIndexed(plog', pf, IndexOf_plog(plog), IndexOf_plog(plog'), pst', pst))

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
