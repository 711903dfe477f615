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

\* The index of the marker that closes data entry i (its producer's next
\* marker), or 0 while the record's transaction is open on this partition.
\* @type: (Seq($entry), Int) => Int;
CloserOf(log, i) ==
    LET later == {j \in DOMAIN log : j > i /\ IsMarker(log, j) /\ log[j].pid = log[i].pid}
    IN IF later = {} THEN 0 ELSE MinOf(later)

\* "committed", "aborted" or "open".
\* @type: (Seq($entry), Int) => Str;
Fate(log, i) ==
    LET c == CloserOf(log, i)
    IN IF c = 0 THEN "open" ELSE IF log[c].commit THEN "committed" ELSE "aborted"

\* The marker of entry c's producer before c (0 if none).
\* @type: (Seq($entry), Int) => Int;
PrevMarker(log, c) ==
    LET before == {j \in 1..(c - 1) : IsMarker(log, j) /\ log[j].pid = log[c].pid}
    IN IF before = {} THEN 0 ELSE MaxOf(before)

\* The data entries marker c closes: its producer's records since the
\* producer's previous marker.
\* @type: (Seq($entry), Int) => Set(Int);
ClosedBy(log, c) == {i \in (PrevMarker(log, c) + 1)..(c - 1) : IsData(log, i) /\ log[i].pid = log[c].pid}

\* The producers that wrote to the log.
\* @type: (Seq($entry)) => Set(Str);
Producers(log) == {log[i].pid : i \in DOMAIN log}

\* The first data entry of producer P after P's last marker: where P's open
\* transaction starts (Len(log) + 1 when P has none).
\* @type: (Seq($entry), Str) => Int;
FirstOpen(log, P) ==
    LET markers == {j \in DOMAIN log : IsMarker(log, j) /\ log[j].pid = P}
        last == IF markers = {} THEN 0 ELSE MaxOf(markers)
        open == {i \in (last + 1)..Len(log) : IsData(log, i) /\ log[i].pid = P}
    IN IF open = {} THEN Len(log) + 1 ELSE MinOf(open)

\* The last stable offset, as a 1-based index: entries before it are stable.
\* (The first offset of the earliest open transaction: the same as the least
\* data entry with no closer, computed per producer.)
\* @type: (Seq($entry)) => Int;
LSO(log) ==
    LET firsts == {FirstOpen(log, P) : P \in Producers(log)}
    IN IF firsts = {} THEN Len(log) + 1 ELSE MinOf(firsts)

\* The aborted-transaction index: one range per ABORT marker that closed data.
\* @type: (Seq($entry)) => Set($aborted);
AbortedIndex(log) ==
    LET closing == {c \in DOMAIN log : IsMarker(log, c) /\ ~log[c].commit}
    IN { [pid |-> log[c].pid, first |-> MinOf(ClosedBy(log, c)), last |-> c] :
           c \in {m \in closing : ClosedBy(log, m) # {}} }

\* @type: (Seq($entry), Int, Set($aborted)) => Bool;
InAborted(log, i, index) ==
    \E a \in index : a.pid = log[i].pid /\ a.first <= i /\ i <= a.last

\* @type: (Seq($entry), Int) => Bool;
InAbortedRange(log, i) == InAborted(log, i, AbortedIndex(log))

\* The data entries a read_committed consumer reading the whole log gets.
\* `inclusive` makes the LSO an inclusive bound (Redpanda's 2022 bug).
\* @type: (Seq($entry), Bool) => Set(Int);
ReadCommittedFetch(log, inclusive) ==
    LET lso == LSO(log)
        index == AbortedIndex(log)
    IN { i \in DOMAIN log :
           /\ IsData(log, i)
           /\ IF inclusive THEN i <= lso ELSE i < lso
           /\ ~InAborted(log, i, index) }

\* The data entries a read_uncommitted consumer gets: all of them.
\* @type: (Seq($entry)) => Set(Int);
ReadUncommittedFetch(log) == {i \in DOMAIN log : IsData(log, i)}

=============================================================================
