--------------------------- MODULE TraceYdbTopics ---------------------------
(***************************************************************************)
(* Trace validation for YdbTopics: is a recorded run (a trace of the       *)
(* reference engine, ref_impl/ydb, or of any system that logs the same     *)
(* events) a behaviour of the spec?                                        *)
(*                                                                         *)
(* Event l names the step as the spec's history variable `action` names   *)
(* it (PartitionCommit and PartitionRollback are PartitionApply; PqWrite, *)
(* PqWriteSkipped and PqWriteRefused are PqWrite; PlainWriteSkipped is    *)
(* PlainWrite; CommitOffsetStale and CommitOffsetRefused are              *)
(* CommitOffset) and logs some of the step's parameters, its `action`     *)
(* arguments, its outcome and the                                          *)
(* variables it changed.                                                   *)
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
    LET n == Len(TraceChunks)
    IN IF n = 0 THEN 0 ELSE (n - 1) * ChunkSize + Len(TraceChunks[n])

\* Event i (1-based).
\* @type: (Int) => $event;
EventAt(i) == TraceChunks[((i - 1) \div ChunkSize) + 1][((i - 1) % ChunkSize) + 1]

\* The fields of event ev. Every operator below takes the event as a parameter:
\* a definition without parameters that reads the trace makes TLC walk the whole
\* trace at startup (to learn its level), once per such reference.
\* @type: ($event) => Str;
EAction(ev) == ev[1]
\* @type: ($event) => Seq(Str);
Cols(ev) == Shapes[ev[2]][1]
\* @type: ($event) => Str;
EWorker(ev) == ev[3]
\* @type: ($event) => Str;
ETablet(ev) == ev[4]
\* @type: ($event) => Int;
ETx(ev) == ev[5]
\* @type: ($event) => Int;
EPart(ev) == ev[6]
\* @type: ($event) => Str;
EPeer(ev) == ev[7]
\* @type: ($event) => Int;
EOff(ev) == ev[8]
\* @type: ($event) => Int;
EEnd(ev) == ev[9]
\* @type: ($event) => Str;
EMessage(ev) == ev[10]
\* @type: ($event) => Str;
EDecision(ev) == ev[11]
\* @type: ($event) => Str;
ECompared(ev) == ev[12]

\* The values a parameter ranges over: the logged one, or every one.
\* @type: ($event) => Set(Str);
WorkerSet(ev) == IF EWorker(ev) = "" THEN Workers ELSE {EWorker(ev)}
\* @type: ($event) => Set(Str);
TabletSet(ev) == IF ETablet(ev) = "" THEN Tablets ELSE {ETablet(ev)}
\* @type: ($event) => Set(Int);
TxSet(ev) == IF ETx(ev) = -1 THEN Txns ELSE {ETx(ev)}
\* @type: ($event) => Set(Str);
PeerSet(ev) == IF EPeer(ev) = "" THEN Tablets ELSE {EPeer(ev)}
\* @type: ($event) => Set(Int);
EndSet(ev) == IF EEnd(ev) = -1 THEN 1..MsgsPerSrc ELSE {EEnd(ev)}
\* @type: ($event, Set(Int)) => Set(Int);
PartSet(ev, S) == IF EPart(ev) = -1 THEN S ELSE {EPart(ev)}

\* Does message m in flight agree with event ev's logged fields?
\* @type: ($event, $net) => Bool;
MsgMatches(ev, m) ==
    /\ ETx(ev) = -1 \/ m.tx = ETx(ev)
    /\ EMessage(ev) = "" \/ m.type = EMessage(ev)
    /\ ETablet(ev) = "" \/ m.to = ETablet(ev)
    /\ EPeer(ev) = "" \/ m.from = EPeer(ev)
    /\ EPart(ev) = -1 \/ m.dst = EPart(ev)
    /\ EOff(ev) = -1 \/ m.m.off = EOff(ev)
    /\ EDecision(ev) = "" \/ m.type # "RS" \/ m.dec = EDecision(ev)

\* The type of the message an event of action a takes ("": any, for Lose).
\* @type: (Str) => Str;
MessageType(a) ==
    CASE a \in {"PqWrite", "PqWriteRefused", "PqWriteSkipped", "PqWriteAckLost"} -> "Write"
      [] a = "PqReadSet"                     -> "RS"
      [] a = "PqReadSetAck"                  -> "RSAck"
      [] OTHER                               -> ""

MessageActions == {"PqWrite", "PqWriteRefused", "PqWriteSkipped", "PqWriteAckLost", "PqReadSet", "PqReadSetAck", "Lose"}

\* Is m a message event ev's step may take?
\* @type: ($event, $net) => Bool;
Takes(ev, m) == (MessageType(EAction(ev)) = "" \/ m.type = MessageType(EAction(ev))) /\ MsgMatches(ev, m)

\* The spec action that event ev's action stands for, with the event's parameters.
\* @type: ($event) => Bool;
Bound(ev) ==
    LET a == EAction(ev)
        W == WorkerSet(ev)
        T == TabletSet(ev)
        X == TxSet(ev)
    IN CASE a = "ReadBatch"       -> \E w \in W, p \in PartSet(ev, SrcParts), e \in EndSet(ev) : ReadBatch(w, p, e)
         [] a = "ReadOnlyBatch"   -> \E w \in W, p \in PartSet(ev, SrcParts), e \in EndSet(ev) : ReadOnlyBatch(w, p, e)
         [] a = "BeginWrites"     -> \E w \in W : BeginWrites(w)
         [] a = "ReadMore"        -> \E w \in W, e \in EndSet(ev) : ReadMore(w, e)
         [] a = "ReadOther"       -> \E w \in W, p \in PartSet(ev, SrcParts), e \in EndSet(ev) : ReadOther(w, p, e)
         [] a = "UpdateOffsets"   -> \E w \in W, b \in 0..MsgsPerSrc :
                                         \E e \in IF EEnd(ev) = -1 THEN 1..(MsgsPerSrc + 1) ELSE {EEnd(ev)} :
                                             UpdateOffsets(w, b, e)
         [] a = "PlainRead"       -> \E w \in W, p \in PartSet(ev, SrcParts), e \in EndSet(ev) : PlainRead(w, p, e)
         [] a \in {"CommitOffset", "CommitOffsetStale", "CommitOffsetRefused"} -> \E w \in W : CommitOffset(w)
         [] a = "TakeOver"        -> \E w \in W, p \in PartSet(ev, SrcParts) : TakeOver(w, p)
         [] a = "TxWrite"         -> \E w \in W, g \in Writers : TxWrite(w, g)
         [] a = "NonTxWrite"      -> \E w \in W : NonTxWrite(w)
         [] a = "OtherProducerWrite" -> \E w \in W : OtherProducerWrite(w)
         [] a \in {"PlainWrite", "PlainWriteSkipped"} ->
                \E q \in PlainProducers, o \in IF EOff(ev) = -1 THEN AppOffsets ELSE {EOff(ev)} : PlainWrite(q, o)
         [] a = "Resend"          -> \E w \in W : Resend(w)
         [] a = "ForceClose"      -> \E w \in W : ForceClose(w)
         [] a = "TableWrite"      -> \E w \in W : TableWrite(w)
         [] a = "Flush"           -> \E w \in W : Flush(w)
         [] a = "CommitTx"        -> \E w \in W : CommitTx(w)
         [] a = "RollbackTx"      -> \E w \in W : RollbackTx(w)
         [] a = "Hang"            -> \E w \in W : Hang(w)
         [] a = "Resume"          -> \E w \in W : Resume(w)
         [] a = "KqpResult"       -> \E tx \in X : KqpResult(tx)
         [] a = "CoordPlan"       -> \E tx \in X : CoordPlan(tx)
         [] a = "PlanDeadline"    -> \E tx \in X : PlanDeadline(tx)
         [] a = "PqLockLost"      -> \E tx \in X : PqLockLost(tx)
         [] a = "LockLost"        -> \E tx \in X : LockLost(tx)
         [] a = "PqWrite"         -> \E m \in net : Takes(ev, m) /\ PqWrite(m)
         [] a = "PqWriteRefused"  -> \E m \in net : Takes(ev, m) /\ PqWrite(m)
         [] a = "PqWriteSkipped"  -> \E m \in net : Takes(ev, m) /\ PqWrite(m)
         [] a = "PqWriteAckLost"  -> \E m \in net : Takes(ev, m) /\ PqWriteAckLost(m)
         [] a = "PqReadSet"       -> \E m \in net : Takes(ev, m) /\ PqReadSet(m)
         [] a = "PqReadSetAck"    -> \E m \in net : Takes(ev, m) /\ PqReadSetAck(m)
         [] a = "Lose"            -> \E m \in net : Takes(ev, m) /\ Lose(m)
         [] a = "PqPlanStep"      -> \E t \in T : PqPlanStep(t)
         [] a = "TabletRestart"   -> \E t \in T : TabletRestart(t)
         [] a = "Split"           -> \E d \in PartSet(ev, DstParts) : Split(d)
         [] a = "PqPropose"       -> \E t \in T, tx \in X : PqPropose(t, tx)
         [] a = "PqImmediate"     -> \E t \in T, tx \in X : PqImmediate(t, tx)
         [] a = "Expire"          -> \E t \in T, tx \in X : Expire(t, tx)
         [] a = "PqCalc"          -> \E t \in T, tx \in X : PqCalc(t, tx)
         [] a = "PqExecute"       -> \E t \in T, tx \in X : PqExecute(t, tx)
         [] a = "PqTxDone"        -> \E t \in T, tx \in X : PqTxDone(t, tx)
         [] a = "PqDelete"        -> \E t \in T, tx \in X : PqDelete(t, tx)
         [] a = "PartitionCommit" -> \E t \in T, tx \in X, k \in PartSet(ev, PartIds) : PartitionApply(t, tx, k)
         [] a = "PartitionRollback" -> \E t \in T, tx \in X, k \in PartSet(ev, PartIds) : PartitionApply(t, tx, k)
         [] a = "PqResendReadSet" -> \E t \in T, tx \in X, q \in PeerSet(ev) : PqResendReadSet(t, tx, q)
         [] OTHER                 -> FALSE

\* The step event ev names: its spec action, and the name `action` gives the step.
\* @type: ($event) => Bool;
Step(ev) == Bound(ev) /\ action'.name = EAction(ev)

-----------------------------------------------------------------------------
(* The compared columns: the spec's value of each, for the step just taken *)

\* @type: (Str) => Int;
Arg(k) == action'.args[k]
Actor == action'.actor
ArgTx == Arg("txn_id")
\* The message the step took out of the network (a lost write: the first of those its
\* broken stream lost), and the one it sent.
Taken == CHOOSE m \in net \ net' : \A m2 \in net \ net' : m.m.off <= m2.m.off
Sent == CHOOSE m \in net' \ net : TRUE

\* Why participant t's check of tx fails (before the step), in the trace's words
\* (ref_impl/ydb/trace.py): the range's begin is ahead of the committed offset ("Gap"),
\* behind it ("Conflict"), or the range ends past the partition ("BehindEnd"); a
\* supportive partition was deleted or never created, its partition is inactive after a
\* split ("Inactive"), or the producer's SeqNo does not move forward ("MinSeqNo"); the
\* table's lock is broken.
\* @type: (Str, Int) => Str;
Reason(t, tx) ==
    CASE t = "A" -> LET k == IF kqp[tx].src2 # 0 /\ RangeOk(tx, kqp[tx].src) THEN kqp[tx].src2 ELSE kqp[tx].src
                    IN IF committed[k] < RangeOn(tx, k)[1] THEN "Gap"
                       ELSE IF committed[k] > RangeOn(tx, k)[1] THEN "Conflict"
                       ELSE "BehindEnd"
      [] t = "B" -> IF \E d \in kqp[tx].dsts : sup[tx][d].st \in {"deleted", "done"}
                    THEN "WriteIdDeleted"
                    ELSE IF \E d \in kqp[tx].dsts : sup[tx][d].st = "none"
                    THEN "WriteIdMissing"
                    ELSE IF \E d \in kqp[tx].dsts : sealed[d] # -1
                    THEN "Inactive" ELSE "MinSeqNo"
      [] OTHER  -> "LocksBroken"

\* A logged column of an event of action a: the spec's value for the step.
\* @type: (Str, Str) => a;
PostVal(a, f) ==
    CASE f = "worker"           -> Actor
      [] f = "tablet"           -> IF a = "Lose" THEN Taken.to ELSE Actor
      [] f = "peer"             -> IF a = "PqResendReadSet" THEN Sent.to ELSE Taken.from
      [] f = "txn_id"           -> IF "txn_id" \in DOMAIN action'.args THEN ArgTx ELSE cl'[Actor].tx
      [] f = "partition"        -> IF a = "Lose" THEN Taken.dst ELSE Arg("partition")
      [] f = "step"             -> Arg("step")
      [] f = "offset"           -> IF a = "Lose" THEN Taken.m.off ELSE Arg("off")
      [] f = "producer"         -> CASE a = "TxWrite" -> IF "producer" \in DOMAIN action'.args THEN Arg("producer")
                                                          ELSE IF cl[Actor].shape = "write" THEN 0 ELSE cl[Actor].src
                                     [] a \in {"PlainWrite", "PlainWriteSkipped"} -> Arg("producer")
                                     [] OTHER -> Taken.m.src
      [] f = "offsets_begin"    -> Arg("b")
      [] f = "offsets_end"      -> Arg("e")
      [] f = "message"          -> Taken.type
      [] f = "result"           -> CASE a = "PqPropose" -> IF Arg("prepared") = 1 THEN "PREPARED" ELSE "REFUSED"
                                     [] a = "UpdateOffsets" /\ Arg("ok") = 1 -> "SUCCESS"
                                     [] OTHER -> told'[ArgTx]
      [] f = "reason"           -> IF (a \in {"PqCalc", "PqImmediate"} /\ Arg("commit") = 1) \/ (a = "PqPropose" /\ Arg("prepared") = 1)
                                   THEN "" ELSE Reason(Actor, ArgTx)
      [] f = "decision"         -> CASE a = "Lose"            -> Taken.dec
                                     [] a = "PqResendReadSet" -> Sent.dec
                                     [] OTHER -> IF Arg("commit") = 1 THEN "commit" ELSE "abort"
      [] f = "phase"            -> cl'[Actor].phase
      [] f = "kqp_state"        -> kqp'[ArgTx].st
      [] f = "tx_state"         -> ptx'[Actor][ArgTx].st
      [] f = "committed_offset" -> committed'[IF "partition" \in DOMAIN action'.args THEN Arg("partition") ELSE kqp[ArgTx].src]
      [] f = "log_end"          -> Len(target'[Arg("partition")])

\* Every compared column of event ev equals the spec's value.
\* @type: ($event) => Bool;
PostMatches(ev) == ToString([k \in DOMAIN Cols(ev) |-> PostVal(EAction(ev), Cols(ev)[k])]) = ECompared(ev)

\* Event ev is explained by a step of the spec.
\* @type: ($event) => Bool;
Explains(ev) == Step(ev) /\ PostMatches(ev)

TraceInit ==
    /\ Init
    /\ l = 1

TraceNext ==
    /\ l <= TraceLen
    /\ Explains(EventAt(l))
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
DiagnoseMessage(stuck) ==
    l = stuck /\ EAction(EventAt(stuck)) \in MessageActions => \E m \in net : Takes(EventAt(stuck), m)
\* @type: (Int) => Bool;
DiagnoseEnabled(stuck) == l = stuck => ENABLED Bound(EventAt(stuck))
\* @type: (Int) => Bool;
DiagnoseOutcome(stuck) == l = stuck => ENABLED Step(EventAt(stuck))
\* The compared column f, whose logged value renders as `rendered`.
\* @type: (Int, Str, Str) => Bool;
DiagnoseField(stuck, f, rendered) ==
    l = stuck => ENABLED (Step(EventAt(stuck)) /\ ToString(PostVal(EAction(EventAt(stuck)), f)) = rendered)
\* @type: (Int) => Bool;
DiagnoseReached(stuck) == l < stuck

=============================================================================
