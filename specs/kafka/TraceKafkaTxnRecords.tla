----------------------- MODULE TraceKafkaTxnRecords -----------------------
(***************************************************************************)
(* Trace validation for KafkaTxn, for Apalache: the same checks as        *)
(* TraceKafkaTxn, with each event a record of every trace column and the  *)
(* set of columns it logged (one record type, so the trace is a           *)
(* well-typed sequence). TraceKafkaTxn compares logged fields through     *)
(* TLC's ToString, which Apalache does not have; this module compares     *)
(* them field by field. It parses more slowly (a record per event), so    *)
(* TLC uses TraceKafkaTxn.                                                 *)
(*                                                                         *)
(* Apalache explores executions of a bounded length, so acceptance is the *)
(* violation of TraceAccepted within Len(Trace) steps.                     *)
(***************************************************************************)
EXTENDS KafkaTxnProperties

(*
  @typeAlias: event = {action: Str, logged: Set(Str), txn_id: Str, instance: Int, partition: Int,
      type: Str, txn: Int, producer_epoch: Int, seq: Int, att: Int, commit: Bool, coordinator_epoch: Int,
      error: Str, offset: Int, generation: Int, result: Str,
      group: Str, isolation: Str, from: Int, records: Set(Int), lso: Int, committed_offset: Int,
      client_state: Str, client_epoch: Int, client_txn: Int,
      txn_state: Str, txn_epoch: Int, pending: Int, log_end: Int,
      group_generation: Int, group_committed: Int};
*)
TraceKafkaTxn_typedefs == TRUE

CONSTANT
    \* @type: Seq($event);
    Trace

VARIABLE
    \* The index of the next event to explain.
    \* @type: Int;
    l

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
    /\ Has("producer_epoch") => m.epoch = E.producer_epoch
    /\ Has("seq") => m.seq = E.seq
    /\ Has("att") => m.att = E.att
    /\ Has("commit") => m.commit = E.commit
    /\ Has("coordinator_epoch") => m.cepoch = E.coordinator_epoch
    /\ Has("error") => m.err = E.error
    /\ Has("offset") => m.val = E.offset
    /\ Has("generation") => m.gen = E.generation

\* @type: ($coord) => Set($msg);
PendingReplies(c) == UNION {c.pending[k].replies : k \in DOMAIN c.pending}

\* The type of the answer the event's step produces.
ReplyType == IF E.action \in {"LeaderVerified", "LeaderVerifyLost"} THEN "ProduceResp" ELSE E.type \o "Resp"

\* After the step, an answer with the event's result is in flight, or queued
\* behind a pending append. (Present, not new: the network is a set, so an
\* identical answer to an earlier copy may already be there.)
ResultHolds ==
    \E r \in net' \cup (IF E.txn_id \in TxnIds THEN PendingReplies(tc'[E.txn_id]) ELSE {}) :
        /\ r.type = ReplyType
        /\ r.err = E.result
        /\ Has("txn_id") => r.tid = E.txn_id
        /\ Has("instance") => r.inst = E.instance
        /\ Has("txn") => r.gtx[3] = E.txn
        /\ Has("partition") => r.part = E.partition

\* The spec action event E names, with E's parameters.
Step ==
    CASE E.action = "StartInstance"       -> StartInstance(Inst)
      [] E.action = "BeginTxn"            -> BeginTxn(Inst)
      [] E.action = "SendRequest"         -> SendRequest(Inst)
      [] E.action = "Retry"               -> Retry(Inst)
      [] E.action = "ProduceTimeout"      -> ProduceTimeout(Inst)
      [] E.action = "ReInit"              -> ReInit(Inst)
      [] E.action = "Hang"                -> Hang(Inst)
      [] E.action = "Resume"              -> Resume(Inst)
      [] E.action = "JoinGroup"           -> JoinGroup(Inst)
      [] E.action = "FetchOffset"         -> FetchOffset(Inst)
      [] E.action = "InputDone"           -> InputDone(Inst)
      [] E.action = "ClientReceive"       -> \E m \in net : MsgMatches(m) /\ ClientReceive(Inst, m)
      [] E.action = "DiscardStale"        -> \E m \in net : MsgMatches(m) /\ DiscardStale(m)
      [] E.action = "Drop"                -> \E m \in net : MsgMatches(m) /\ Drop(m)
      [] E.action = "TcInitProducerId"    -> \E m \in net : MsgMatches(m) /\ TcInitProducerId(m)
      [] E.action = "TcAddPartitionsToTxn" -> \E m \in net : MsgMatches(m) /\ TcAddPartitionsToTxn(m)
      [] E.action = "TcAddOffsetsToTxn"   -> \E m \in net : MsgMatches(m) /\ TcAddOffsetsToTxn(m)
      [] E.action = "TcVerify"            -> \E m \in net : MsgMatches(m) /\ TcVerify(m)
      [] E.action = "TcEndTxn"            -> \E m \in net : MsgMatches(m) /\ TcEndTxn(m)
      [] E.action = "TcMarkerAck"         -> \E m \in net : MsgMatches(m) /\ TcMarkerAck(m)
      [] E.action = "GcOffsetFetch"       -> \E m \in net : MsgMatches(m) /\ GcOffsetFetch(m)
      [] E.action = "GcTxnOffsetCommit"   -> \E m \in net : MsgMatches(m) /\ GcTxnOffsetCommit(m)
      [] E.action = "GcMarker"            -> \E m \in net : MsgMatches(m) /\ GcMarker(m)
      [] E.action = "LeaderProduce"       -> \E m \in net : MsgMatches(m) /\ LeaderProduce(m)
      [] E.action = "LeaderVerified"      -> \E m \in net : MsgMatches(m) /\ LeaderVerified(m)
      [] E.action = "LeaderDiscardVerify" -> \E m \in net : MsgMatches(m) /\ LeaderDiscardVerify(m)
      [] E.action = "LeaderMarker"        -> \E m \in net : MsgMatches(m) /\ LeaderMarker(m)
      [] E.action = "TcAppend"            -> TcAppend(E.txn_id)
      [] E.action = "TcComplete"          -> TcComplete(E.txn_id)
      [] E.action = "TcResendMarker"      -> TcResendMarker(E.txn_id, E.partition)
      [] E.action = "LeaderVerifyLost"    -> LeaderVerifyLost(E.partition)
      [] E.action = "Failover"            -> Failover
      [] E.action = "LeaderRestart"       -> /\ E.partition \in Parts
                                             /\ LeaderRestart(E.partition)
      [] E.action = "OffsetCommit"        -> OffsetCommit(E.group, E.partition, E.committed_offset)
      [] E.action = "Fetch"               -> /\ E.partition \in Parts
                                             /\ Fetch(E.partition, E.isolation, E.from)

\* Actions whose event names a message in flight.
MessageActions == {"ClientReceive", "DiscardStale", "Drop", "TcInitProducerId", "TcAddPartitionsToTxn",
                   "TcAddOffsetsToTxn", "TcVerify", "TcEndTxn", "TcMarkerAck", "GcOffsetFetch",
                   "GcTxnOffsetCommit", "GcMarker", "LeaderProduce", "LeaderVerified",
                   "LeaderDiscardVerify", "LeaderMarker"}
\* Client actions that send a request; their message fields describe it.
SendingActions == {"StartInstance", "SendRequest", "Retry", "ReInit", "FetchOffset"}

\* The logged post-state, one named check per field.
\* @type: (Str) => Bool;
PostHolds(f) ==
    CASE f = "client_state"     -> cl'[Inst].st = E.client_state
      [] f = "client_epoch"     -> cl'[Inst].epoch = E.client_epoch
      [] f = "client_txn"       -> cl'[Inst].txn = E.client_txn
      [] f = "txn_state"        -> tc'[E.txn_id].st = E.txn_state
      [] f = "txn_epoch"        -> tc'[E.txn_id].epoch = E.txn_epoch
      [] f = "pending"          -> Len(tc'[E.txn_id].pending) = E.pending
      [] f = "log_end"          -> Len(plog'[E.partition]) = E.log_end
      [] f = "group_generation" -> gc'.gen = E.group_generation
      [] f = "group_committed"  -> gc'.committed = E.group_committed
      [] f = "result"           -> ResultHolds
      [] f = "records"          -> FetchResult(E.partition, E.isolation, E.from) = E.records
      [] f = "lso"              -> LastStableOffset(E.partition) = E.lso
      [] f = "sent"             -> MsgMatches(cl'[Inst].req)
      [] OTHER                  -> TRUE

PostFields == {"client_state", "client_epoch", "client_txn", "txn_state", "txn_epoch", "pending", "log_end",
               "group_generation", "group_committed", "result", "records", "lso"}

\* A sending action's message fields describe the request it sent.
\* @type: (Str) => Bool;
Checked(f) ==
    \/ f \in PostFields /\ Has(f)
    \/ f = "sent" /\ E.action \in SendingActions /\ Has("type")

Post == \A f \in PostFields \cup {"sent"} : Checked(f) => PostHolds(f)

TraceInit ==
    /\ Init
    /\ l = 1

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
