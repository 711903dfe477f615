------------------------ MODULE TraceKafkaTxnAppends ------------------------
(***************************************************************************)
(* What a trace event says of the entries its step appended (trace format *)
(* version 2), for both trace encodings: the partition set of the entry a *)
(* TcAppend wrote to __transaction_state (column txn_partitions), and the  *)
(* offset an entry appended to a partition log took (append_offset). Each *)
(* is the value after a step, compared like the other post-state columns; *)
(* a step that appended nothing gives a value no trace can log, so an     *)
(* event that claims an append its step did not make is rejected.         *)
(*                                                                         *)
(* A module of its own, extended after KafkaTxn: TLC orders record fields *)
(* by when it first reads them (specs/README.md), and the trace modules    *)
(* are read before KafkaTxn. Reading the field `parts` here, after         *)
(* KafkaTxn, keeps the order in which TLC explores and prints states what *)
(* it was before these columns existed.                                    *)
(***************************************************************************)
EXTENDS KafkaTxn

\* The partition set of the entry the step appended to transactional.id
\* t's __transaction_state (0 is the offsets partition), or {-1} when it
\* appended none. Rebuilt element by element, so that TLC's ToString prints
\* {1, 2} and not the interval 1..2 it may have come from.
\* @type: (Str) => Set(Int);
AppendedTxnParts(t) ==
    IF t \in TxnIds /\ Len(tlog'[t]) > Len(tlog[t]) THEN {q : q \in tlog'[t][Len(tlog'[t])].parts} ELSE {-1}

\* The offset (0-based: the length of the log before it) of the entry the
\* step appended to partition p's log, or -1 when it appended none.
\* @type: (Int) => Int;
AppendOffset(p) ==
    IF p \in Parts /\ Len(plog'[p]) > Len(plog[p]) THEN PlogLen(p) ELSE -1

=============================================================================
