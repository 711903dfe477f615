------------------------------ MODULE KafkaLog ------------------------------
(***************************************************************************)
(* What a partition log means to readers: the fate of each transactional  *)
(* record, the last stable offset (LSO), the aborted-transaction index,    *)
(* and what read_committed and read_uncommitted fetches return.            *)
(*                                                                         *)
(* A log is a sequence of entries; the offset of entry i is i - 1. Data    *)
(* entries are record batches (one batch per entry); marker entries are   *)
(* the COMMIT/ABORT control records the coordinator writes. Kafka:         *)
(*   - a control marker of producer P closes every record of P written     *)
(*     since P's previous marker on this partition (ProducerStateManager:  *)
(*     currentTxnFirstOffset .. marker offset);                            *)
(*   - the first unstable offset is the first offset of the earliest       *)
(*     transaction still open; the LSO is that offset, or the log end      *)
(*     when none is open (high watermark: replication is abstracted);      *)
(*   - an ABORT marker adds [producer, first offset, marker offset] to the *)
(*     aborted-transaction index;                                          *)
(*   - a read_committed fetch returns records below the LSO, and the       *)
(*     consumer drops those inside an aborted range of their producer.     *)
(* Entries carry ghost fields (gtx, endBy, zombie, src) that no broker     *)
(* reads; the invariants use them to say which client transaction a       *)
(* record or a marker belongs to.                                          *)
(***************************************************************************)
EXTENDS Integers, Sequences, FiniteSets

(*
  @typeAlias: gtx = <<Str, Int, Int>>;
  @typeAlias: entry = {kind: Str, pid: Str, epoch: Int, seq: Int, commit: Bool, cepoch: Int, gtx: $gtx, endBy: $gtx, zombie: Bool, src: Int};
  @typeAlias: aborted = {pid: Str, first: Int, last: Int};
*)
KafkaLog_typedefs == TRUE

\* @type: (Set(Int)) => Int;
MinOf(S) == CHOOSE x \in S : \A y \in S : x <= y

\* (Written through MinOf: TLC tries a set's elements in ascending order, so
\* this is linear where CHOOSE-the-greatest would be quadratic.)
\* @type: (Set(Int)) => Int;
MaxOf(S) == -MinOf({-x : x \in S})

\* @type: (Seq($entry), Int) => Bool;
IsData(log, i) == log[i].kind = "data"

\* @type: (Seq($entry), Int) => Bool;
IsMarker(log, i) == log[i].kind = "marker"

\* The least j in lo..hi with P(j), or hi + 1 when there is none
\* (lo <= hi + 1). It looks only as far as j: the log operators below use it
\* to find the entry they need without reading the whole log, which keeps
\* checking a long trace's log linear in its length. (Their first forms,
\* through sets of every entry, are in MCKafkaTxn; LogFormsAgree checks that
\* both agree.) How, for TLC: a bounded \E tries an interval's elements in
\* ascending order and stops at the first that qualifies, but a bounded
\* CHOOSE first makes the whole interval a set, so the CHOOSEs here range
\* over the blocks of B entries and over one block, not over the log.
\* @type: (Int, Int, Int => Bool) => Int;
FirstFrom(lo, hi, P(_)) ==
    LET B == 64
        Bot(b) == lo + b * B
        Top(b) == IF lo + (b + 1) * B - 1 < hi THEN lo + (b + 1) * B - 1 ELSE hi
        Has(b) == \E j \in Bot(b)..Top(b) : P(j)
        First(b) == CHOOSE j \in Bot(b)..Top(b) : P(j) /\ \A k \in Bot(b)..(j - 1) : ~P(k)
        blocks == 0..((hi - lo) \div B)
    IN \* (The first block alone first: what is looked for is most often near.)
       IF Has(0) THEN First(0)
       ELSE IF \E b \in blocks : Has(b)
       THEN First(CHOOSE b \in blocks : Has(b) /\ \A c \in 0..(b - 1) : ~Has(c))
       ELSE hi + 1

\* The greatest j in lo..hi with P(j), or lo - 1 when there is none
\* (lo <= hi + 1), searched from hi down, block by block.
\* @type: (Int, Int, Int => Bool) => Int;
LastUpTo(lo, hi, P(_)) ==
    LET B == 64
        Top(b) == hi - b * B
        Bot(b) == IF hi - (b + 1) * B + 1 > lo THEN hi - (b + 1) * B + 1 ELSE lo
        Has(b) == \E j \in Bot(b)..Top(b) : P(j)
        Last(b) == Top(b) - (CHOOSE d \in 0..(Top(b) - Bot(b)) : P(Top(b) - d) /\ \A e \in 0..(d - 1) : ~P(Top(b) - e))
        blocks == 0..((hi - lo) \div B)
    IN IF Has(0) THEN Last(0)
       ELSE IF \E b \in blocks : Has(b)
       THEN Last(CHOOSE b \in blocks : Has(b) /\ \A c \in 0..(b - 1) : ~Has(c))
       ELSE lo - 1

\* The index of the marker that closes data entry i (its producer's next
\* marker), or 0 while the record's transaction is open on this partition.
\* @type: (Seq($entry), Int) => Int;
CloserOf(log, i) ==
    LET c == FirstFrom(i + 1, Len(log), LAMBDA j : IsMarker(log, j) /\ log[j].pid = log[i].pid)
    IN IF c > Len(log) THEN 0 ELSE c

\* "committed", "aborted" or "open".
\* @type: (Seq($entry), Int) => Str;
Fate(log, i) ==
    LET c == CloserOf(log, i)
    IN IF c = 0 THEN "open" ELSE IF log[c].commit THEN "committed" ELSE "aborted"

\* The marker of entry c's producer before c (0 if none).
\* @type: (Seq($entry), Int) => Int;
PrevMarker(log, c) == LastUpTo(1, c - 1, LAMBDA j : IsMarker(log, j) /\ log[j].pid = log[c].pid)

\* The data entries marker c closes: its producer's records since the
\* producer's previous marker.
\* @type: (Seq($entry), Int) => Set(Int);
ClosedBy(log, c) == {i \in (PrevMarker(log, c) + 1)..(c - 1) : IsData(log, i) /\ log[i].pid = log[c].pid}

\* The producers that wrote to the log.
\* @type: (Seq($entry)) => Set(Str);
Producers(log) == {log[i].pid : i \in DOMAIN log}

\* The first data entry of producer P after P's last marker among the log's
\* first n entries: where P's open transaction starts in that prefix (n + 1
\* when P has none there).
\* @type: (Seq($entry), Int, Str) => Int;
FirstOpenUpTo(log, n, P) ==
    \* (P's last entry tells whether it has one: only then is its last marker
    \* looked for, which lies further back.)
    LET e == LastUpTo(1, n, LAMBDA j : log[j].pid = P)
    IN IF e < 1 \/ IsMarker(log, e) THEN n + 1
       ELSE LET last == LastUpTo(1, e - 1, LAMBDA j : IsMarker(log, j) /\ log[j].pid = P)
            IN FirstFrom(last + 1, e, LAMBDA i : IsData(log, i) /\ log[i].pid = P)

\* Has producer P an open transaction in the log: is its last entry data?
\* @type: (Seq($entry), Str) => Bool;
HasOpen(log, P) ==
    LET e == LastUpTo(1, Len(log), LAMBDA j : log[j].pid = P)
    IN e >= 1 /\ IsData(log, e)

\* The same in the whole log (Len(log) + 1 when P has no open transaction).
\* @type: (Seq($entry), Str) => Int;
FirstOpen(log, P) == FirstOpenUpTo(log, Len(log), P)

\* The last stable offset of the log's first n entries, as a 1-based index,
\* given a set `pids` that holds every producer that wrote to them (a spec
\* that knows its producers passes them, which spares reading the whole log
\* to collect them).
\* @type: (Seq($entry), Int, Set(Str)) => Int;
LSOAmong(log, n, pids) == MinOf({FirstOpenUpTo(log, n, P) : P \in pids} \cup {n + 1})

\* The last stable offset, as a 1-based index: entries before it are stable.
\* (The first offset of the earliest open transaction: the same as the least
\* data entry with no closer, computed per producer.)
\* @type: (Seq($entry)) => Int;
LSO(log) == LSOAmong(log, Len(log), Producers(log))

\* The aborted-transaction index, as Kafka's TransactionIndex keeps it
\* (AbortedTxn: producer, first offset, last offset): one range per ABORT
\* marker that closed data, from the first record it closed to the marker.
\* As a function from the marker's index to the range's first index; only
\* the ranges of markers after entry `after` (those that can hold an entry
\* after it: a range ends at its marker).
\* @type: (Seq($entry), Int) => (Int -> Int);
AbortedRangesAfter(log, after) ==
    LET closing == {c \in (after + 1)..Len(log) : IsMarker(log, c) /\ ~log[c].commit /\ ClosedBy(log, c) # {}}
    IN [c \in closing |-> MinOf(ClosedBy(log, c))]

\* @type: (Seq($entry)) => (Int -> Int);
AbortedRanges(log) == AbortedRangesAfter(log, 0)

\* The same index as a set of ranges.
\* @type: (Seq($entry)) => Set($aborted);
AbortedIndex(log) ==
    LET ranges == AbortedRanges(log)
    IN {[pid |-> log[c].pid, first |-> ranges[c], last |-> c] : c \in DOMAIN ranges}

\* Is data entry i inside an aborted range of its producer? Its producer's
\* ranges do not overlap and each ends at a marker of that producer, so the
\* only one that can hold i is the one that ends at i's closer.
\* @type: (Seq($entry), Int, Int -> Int) => Bool;
InAborted(log, i, ranges) ==
    LET c == CloserOf(log, i)
    IN c \in DOMAIN ranges /\ ranges[c] <= i

\* The data entries after entry `after` that a read_committed consumer
\* fetching from there gets, given the log's LSO (as a 1-based index): it
\* reads only from `after` on, as a broker does. `inclusive` makes the LSO
\* an inclusive bound (Redpanda's 2022 bug).
\* @type: (Seq($entry), Int, Bool, Int) => Set(Int);
ReadCommittedFetchBelow(log, after, inclusive, lso) ==
    LET ranges == AbortedRangesAfter(log, after)
    IN { i \in (after + 1)..Len(log) :
           /\ IsData(log, i)
           /\ IF inclusive THEN i <= lso ELSE i < lso
           /\ ~InAborted(log, i, ranges) }

\* The same, given every producer of the log (`pids`).
\* @type: (Seq($entry), Int, Bool, Set(Str)) => Set(Int);
ReadCommittedFetchAfter(log, after, inclusive, pids) ==
    ReadCommittedFetchBelow(log, after, inclusive, LSOAmong(log, Len(log), pids))

\* The data entries a read_committed consumer reading the whole log gets.
\* @type: (Seq($entry), Bool) => Set(Int);
ReadCommittedFetch(log, inclusive) == ReadCommittedFetchAfter(log, 0, inclusive, Producers(log))

\* The data entries a read_uncommitted consumer gets: all of them.
\* @type: (Seq($entry)) => Set(Int);
ReadUncommittedFetch(log) == {i \in DOMAIN log : IsData(log, i)}

=============================================================================
