----------------------- MODULE TraceKafkaTxnRecords -----------------------
(***************************************************************************)
(* Trace validation for KafkaTxn, for Apalache: the same checks as        *)
(* TraceKafkaTxn, with each event a record of every trace column and the  *)
(* set of columns it logged (one record type, so the trace is a           *)
(* well-typed sequence). TraceKafkaTxn compares logged fields through     *)
(* TLC's ToString, which Apalache does not have; this module compares     *)
(* them field by field. It parses more slowly (a record per event), so    *)
(* TLC uses TraceKafkaTxn. Both take an event's action from the same       *)
(* Dispatch (TraceKafkaTxnDispatch).                                       *)
(*                                                                         *)
(* Apalache explores executions of a bounded length, so acceptance is the *)
(* violation of TraceAccepted within Len(Trace) steps.                     *)
(***************************************************************************)
\* KafkaTxn before KafkaTxnProperties: TLC orders strings and record fields by when it
\* first reads them, and this keeps the order it had when the invariants were in KafkaTxn
\* (specs/README.md).
EXTENDS TraceKafkaTxnDispatch, KafkaTxn, KafkaTxnProperties, KafkaTxnSince, TraceKafkaTxnAppends

(*
  @typeAlias: event = {action: Str, logged: Set(Str), txn_id: Str, instance: Int, partition: Int,
      type: Str, txn: Int, producer_epoch: Int, seq: Int, att: Int, commit: Bool, coordinator_epoch: Int,
      error: Str, offset: Int, generation: Int, result: Str,
      group: Str, isolation: Str, from: Int, records: Set(Int), lso: Int, committed_offset: Int,
      client_state: Str, client_epoch: Int, client_txn: Int,
      txn_state: Str, txn_epoch: Int, txn_partitions: Set(Int), pending: Int, append_offset: Int, log_end: Int,
      group_generation: Int, group_committed: Int};
*)
TraceKafkaTxn_typedefs == TRUE

CONSTANT
    \* @type: Seq($event);
    Trace

E == Trace[l]

\* @type: (Str) => Bool;
Has(f) == f \in E.logged

Inst == <<E.txn_id, E.instance>>

\* Does message m agree with every message field the event logged?
\* @type: ($msg) => Bool;
MsgMatches(m) ==
    /\ Has("type") => m.type = E.type
    /\ Has("txn_id") => m.tid = E.txn_id
    /\ Has("instance") => m.inst = E.instance
    /\ Has("txn") => m.gtx[3] = E.txn
    /\ Has("partition") => m.part = E.partition
    /\ Has("producer_epoch") => EpochOf(m.epoch) = E.producer_epoch
    /\ Has("seq") => m.seq = E.seq
    /\ Has("att") => m.att = E.att
    /\ Has("commit") => m.commit = E.commit
    /\ Has("coordinator_epoch") => m.cepoch = E.coordinator_epoch
    /\ Has("error") => m.err = E.error
    /\ Has("offset") => m.val = E.offset
    /\ Has("generation") => m.gen = E.generation

\* After the step, an answer with the event's result is in flight, or queued
\* behind a pending append. (Present, not new: the network is a set, so an
\* identical answer to an earlier copy may already be there.)
ResultHolds ==
    \E r \in net' \cup (IF E.txn_id \in TxnIds THEN PendingReplies(tc'[E.txn_id]) ELSE {}) :
        /\ r.type = AnswerType(E.action, E.type)
        /\ r.err = E.result
        /\ Has("txn_id") => r.tid = E.txn_id
        /\ Has("instance") => r.inst = E.instance
        /\ Has("txn") => r.gtx[3] = E.txn
        /\ Has("partition") => r.part = E.partition

\* A message step's answer is checked with the post-state (ResultHolds),
\* not by Dispatch.
\* @type: ($msg) => Bool;
AnyAnswer(m) == TRUE

\* The spec action event E names, with E's parameters.
Step ==
    Dispatch(E.action, E.txn_id, E.instance, E.partition, E.group, E.isolation, E.from, E.committed_offset,
             MsgMatches, AnyAnswer, TRUE,
             OpenMsg(E.type, E.txn_id, E.instance, E.txn, E.producer_epoch, E.partition, E.seq, E.att, E.commit,
                     E.offset, E.generation))

\* The logged post-state, one named check per field.
\* @type: (Str) => Bool;
PostHolds(f) ==
    CASE f = "client_state"     -> cl'[Inst].st = E.client_state
      [] f = "client_epoch"     -> EpochOf(cl'[Inst].epoch) = E.client_epoch
      [] f = "client_txn"       -> cl'[Inst].txn = E.client_txn
      [] f = "txn_state"        -> tc'[E.txn_id].st = E.txn_state
      [] f = "txn_epoch"        -> EpochOf(tc'[E.txn_id].epoch) = E.txn_epoch
      [] f = "pending"          -> Len(tc'[E.txn_id].pending) = E.pending
      [] f = "log_end"          -> Len(PlogBase[E.partition]) + Len(plog'[E.partition]) = E.log_end
      [] f = "group_generation" -> gc'.gen = E.group_generation
      [] f = "group_committed"  -> gc'.committed = E.group_committed
      [] f = "result"           -> ResultHolds
      [] f = "records"          -> FetchResult(E.partition, E.isolation, E.from) = E.records
      [] f = "lso"              -> LastStableOffset(E.partition) = E.lso
      [] f = "txn_partitions"   -> AppendedTxnParts(E.txn_id) = E.txn_partitions
      [] f = "append_offset"    -> AppendOffset(E.partition) = E.append_offset
      [] f = "sent"             -> MsgMatches(SentRequest(Inst))
      [] OTHER                  -> TRUE

PostFields == {"client_state", "client_epoch", "client_txn", "txn_state", "txn_epoch", "pending", "log_end",
               "group_generation", "group_committed", "result", "records", "lso", "txn_partitions", "append_offset"}

\* A sending action's message fields describe the request it sent.
\* @type: (Str) => Bool;
Checked(f) ==
    \/ f \in PostFields /\ Has(f)
    \/ f = "sent" /\ E.action \in SendingActions /\ Has("type")

Post == \A f \in PostFields \cup {"sent"} : Checked(f) => PostHolds(f)

TraceNext ==
    /\ l <= Len(Trace)
    /\ Step
    /\ Post
    /\ l' = l + 1

TraceSpec == TraceInit /\ [][TraceNext]_<<vars, l>>

-----------------------------------------------------------------------------

\* Violated exactly when every event has been explained.
TraceAccepted == l <= Len(Trace)

=============================================================================
