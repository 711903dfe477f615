--------------------------- MODULE TraceYdbTopics ---------------------------
(***************************************************************************)
(* Trace validation for YdbTopics: is a recorded run (a trace of the       *)
(* reference engine, ref_impl/ydb, or of any system that logs the same     *)
(* events) a behaviour of the spec?                                        *)
(*                                                                         *)
(* Event l names the step as the spec's history variable `action` names   *)
(* it (PartitionCommit and PartitionRollback are PartitionApply, PqWrite  *)
(* and PqWriteRefused are PqWrite) and logs some of the step's parameters, *)
(* its `action` arguments, its outcome and the variables it changed.       *)
(* TraceNext takes event l: Bound finds the spec action with the logged    *)
(* parameters (a message in flight is looked up by the fields the event   *)
(* logged), the step must be the one the event names, and every other     *)
(* logged column must equal the spec's value (PostVal). What the event     *)
(* does not log is left free: the spec decides it, and when it can decide *)
(* it in several ways, all are explored.                                   *)
(*                                                                         *)
(* Encoding (trace_check/traces/protocol.py). An event is the tuple        *)
(*   <<action, shape, worker, tablet, txn_id, partition, peer, offset,    *)
(*     offsets_end, message, decision, compared>>                          *)
(* The parameters are plain values ("" or -1: not logged). `compared` is   *)
(* what TLC's ToString prints for the tuple of the logged columns listed   *)
(* in Shapes[shape][1]; the spec side renders the same columns of its own  *)
(* step (PostVal), and the strings must be equal. ToString is TLC's.       *)
(*                                                                         *)
(* The checker (trace_check/traces/validation.py) generates a module that *)
(* extends this one and defines the trace, and reads the result:           *)
(*   a complete search of depth TraceLen + 1 -> accepted;                 *)
(*   a shallower one, of depth d            -> event d has no explanation; *)
(*   Diagnose* at l = d                     -> which part of event d fails.*)
(***************************************************************************)
EXTENDS YdbTopics, YdbTopicsProperties

(*
  @typeAlias: event = <<Str, Int, Str, Str, Int, Int, Str, Int, Int, Str, Str, Str>>;
*)
TraceYdbTopics_typedefs == TRUE

CONSTANTS
    \* The trace, in chunks of ChunkSize events (the last may be shorter):
    \* TLC re-evaluates a concatenation at every access, but not a lookup.
    \* @type: Seq(Seq($event));
    TraceChunks,
    \* @type: Int;
    ChunkSize,
    \* The compared columns of each event shape: Shapes[k] = <<columns>>.
    \* @type: Seq(<<Seq(Str)>>);
    Shapes

VARIABLE
    \* The index of the next event to explain.
    \* @type: Int;
    l

\* The number of events.
TraceLen ==
    IF TraceChunks = <<>> THEN 0
    ELSE (Len(TraceChunks) - 1) * ChunkSize + Len(TraceChunks[Len(TraceChunks)])

\* Event i (1-based).
\* @type: (Int) => $event;
EventAt(i) == TraceChunks[((i - 1) \div ChunkSize) + 1][((i - 1) % ChunkSize) + 1]

E == EventAt(l)
EAction == E[1]
Cols == Shapes[E[2]][1]
EWorker == E[3]
ETablet == E[4]
ETx == E[5]
EPart == E[6]
EPeer == E[7]
EOff == E[8]
EEnd == E[9]
EMessage == E[10]
EDecision == E[11]
ECompared == E[12]

\* The values a parameter ranges over: the logged one, or every one.
WorkerSet == IF EWorker = "" THEN Workers ELSE {EWorker}
TabletSet == IF ETablet = "" THEN Tablets ELSE {ETablet}
TxSet == IF ETx = -1 THEN Txns ELSE {ETx}
PeerSet == IF EPeer = "" THEN Tablets ELSE {EPeer}
EndSet == IF EEnd = -1 THEN 1..MsgsPerSrc ELSE {EEnd}
\* @type: (Set(Int)) => Set(Int);
PartSet(S) == IF EPart = -1 THEN S ELSE {EPart}

\* Does message m in flight agree with the event's logged fields?
\* @type: ($net) => Bool;
MsgMatches(m) ==
    /\ ETx = -1 \/ m.tx = ETx
    /\ EMessage = "" \/ m.type = EMessage
    /\ ETablet = "" \/ m.to = ETablet
    /\ EPeer = "" \/ m.from = EPeer
    /\ EPart = -1 \/ m.dst = EPart
    /\ EOff = -1 \/ m.m.off = EOff
    /\ EDecision = "" \/ m.type # "RS" \/ m.dec = EDecision

\* The type of the message an event of action a takes ("": any, for Lose).
\* @type: (Str) => Str;
MessageType(a) ==
    CASE a \in {"PqWrite", "PqWriteRefused"} -> "Write"
      [] a = "PqReadSet"                     -> "RS"
      [] a = "PqReadSetAck"                  -> "RSAck"
      [] OTHER                               -> ""

MessageActions == {"PqWrite", "PqWriteRefused", "PqReadSet", "PqReadSetAck", "Lose"}

\* @type: ($net) => Bool;
Takes(m) == (MessageType(EAction) = "" \/ m.type = MessageType(EAction)) /\ MsgMatches(m)

\* The spec action that event action a stands for, with the event's parameters.
\* @type: (Str) => Bool;
Bound(a) ==
    CASE a = "ReadBatch"       -> \E w \in WorkerSet, p \in PartSet(SrcParts), e \in EndSet : ReadBatch(w, p, e)
      [] a = "TakeOver"        -> \E w \in WorkerSet, p \in PartSet(SrcParts) : TakeOver(w, p)
      [] a = "TxWrite"         -> \E w \in WorkerSet : TxWrite(w)
      [] a = "TableWrite"      -> \E w \in WorkerSet : TableWrite(w)
      [] a = "Flush"           -> \E w \in WorkerSet : Flush(w)
      [] a = "CommitTx"        -> \E w \in WorkerSet : CommitTx(w)
      [] a = "RollbackTx"      -> \E w \in WorkerSet : RollbackTx(w)
      [] a = "Hang"            -> \E w \in WorkerSet : Hang(w)
      [] a = "Resume"          -> \E w \in WorkerSet : Resume(w)
      [] a = "KqpResult"       -> \E tx \in TxSet : KqpResult(tx)
      [] a = "CoordPlan"       -> \E tx \in TxSet : CoordPlan(tx)
      [] a = "PlanDeadline"    -> \E tx \in TxSet : PlanDeadline(tx)
      [] a = "PqLockLost"      -> \E tx \in TxSet : PqLockLost(tx)
      [] a = "LockLost"        -> \E tx \in TxSet : LockLost(tx)
      [] a = "PqWrite"         -> \E m \in net : Takes(m) /\ PqWrite(m)
      [] a = "PqWriteRefused"  -> \E m \in net : Takes(m) /\ PqWrite(m)
      [] a = "PqReadSet"       -> \E m \in net : Takes(m) /\ PqReadSet(m)
      [] a = "PqReadSetAck"    -> \E m \in net : Takes(m) /\ PqReadSetAck(m)
      [] a = "Lose"            -> \E m \in net : Takes(m) /\ Lose(m)
      [] a = "PqPlanStep"      -> \E t \in TabletSet : PqPlanStep(t)
      [] a = "TabletRestart"   -> \E t \in TabletSet : TabletRestart(t)
      [] a = "PqPropose"       -> \E t \in TabletSet, tx \in TxSet : PqPropose(t, tx)
      [] a = "Expire"          -> \E t \in TabletSet, tx \in TxSet : Expire(t, tx)
      [] a = "PqCalc"          -> \E t \in TabletSet, tx \in TxSet : PqCalc(t, tx)
      [] a = "PqExecute"       -> \E t \in TabletSet, tx \in TxSet : PqExecute(t, tx)
      [] a = "PqTxDone"        -> \E t \in TabletSet, tx \in TxSet : PqTxDone(t, tx)
      [] a = "PqDelete"        -> \E t \in TabletSet, tx \in TxSet : PqDelete(t, tx)
      [] a = "PartitionCommit" -> \E t \in TabletSet, tx \in TxSet, k \in PartSet(PartIds) : PartitionApply(t, tx, k)
      [] a = "PartitionRollback" -> \E t \in TabletSet, tx \in TxSet, k \in PartSet(PartIds) : PartitionApply(t, tx, k)
      [] a = "PqResendReadSet" -> \E t \in TabletSet, tx \in TxSet, q \in PeerSet : PqResendReadSet(t, tx, q)
      [] OTHER                 -> FALSE

\* The step the event names: its spec action, and the name `action` gives the step.
Step == Bound(EAction) /\ action'.name = EAction

-----------------------------------------------------------------------------
(* The compared columns: the spec's value of each, for the step just taken *)

\* @type: (Str) => Int;
Arg(k) == action'.args[k]
Actor == action'.actor
ArgTx == Arg("txn_id")
\* The message the step took out of the network, and the one it sent.
Taken == CHOOSE m \in net \ net' : TRUE
Sent == CHOOSE m \in net' \ net : TRUE

\* Why participant t's check of tx fails (before the step), in the trace's words
\* (ref_impl/ydb/trace.py): the range's begin is ahead of the committed offset ("Gap"),
\* behind it ("Conflict"), or the range ends past the partition ("BehindEnd"); a
\* supportive partition was deleted or never created; the table's lock is broken.
\* @type: (Str, Int) => Str;
Reason(t, tx) ==
    CASE t = "A" -> IF committed[kqp[tx].src] < kqp[tx].b THEN "Gap"
                    ELSE IF committed[kqp[tx].src] > kqp[tx].b THEN "Conflict"
                    ELSE "BehindEnd"
      [] t = "B" -> IF \E d \in kqp[tx].dsts : sup[tx][d].st \in {"deleted", "done"}
                    THEN "WriteIdDeleted" ELSE "WriteIdMissing"
      [] OTHER  -> "LocksBroken"

\* A logged column: the spec's value for the step.
\* @type: (Str) => a;
PostVal(f) ==
    CASE f = "worker"           -> Actor
      [] f = "tablet"           -> IF EAction = "Lose" THEN Taken.to ELSE Actor
      [] f = "peer"             -> IF EAction = "PqResendReadSet" THEN Sent.to ELSE Taken.from
      [] f = "txn_id"           -> IF "txn_id" \in DOMAIN action'.args THEN ArgTx ELSE cl'[Actor].tx
      [] f = "partition"        -> IF EAction = "Lose" THEN Taken.dst ELSE Arg("partition")
      [] f = "step"             -> Arg("step")
      [] f = "offset"           -> IF EAction = "Lose" THEN Taken.m.off ELSE Arg("off")
      [] f = "offsets_begin"    -> Arg("b")
      [] f = "offsets_end"      -> Arg("e")
      [] f = "message"          -> Taken.type
      [] f = "result"           -> IF EAction = "PqPropose"
                                   THEN IF Arg("prepared") = 1 THEN "PREPARED" ELSE "REFUSED"
                                   ELSE told'[ArgTx]
      [] f = "reason"           -> IF (EAction = "PqCalc" /\ Arg("commit") = 1) \/ (EAction = "PqPropose" /\ Arg("prepared") = 1)
                                   THEN "" ELSE Reason(Actor, ArgTx)
      [] f = "decision"         -> CASE EAction = "Lose"            -> Taken.dec
                                     [] EAction = "PqResendReadSet" -> Sent.dec
                                     [] OTHER -> IF Arg("commit") = 1 THEN "commit" ELSE "abort"
      [] f = "phase"            -> cl'[Actor].phase
      [] f = "kqp_state"        -> kqp'[ArgTx].st
      [] f = "tx_state"         -> ptx'[Actor][ArgTx].st
      [] f = "committed_offset" -> committed'[IF "partition" \in DOMAIN action'.args THEN Arg("partition") ELSE kqp[ArgTx].src]
      [] f = "log_end"          -> Len(target'[Arg("partition")])

PostMatches == ToString([k \in DOMAIN Cols |-> PostVal(Cols[k])]) = ECompared

TraceInit ==
    /\ Init
    /\ l = 1

TraceNext ==
    /\ l <= TraceLen
    /\ Step
    /\ PostMatches
    /\ l' = l + 1

TraceSpec == TraceInit /\ [][TraceNext]_<<vars, l>>

-----------------------------------------------------------------------------
(* What the checker asks TLC *)

\* Violated exactly when every event has been explained (for engines that
\* do not report the depth of a complete search).
TraceAccepted == l <= TraceLen

\* A spec invariant, checked at the end of the trace only.
\* @type: (Bool) => Bool;
AtEnd(inv) == l > TraceLen => inv

\* Diagnosis of the event at index stuck, the deepest one no behaviour
\* explained (the checker learns it from a first run). The first of these to
\* fail names the failing part; its trace ends in the state before the event.
\* @type: (Int) => Bool;
DiagnoseMessage(stuck) == l = stuck /\ EAction \in MessageActions => \E m \in net : Takes(m)
\* @type: (Int) => Bool;
DiagnoseEnabled(stuck) == l = stuck => ENABLED Bound(EAction)
\* @type: (Int) => Bool;
DiagnoseOutcome(stuck) == l = stuck => ENABLED Step
\* The compared column f, whose logged value renders as `rendered`.
\* @type: (Int, Str, Str) => Bool;
DiagnoseField(stuck, f, rendered) == l = stuck => ENABLED (Step /\ ToString(PostVal(f)) = rendered)
\* @type: (Int) => Bool;
DiagnoseReached(stuck) == l < stuck

=============================================================================
