---------------------------- MODULE KafkaTxnSince ----------------------------
(***************************************************************************)
(* The trace checker's forms of KafkaTxnProperties' invariants: each one  *)
(* checked from the state before (XSince), and the indexes of the logs    *)
(* the checker keeps beside each state (IndexOf_V) with the forms that    *)
(* read them (XSinceIndexed). Not properties: faster ways to check the    *)
(* same ones after every event of a trace. The trace specs               *)
(* (TraceKafkaTxn, TraceKafkaTxnRecords) and MCKafkaTxnForms, which       *)
(* checks each form against its invariant, extend this module.            *)
(***************************************************************************)
EXTENDS KafkaTxnProperties

(* The invariants, checked from the state before (XSince).               *)
(* XSince is invariant X given that X held in the state before. It takes, *)
(* for each variable X reads, the variable and what is known of it then:  *)
(* for a log (plog, tlog), each key's length before (a log changes only   *)
(* by entries appended at its end or by a cut back to a prefix; 0 where   *)
(* it was cut, and everywhere when nothing is known, which checks it      *)
(* all); for another variable (pst), its value before. It reads only     *)
(* what the step can have changed, so checking after every event costs   *)
(* what the new entries cost, not the whole log (trace_check/traces/      *)
(* reads.py: since_form; validation.py: changed_definitions).             *)
(* MCKafkaTxnForms checks each form against its invariant on every prefix *)
(* of the logs (SinceFormsAgree) and on every step (SinceFormsAgreeOn-    *)
(* Steps) of eleven models (tests/test_spec_forms.py).                    *)

\* @type: (Str -> Seq($tentry), Str -> Int) => Bool;
TxnStateMachineSince(logs, from) ==
    \A t \in DOMAIN logs :
        \A k \in (from[t] + 1)..Len(logs[t]) :
            IF k = 1 THEN logs[t][1].st = "Empty"
            ELSE /\ LegalTransition(logs[t][k - 1].st, logs[t][k].st)
                 /\ logs[t][k - 1].epoch <= logs[t][k].epoch

\* (Whether t hangs on p reads only t's coordinator log and t's entries on
\* p: only the pairs where one of them grew can change.)
\* @type: (Str -> Seq($tentry), Str -> Int, Int -> Seq($entry), Int -> Int) => Bool;
NoHangingTransactionSince(tl, tfrom, pl, pfrom) ==
    \A p \in DOMAIN pl, t \in DOMAIN tl :
        (tfrom[t] < Len(tl[t]) \/ \E j \in (pfrom[p] + 1)..Len(pl[p]) : pl[p][j].pid = t) => NotHanging(tl, pl, p, t)

\* (Whether t's state on p is in the log reads t's state and t's entries on
\* p: only the pairs where one of them changed, or where the log was cut,
\* can change.)
\* @type: (Int -> Seq($entry), Int -> Int, Int -> (Str -> $pstate), Int -> (Str -> $pstate)) => Bool;
ProducerStateInLogSince(pl, from, ps, before) ==
    \A p \in DOMAIN pl : \A t \in DOMAIN ps[p] :
        (from[p] = 0 \/ ps[p][t] # before[p][t] \/ \E j \in (from[p] + 1)..Len(pl[p]) : pl[p][j].pid = t) =>
            StateInLog(pl, ps, p, t)

\* (A marker's safety reads only the entries before it.)
\* @type: (Int -> Seq($entry), Int -> Int) => Bool;
MarkerSafetySince(logs, from) == \A p \in DOMAIN logs : \A c \in (from[p] + 1)..Len(logs[p]) : MarkerSafeAt(logs[p], c)

\* (A record's fate changes only when a marker closes it, and a new record
\* is open: only the records a new COMMIT marker closes can break it.)
\* @type: (Int -> Seq($entry), Int -> Int) => Bool;
ZombieFencedSince(logs, from) ==
    \A p \in DOMAIN logs : \A c \in (from[p] + 1)..Len(logs[p]) :
        IsMarker(logs[p], c) /\ logs[p][c].commit => \A i \in ClosedBy(logs[p], c) : ~logs[p][i].zombie

\* (A new record must not repeat an earlier one; earlier ones held.)
\* @type: (Int -> Seq($entry), Int -> Int) => Bool;
NoDuplicatesSince(logs, from) ==
    \A p \in DOMAIN logs :
        LET log == logs[p]
        IN \A j \in (from[p] + 1)..Len(log) :
               IsData(log, j) =>
                   LET g == log[j].gtx
                       s == log[j].seq
                   IN ~\E i \in 1..(j - 1) : log[i].gtx = g /\ IsData(log, i) /\ (Batches > 1 => log[i].seq = s)

\* (Given the prefix in sequence, a new batch is in sequence when its
\* sequence is one more than that of its producer epoch's batch before it,
\* or 0 when it is the epoch's first: the epoch's sequences then stay 0, 1,
\* 2, ... with none twice.)
\* @type: (Int -> Seq($entry), Int -> Int) => Bool;
InSequenceSince(logs, from) ==
    \A p \in DOMAIN logs :
        LET log == logs[p]
        IN \A j \in (from[p] + 1)..Len(log) :
               IsData(log, j) =>
                   LET b == LastUpTo(1, j - 1, LAMBDA i : IsData(log, i) /\ log[i].pid = log[j].pid
                                                       /\ log[i].epoch = log[j].epoch)
                   IN IF log[j].seq = 0 THEN b < 1 ELSE b >= 1 /\ log[b].seq = log[j].seq - 1

\* (Fates change only where a new marker closes records: each record it
\* closes, committed or aborted, must have no record of its transaction,
\* in any log, with the other fate.)
\* @type: (Int -> Seq($entry), Int -> Int) => Bool;
AtomicityNowSince(logs, from) ==
    \A p \in DOMAIN logs :
        LET log == logs[p]
        IN \A c \in (from[p] + 1)..Len(log) :
               IsMarker(log, c) =>
                   LET other == IF log[c].commit THEN "aborted" ELSE "committed"
                       closed == {log[i].gtx : i \in ClosedBy(log, c)}
                   IN \A q \in DOMAIN logs :
                          LET lq == logs[q]
                          IN \A k \in 1..Len(lq) : lq[k].gtx \in closed /\ IsData(lq, k) => Fate(lq, k) # other

\* (An entry below the prefix's LSO was decided within the prefix, and
\* whether a read_committed fetch returns it has not changed: only entries
\* from the prefix's LSO on need a look.)
\* @type: (Int -> Seq($entry), Int -> Int) => Bool;
ReadCommittedSince(logs, from) ==
    \A p \in DOMAIN logs :
        from[p] < Len(logs[p]) =>
            LET log == logs[p]
                lo == LSOAmong(log, from[p], TxnIds)
            IN \A i \in ReadCommittedFetchAfter(log, lo - 1, Bug("lso_inclusive"), TxnIds) : Fate(log, i) = "committed"

-----------------------------------------------------------------------------
(* An index of each partition log, kept beside the state by the trace    *)
(* checker (trace_check/traces/validation.py: changed_definitions): where *)
(* each producer's open transaction starts, and which client transactions *)
(* have a committed record in the log. It is updated from a step's new    *)
(* entries alone (IndexOf_plogSince), so that the forms below, checked    *)
(* after every event, read neither a whole log nor every producer: at     *)
(* 90,000 events of a faulty run, finding the LSO from the log (one       *)
(* backward search per transactional.id) and AtomicityWhenQuiescent from  *)
(* every record took nine tenths of a check after every event             *)
(* (docs/benchmarks.md, "Long traces"). MCKafkaTxnForms checks the index  *)
(* against IndexOf_plog, and each XSinceIndexed against X, on every       *)
(* prefix and every step of its models.                                   *)
(*   open[P]: the first record of producer P's open transaction (its     *)
(*     first data entry after its last marker), for each P that has one;  *)
(*   committed[t][g]: TRUE for each client transaction g, with g[1] = t, *)
(*     that has a committed record in the log; aborted[t][g], the same    *)
(*     for an aborted record;                                             *)
(*   epochs[P][e]: TRUE for each producer epoch e in which producer P has *)
(*     a record in the log. A search for the record of an epoch that has  *)
(*     none reads the whole log back; the index says where not to search  *)
(*     (InSequence and ProducerStateInLog look for a producer epoch's     *)
(*     last record, and each new transaction starts a new epoch under     *)
(*     TV2: at 90,000 events these searches were three quarters of the    *)
(*     evaluations TLC's -coverage counted, though little of its time,    *)
(*     docs/benchmarks.md).                                               *)

(*
  @typeAlias: lindex = {open: Str -> Int, committed: Str -> ($gtx -> Bool), aborted: Str -> ($gtx -> Bool), epochs: Str -> (Int -> Bool)};
*)
KafkaTxnProperties_typedefs == TRUE

\* @type: $lindex;
EmptyLogIndex == [open |-> [P \in {} |-> 0], committed |-> [t \in {} |-> [g \in {} |-> TRUE]],
                  aborted |-> [t \in {} |-> [g \in {} |-> TRUE]], epochs |-> [P \in {} |-> [e \in {} |-> TRUE]]]

\* Pairs <<a, b>> added to `known`: known[a][b] = TRUE for each. (One
\* small function per a, not one set of every pair: TLC copies a value it
\* extends, so a step costs what one producer has, not what all have.)
\* @type: (a -> (b -> Bool), Set(<<a, b>>)) => (a -> (b -> Bool));
WithPairs(known, pairs) ==
    LET Leaf(a) ==
            LET new == [b \in {k[2] : k \in {x \in pairs : x[1] = a}} |-> TRUE]
            IN IF a \notin DOMAIN known THEN new
               ELSE IF DOMAIN new = {} THEN known[a] ELSE known[a] @@ new
    IN IF pairs = {} THEN known ELSE [a \in DOMAIN known \cup {k[1] : k \in pairs} |-> Leaf(a)]

\* A set of client transactions added to `known` (committed or aborted).
\* @type: (Str -> ($gtx -> Bool), Set($gtx)) => (Str -> ($gtx -> Bool));
WithGtxs(known, keys) == WithPairs(known, {<<k[1], k>> : k \in keys})

\* Has producer P a record of epoch e in the log of index idx?
\* @type: ($lindex, Str, Int) => Bool;
HasEpoch(idx, P, e) == P \in DOMAIN idx.epochs /\ e \in DOMAIN idx.epochs[P]

\* The index of the log's first n entries, given `idx`, the index of its
\* first m (m <= n): it reads the entries after m, and a new marker's
\* records (ClosedBy), no further back.
\* @type: (Seq($entry), Int, Int, $lindex) => $lindex;
LogIndexAfter(log, m, n, idx) ==
    LET writers == {log[j].pid : j \in (m + 1)..n}
        \* P's open transaction in the first n entries starts here (0: none)
        OpenAt(P) ==
            LET e == LastUpTo(m + 1, n, LAMBDA j : log[j].pid = P)
            IN IF IsMarker(log, e) THEN 0
               ELSE LET c == LastUpTo(m + 1, e - 1, LAMBDA j : IsMarker(log, j) /\ log[j].pid = P)
                    IN IF c = m /\ P \in DOMAIN idx.open THEN idx.open[P]
                       ELSE FirstFrom(c + 1, e, LAMBDA i : IsData(log, i) /\ log[i].pid = P)
        opened == {P \in writers : OpenAt(P) # 0}
        markers == {k \in (m + 1)..n : IsMarker(log, k)}
        Closed(commit) == {log[i].gtx : i \in UNION {ClosedBy(log, c) : c \in {k \in markers : log[k].commit = commit}}}
    IN [open |-> [P \in (DOMAIN idx.open \ writers) \cup opened |-> IF P \in writers THEN OpenAt(P) ELSE idx.open[P]],
        committed |-> WithGtxs(idx.committed, Closed(TRUE)),
        aborted |-> WithGtxs(idx.aborted, Closed(FALSE)),
        epochs |-> WithPairs(idx.epochs, {<<log[j].pid, log[j].epoch>> : j \in {k \in (m + 1)..n : IsData(log, k)}})]

\* The index of each partition log.
\* @type: (Int -> Seq($entry)) => (Int -> $lindex);
IndexOf_plog(pl) == [p \in DOMAIN pl |-> LogIndexAfter(pl[p], 0, Len(pl[p]), EmptyLogIndex)]

\* The same, given `before`, the index of the logs in the state before, and
\* `from`, what the trace checker passes of them (each key's length before,
\* or 0 where the log was cut: then before[p] is not that of a prefix).
\* @type: (Int -> Seq($entry), Int -> Int, Int -> $lindex) => (Int -> $lindex);
IndexOf_plogSince(pl, from, before) ==
    [p \in DOMAIN pl |->
        IF from[p] = Len(pl[p]) /\ from[p] > 0 THEN before[p]
        ELSE LogIndexAfter(pl[p], from[p], Len(pl[p]), IF from[p] = 0 THEN EmptyLogIndex ELSE before[p])]

\* The last stable offset of a log's first n entries, from their index.
\* @type: ($lindex, Int) => Int;
LSOOfIndex(idx, n) == MinOf({idx.open[P] : P \in DOMAIN idx.open} \cup {n + 1})

\* PartitionLSO(p) (KafkaTxn), from `idx`, the index of the partition logs
\* (IndexOf_plog(plog)): a trace checker that keeps the index replaces the
\* one by the other (trace_check/traces/protocol.py, Protocol.from_index).
\* @type: (Int, Int -> $lindex) => Int;
PartitionLSOFromIndex(p, idx) == LSOOfIndex(idx[p], PlogLen(p))

\* The index of each transactional.id's __transaction_state log the trace
\* checker keeps: the instance LatestInstance names, from scratch and from
\* the state before's index and the entries after `from` (as IndexOf_plog).
\* @type: (Str -> Seq($tentry)) => (Str -> Int);
IndexOf_tlog(tl) == [t \in DOMAIN tl |-> LatestInstanceAfter(tl[t], 0, Len(tl[t]), 0)]

\* @type: (Str -> Seq($tentry), Str -> Int, Str -> Int) => (Str -> Int);
IndexOf_tlogSince(tl, from, before) ==
    [t \in DOMAIN tl |->
        IF from[t] = Len(tl[t]) /\ from[t] > 0 THEN before[t]
        ELSE LatestInstanceAfter(tl[t], from[t], Len(tl[t]), IF from[t] = 0 THEN 0 ELSE before[t])]

\* LatestInstance(t) (KafkaTxn), from `idx`, IndexOf_tlog(tlog) (a trace
\* checker puts it in its place: Protocol.from_index).
\* @type: (Str, Str -> Int) => Int;
LatestInstanceFromIndex(t, idx) == idx[t]

\* Has client transaction g a committed record in some log?
\* @type: (Int -> $lindex, $gtx) => Bool;
CommittedIn(idx, g) == \E p \in DOMAIN idx : g[1] \in DOMAIN idx[p].committed /\ g \in DOMAIN idx[p].committed[g[1]]

\* Has client transaction g an aborted record in some log?
\* @type: (Int -> $lindex, $gtx) => Bool;
AbortedIn(idx, g) == \E p \in DOMAIN idx : g[1] \in DOMAIN idx[p].aborted /\ g \in DOMAIN idx[p].aborted[g[1]]

\* (AtomicityNowSince, with the other fate looked up in the index, not in
\* every record of every log.)
\* @type: (Int -> Seq($entry), Int -> Int, Int -> $lindex, Int -> $lindex) => Bool;
AtomicityNowSinceIndexed(logs, from, before, now) ==
    \A p \in DOMAIN logs :
        LET log == logs[p]
        IN \A c \in (from[p] + 1)..Len(log) :
               IsMarker(log, c) =>
                   \A i \in ClosedBy(log, c) :
                       IF log[c].commit THEN ~AbortedIn(now, log[i].gtx) ELSE ~CommittedIn(now, log[i].gtx)

\* (ReadCommittedSince, with the LSO before and after from the index: only
\* the records that became stable in the step, from the LSO before to the
\* LSO after, need a look.)
\* @type: (Int -> Seq($entry), Int -> Int, Int -> $lindex, Int -> $lindex) => Bool;
ReadCommittedSinceIndexed(logs, from, before, now) ==
    \A p \in DOMAIN logs :
        from[p] < Len(logs[p]) =>
            LET log == logs[p]
                lo == IF from[p] = 0 THEN 1 ELSE LSOOfIndex(before[p], from[p])
                lso == LSOOfIndex(now[p], Len(log))
                hi == IF Bug("lso_inclusive") THEN lso ELSE lso - 1
                ranges == AbortedRangesAfter(log, lo - 1)
            IN \A i \in lo..(IF hi < Len(log) THEN hi ELSE Len(log)) :
                   IsData(log, i) /\ ~InAborted(log, i, ranges) => Fate(log, i) = "committed"

\* (The open records are those of each producer from where the index says
\* its open transaction starts; none may belong to a transaction with a
\* committed record anywhere.)
\* @type: (Set($msg), Set($msg), Str -> $coord, Str -> $coord, Int -> Seq($entry), Int -> Int, Int -> $lindex, Int -> $lindex) => Bool;
AtomicityWhenQuiescentSinceIndexed(n, nBefore, c, cBefore, pl, from, before, now) ==
    QuiescentIn(n, c) =>
        \A p \in DOMAIN pl : \A P \in DOMAIN now[p].open :
            \A i \in now[p].open[P]..Len(pl[p]) :
                IsData(pl[p], i) /\ pl[p][i].pid = P => ~CommittedIn(now, pl[p][i].gtx)

\* Has client transaction g a record closed by a marker in the log of index
\* idx?
\* @type: ($lindex, $gtx) => Bool;
ClosedIn(idx, g) ==
    \/ g[1] \in DOMAIN idx.committed /\ g \in DOMAIN idx.committed[g[1]]
    \/ g[1] \in DOMAIN idx.aborted /\ g \in DOMAIN idx.aborted[g[1]]

\* (NoDuplicatesSince, looking back only where an earlier record of the new
\* one's transaction can be: a record of a prefix that no marker closed is
\* open, so at or after the prefix's LSO; one that a marker closed is in the
\* index, and only then is the whole prefix read.)
\* @type: (Int -> Seq($entry), Int -> Int, Int -> $lindex, Int -> $lindex) => Bool;
NoDuplicatesSinceIndexed(logs, from, before, now) ==
    \A p \in DOMAIN logs :
        LET log == logs[p]
        IN \A j \in (from[p] + 1)..Len(log) :
               IsData(log, j) =>
                   LET g == log[j].gtx
                       s == log[j].seq
                       Same(i) == log[i].gtx = g /\ IsData(log, i) /\ (Batches > 1 => log[i].seq = s)
                       lo == IF from[p] = 0 THEN 1
                             ELSE IF ClosedIn(before[p], g) THEN 1
                             ELSE LSOOfIndex(before[p], from[p])
                   IN ~\E i \in lo..(j - 1) : Same(i)

\* (InSequenceSince, with no search for the record before a new one of a
\* producer epoch that had none: the index before says which epochs had
\* records, and the new entries before it are read.)
\* @type: (Int -> Seq($entry), Int -> Int, Int -> $lindex, Int -> $lindex) => Bool;
InSequenceSinceIndexed(logs, from, before, now) ==
    \A p \in DOMAIN logs :
        LET log == logs[p]
        IN \A j \in (from[p] + 1)..Len(log) :
               IsData(log, j) =>
                   LET P == log[j].pid
                       e == log[j].epoch
                       Same(i) == IsData(log, i) /\ log[i].pid = P /\ log[i].epoch = e
                       \* (where the log was cut, from[p] = 0, the index before
                       \* is not that of a prefix: searched as XSince does)
                       none == /\ from[p] > 0
                               /\ ~HasEpoch(before[p], P, e)
                               /\ ~\E i \in (from[p] + 1)..(j - 1) : Same(i)
                       b == IF none THEN 0 ELSE LastUpTo(1, j - 1, Same)
                   IN IF log[j].seq = 0 THEN b = 0 ELSE b > 0 /\ log[b].seq = log[j].seq - 1

\* (ProducerStateInLogSince, with the search for the current epoch's last
\* record skipped where the index of the log says the epoch has none.)
\* @type: (Int -> Seq($entry), Int -> Int, Int -> $lindex, Int -> $lindex, Int -> (Str -> $pstate), Int -> (Str -> $pstate)) => Bool;
ProducerStateInLogSinceIndexed(pl, from, before, now, ps, psBefore) ==
    \A p \in DOMAIN pl : \A t \in DOMAIN ps[p] :
        (from[p] = 0 \/ ps[p][t] # psBefore[p][t] \/ \E j \in (from[p] + 1)..Len(pl[p]) : pl[p][j].pid = t) =>
            StateInLogKnowing(pl, ps, p, t, LAMBDA e : HasEpoch(now[p], t, e))

=============================================================================
