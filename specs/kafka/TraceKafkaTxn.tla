--------------------------- MODULE TraceKafkaTxn ---------------------------
(***************************************************************************)
(* Trace validation for KafkaTxn: is a recorded run (a trace of the        *)
(* reference broker, or of any system that logs the same events) a         *)
(* behaviour of the spec?                                                  *)
(*                                                                         *)
(* The trace is the constant TraceChunks, a sequence of events (docs/      *)
(* trace-format.md). Event l names the spec action it implements and       *)
(* carries that action's parameters, the message it consumed or sent, and  *)
(* some of the variables it changed. TraceNext takes event l: it finds the *)
(* spec action with those parameters (Dispatch, in TraceKafkaTxnDispatch;  *)
(* a message is looked up in flight by the fields the event logged) and    *)
(* requires the logged post-state. What the event does not log is left     *)
(* free: the spec decides it, and when it can decide it in several ways,   *)
(* all are explored.                                                       *)
(*                                                                         *)
(* Encoding. SANY's time grows with the number of tokens in the trace, so  *)
(* an event is a short tuple:                                              *)
(*   <<action, shape, txn_id, instance, partition, text, number,           *)
(*     result, msg, post>>, and for ClientSend also sent                   *)
(* The parameters are plain values ("" or -1: not logged); text and number *)
(* are the consumer steps' parameters (Fetch: isolation, from;             *)
(* OffsetCommit: group, committed offset); sent, the eleventh element of *)
(* a ClientSend only, is the request's <<type, txn, producer_epoch, seq,  *)
(* att, commit, offset, generation>> (an open client's request is built   *)
(* from them, OpenMsg). The logged                                         *)
(* message fields and post-state fields are compared as one string each:  *)
(* `msg` is what TLC's ToString prints for the tuple of the message fields *)
(* listed in Shapes[shape][1], `post` the same for the post-state fields   *)
(* of Shapes[shape][2]. The spec side renders the same fields of its own   *)
(* message and successor state, and the strings must be equal.             *)
(* ToString is TLC's (module TLC); this module is for TLC.                 *)
(*                                                                         *)
(* The checker (trace_check/traces/validation.py) generates a module that *)
(* extends this one and defines the trace, and reads the result:           *)
(*   a complete search of depth TraceLen + 1 -> accepted;                *)
(*   a shallower one, of depth d            -> event d has no explanation; *)
(*   Diagnose* at l = d                     -> which part of event d fails.*)
(***************************************************************************)
\* KafkaTxn before KafkaTxnProperties: TLC orders strings and record fields by when it
\* first reads them, and this keeps the order it had when the invariants were in KafkaTxn
\* (specs/README.md).
EXTENDS TraceKafkaTxnDispatch, KafkaTxn, KafkaTxnProperties, KafkaTxnSince, TraceKafkaTxnAppends

(*
  @typeAlias: event = <<Str, Int, Str, Int, Int, Str, Int, Str, Str, Str>>;
*)
TraceKafkaTxn_typedefs == TRUE

CONSTANTS
    \* The trace, in chunks of ChunkSize events (the last may be shorter):
    \* TLC re-evaluates a concatenation at every access, but not a lookup.
    \* @type: Seq(Seq($event));
    TraceChunks,
    \* @type: Int;
    ChunkSize,
    \* The field lists: Shapes[k] = <<message fields, post-state fields>>.
    \* @type: Seq(<<Seq(Str), Seq(Str)>>);
    Shapes

\* The number of events.
TraceLen ==
    IF TraceChunks = <<>> THEN 0
    ELSE (Len(TraceChunks) - 1) * ChunkSize + Len(TraceChunks[Len(TraceChunks)])

\* Event i (1-based).
\* @type: (Int) => $event;
EventAt(i) == TraceChunks[((i - 1) \div ChunkSize) + 1][((i - 1) % ChunkSize) + 1]

E == EventAt(l)
EAction == E[1]
MsgCols == Shapes[E[2]][1]
PostCols == Shapes[E[2]][2]
ETxnId == E[3]
EInstance == E[4]
EPartition == E[5]
EIsolation == E[6]
EFrom == E[7]
EGroup == E[6]
ECommittedOffset == E[7]
EResult == E[8]
EMsg == E[9]
EPost == E[10]
\* ClientSend only (TLC reads a tuple's elements lazily; this module is TLC's).
ESent == E[11]

Inst == <<ETxnId, EInstance>>

\* A message field, by its trace column name.
\* @type: ($msg, Str) => a;
MsgVal(m, f) ==
    CASE f = "type"              -> m.type
      [] f = "txn"               -> m.gtx[3]
      [] f = "producer_epoch"    -> EpochOf(m.epoch)
      [] f = "seq"               -> m.seq
      [] f = "att"               -> m.att
      [] f = "commit"            -> m.commit
      [] f = "coordinator_epoch" -> m.cepoch
      [] f = "error"             -> m.err
      [] f = "offset"            -> m.val
      [] f = "generation"        -> m.gen

\* Does message m agree with the event's keys and logged message fields?
\* @type: ($msg) => Bool;
MsgMatches(m) ==
    /\ ETxnId # "" => m.tid = ETxnId
    /\ EInstance >= 0 => m.inst = EInstance
    /\ EPartition >= 0 => m.part = EPartition
    /\ ToString([k \in DOMAIN MsgCols |-> MsgVal(m, MsgCols[k])]) = EMsg

\* A post-state field: the spec's value after the step.
\* @type: (Str) => a;
PostVal(f) ==
    CASE f = "client_state"     -> cl'[Inst].st
      [] f = "client_epoch"     -> EpochOf(cl'[Inst].epoch)
      [] f = "client_txn"       -> cl'[Inst].txn
      [] f = "txn_state"        -> tc'[ETxnId].st
      [] f = "txn_epoch"        -> EpochOf(tc'[ETxnId].epoch)
      [] f = "pending"          -> Len(tc'[ETxnId].pending)
      [] f = "log_end"          -> Len(PlogBase[EPartition]) + Len(plog'[EPartition])
      [] f = "group_generation" -> gc'.gen
      [] f = "group_committed"  -> gc'.committed
      [] f = "records"          -> FetchResult(EPartition, EIsolation, EFrom)
      [] f = "lso"              -> LastStableOffset(EPartition)
      [] f = "txn_partitions"   -> AppendedTxnParts(ETxnId)
      [] f = "append_offset"    -> AppendOffset(EPartition)

PostMatches == ToString([k \in DOMAIN PostCols |-> PostVal(PostCols[k])]) = EPost

\* After the step, an answer to m with the event's result is in flight, or
\* queued behind a pending append. (Present, not new: the network is a set,
\* so an identical answer to an earlier copy may already be there.)
\* @type: ($msg) => Bool;
ResultHolds(m) ==
    \E r \in net' \cup (IF m.tid \in TxnIds THEN PendingReplies(tc'[m.tid]) ELSE {}) :
        /\ r.type = AnswerType(EAction, m.type)
        /\ r.err = EResult
        /\ r.tid = m.tid /\ r.inst = m.inst /\ r.gtx = m.gtx /\ r.part = m.part

\* ClientSend: the request the event describes (any other event: unused).
SentOf ==
    IF EAction = "ClientSend"
    THEN OpenMsg(ESent[1], ETxnId, EInstance, ESent[2], ESent[3], EPartition, ESent[4], ESent[5], ESent[6], ESent[7], ESent[8])
    ELSE NoMsg

\* The spec action event E names, with E's parameters; when `result` is
\* TRUE, a message step must answer with the event's result.
\* @type: (Bool) => Bool;
StepWith(result) ==
    Dispatch(EAction, ETxnId, EInstance, EPartition, EGroup, EIsolation, EFrom, ECommittedOffset,
             MsgMatches,
             LAMBDA m : result /\ EResult # "" => ResultHolds(m),
             result /\ EResult # "" => LostVerifyAnswered(EResult, EPartition),
             SentOf)

Step == StepWith(TRUE)

\* A sending action's message fields describe the request it sent.
SentMatches == EAction \in SendingActions => MsgMatches(SentRequest(Inst))

TraceNext ==
    /\ l <= TraceLen
    /\ Step
    /\ PostMatches
    /\ SentMatches
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
\* explained (the checker learns it from a first run). The first of these
\* to fail names the failing part; its trace ends in the state before the event.
\* @type: (Int) => Bool;
DiagnoseMessage(stuck) ==
    l = stuck /\ EAction \in MessageActions => \E m \in net : MsgMatches(m)
\* @type: (Int) => Bool;
DiagnoseEnabled(stuck) == l = stuck => ENABLED StepWith(FALSE)
\* @type: (Int) => Bool;
DiagnoseResult(stuck) == l = stuck => ENABLED Step
\* The post-state field f, whose logged value renders as `rendered`.
\* @type: (Int, Str, Str) => Bool;
DiagnoseField(stuck, f, rendered) == l = stuck => ENABLED (Step /\ ToString(PostVal(f)) = rendered)
\* @type: (Int) => Bool;
DiagnoseSent(stuck) == l = stuck => ENABLED (Step /\ SentMatches)
\* @type: (Int) => Bool;
DiagnoseReached(stuck) == l < stuck

=============================================================================
