------------------------ MODULE TraceKafkaTxnDispatch ------------------------
(***************************************************************************)
(* What the two trace encodings share. TraceKafkaTxn (for TLC: an event   *)
(* is a tuple, logged fields are compared through ToString) and           *)
(* TraceKafkaTxnRecords (for Apalache: an event is a record, fields are   *)
(* compared one by one) both extend this module. It holds the cursor l,   *)
(* TraceInit, and Dispatch: which KafkaTxn action an event's action name  *)
(* stands for, and with which parameters. Each encoding reads its events  *)
(* its own way and passes Dispatch what it read: the action name and      *)
(* parameters, how to match the message in flight that the event names,   *)
(* and what it requires of the answer the step produces.                  *)
(*                                                                         *)
(* The order of the definitions below is the order in which TraceKafkaTxn *)
(* used to define them, and parameters are not named after record fields  *)
(* or strings: TLC orders strings and record fields by when it first      *)
(* reads them, and that order decides the order in which it explores a    *)
(* state's successors and prints values (see specs/README.md).            *)
(***************************************************************************)
EXTENDS KafkaTxn

VARIABLE
    \* The index of the next event to explain.
    \* @type: Int;
    l

\* The answers a coordinator holds until its pending append is durable.
\* @type: ($coord) => Set($msg);
PendingReplies(c) == UNION {c.pending[k].replies : k \in DOMAIN c.pending}

\* The type of the answer that a step of action a on a message of type ty
\* produces (a verification's outcome answers the held produce, or the
\* held TxnOffsetCommit).
\* @type: (Str, Str) => Str;
AnswerType(a, ty) ==
    IF a \in {"LeaderVerified", "LeaderVerifyLost"} THEN "ProduceResp"
    ELSE IF a \in {"GcVerified", "GcVerifyLost"} THEN "TxnOffsetCommitResp"
    ELSE ty \o "Resp"

\* LeaderVerifyLost (GcVerifyLost) answers a held batch (TxnOffsetCommit)
\* that no message names: a new answer to a produce on partition p (to a
\* TxnOffsetCommit, p = OffsetsPart), with error code `code`.
\* @type: (Str, Int) => Bool;
LostVerifyAnswered(code, p) ==
    \E r \in net' \ net : r.type = (IF p = OffsetsPart THEN "TxnOffsetCommitResp" ELSE "ProduceResp") /\ r.err = code /\ r.part = p

\* The spec action that an event names (a), with its parameters:
\* transactional.id t, instance k, partition p, and the consumer steps'
\* group grp, isolation level iso, fetch offset fromOff and committed
\* offset commitOff. A message action takes a message in flight that
\* Matches the event and whose step's answer is Answered; LeaderVerifyLost
\* and GcVerifyLost must make lostAnswered true. ClientSend sends `sent`, the request the
\* encoding built from the event's fields.
\* @type: (Str, Str, Int, Int, Str, Str, Int, Int, ($msg) => Bool, ($msg) => Bool, Bool, $msg) => Bool;
Dispatch(a, t, k, p, grp, iso, fromOff, commitOff, Matches(_), Answered(_), lostAnswered, sent) ==
    LET i == <<t, k>>
    IN CASE a = "StartInstance"       -> StartInstance(i)
         [] a = "BeginTxn"            -> BeginTxn(i)
         [] a = "SendRequest"         -> SendRequest(i)
         [] a = "Retry"               -> Retry(i)
         [] a = "ProduceTimeout"      -> ProduceTimeout(i)
         [] a = "ReInit"              -> ReInit(i)
         [] a = "Hang"                -> Hang(i)
         [] a = "Resume"              -> Resume(i)
         [] a = "JoinGroup"           -> JoinGroup(i)
         [] a = "FetchOffset"         -> FetchOffset(i)
         [] a = "InputDone"           -> InputDone(i)
         [] a = "ClientReceive"       -> \E m \in net : Matches(m) /\ ClientReceive(i, m) /\ Answered(m)
         [] a = "ClientSend"          -> ClientSend(sent)
         [] a = "ClientTake"          -> \E m \in net : Matches(m) /\ ClientTake(m)
         [] a = "DiscardStale"        -> \E m \in net : Matches(m) /\ DiscardStale(m) /\ Answered(m)
         [] a = "Drop"                -> \E m \in net : Matches(m) /\ Drop(m) /\ Answered(m)
         [] a = "TcInitProducerId"    -> \E m \in net : Matches(m) /\ TcInitProducerId(m) /\ Answered(m)
         [] a = "TcAddPartitionsToTxn" -> \E m \in net : Matches(m) /\ TcAddPartitionsToTxn(m) /\ Answered(m)
         [] a = "TcAddOffsetsToTxn"   -> \E m \in net : Matches(m) /\ TcAddOffsetsToTxn(m) /\ Answered(m)
         [] a = "TcVerify"            -> \E m \in net : Matches(m) /\ TcVerify(m) /\ Answered(m)
         [] a = "TcEndTxn"            -> \E m \in net : Matches(m) /\ TcEndTxn(m) /\ Answered(m)
         [] a = "TcMarkerAck"         -> \E m \in net : Matches(m) /\ TcMarkerAck(m) /\ Answered(m)
         [] a = "GcOffsetFetch"       -> \E m \in net : Matches(m) /\ GcOffsetFetch(m) /\ Answered(m)
         [] a = "GcTxnOffsetCommit"   -> \E m \in net : Matches(m) /\ GcTxnOffsetCommit(m) /\ Answered(m)
         [] a = "GcMarker"            -> \E m \in net : Matches(m) /\ GcMarker(m) /\ Answered(m)
         [] a = "GcVerified"          -> \E m \in net : Matches(m) /\ GcVerified(m) /\ Answered(m)
         [] a = "LeaderProduce"       -> \E m \in net : Matches(m) /\ LeaderProduce(m) /\ Answered(m)
         [] a = "LeaderVerified"      -> \E m \in net : Matches(m) /\ LeaderVerified(m) /\ Answered(m)
         [] a = "LeaderDiscardVerify" -> \E m \in net : Matches(m) /\ LeaderDiscardVerify(m) /\ Answered(m)
         [] a = "LeaderMarker"        -> \E m \in net : Matches(m) /\ LeaderMarker(m) /\ Answered(m)
         [] a = "TcAppend"            -> TcAppend(t)
         [] a = "TcComplete"          -> TcComplete(t)
         [] a = "TcTimeoutAbort"      -> TcTimeoutAbort(t)
         [] a = "TcAppendFail"        -> TcAppendFail(t)
         [] a = "TcResendMarker"      -> TcResendMarker(t, p)
         [] a = "LeaderVerifyLost"    -> LeaderVerifyLost(p) /\ lostAnswered
         [] a = "GcVerifyLost"        -> /\ p = OffsetsPart
                                         /\ GcVerifyLost /\ lostAnswered
         [] a = "Failover"            -> Failover
         [] a = "LeaderRestart"       -> /\ p \in Parts
                                         /\ LeaderRestart(p)
         [] a = "LeaderExpireProducer" -> /\ p \in Parts
                                         /\ LeaderExpireProducer(p, t)
         [] a = "FollowerLag"         -> /\ p \in Parts
                                         /\ FollowerLag(p)
         [] a = "UncleanElection"     -> /\ p \in Parts
                                         /\ UncleanElection(p)
         [] a = "OffsetCommit"        -> OffsetCommit(grp, p, commitOff)
         [] a = "Fetch"               -> /\ p \in Parts
                                         /\ Fetch(p, iso, fromOff)

\* Actions whose event names a message in flight.
MessageActions == {"ClientReceive", "ClientTake", "DiscardStale", "Drop", "TcInitProducerId", "TcAddPartitionsToTxn",
                   "TcAddOffsetsToTxn", "TcVerify", "TcEndTxn", "TcMarkerAck", "GcOffsetFetch",
                   "GcTxnOffsetCommit", "GcMarker", "LeaderProduce", "LeaderVerified",
                   "LeaderDiscardVerify", "LeaderMarker", "GcVerified"}
\* Client actions that send a request; their message fields describe it.
SendingActions == {"StartInstance", "SendRequest", "Retry", "ReInit", "FetchOffset"}

\* The request instance i's client sent in the step: a batch it added to
\* fly (pipelining), else the request it holds after the step.
\* @type: ($inst) => $msg;
SentRequest(i) == IF cl'[i].fly \ cl[i].fly # {} THEN CHOOSE b \in cl'[i].fly \ cl[i].fly : TRUE ELSE cl'[i].req

\* The request an open client sent, from an event's fields: type, the
\* transactional.id t, instance k, ghost transaction txn, producer epoch e
\* (of the coordinator's current producer id; -1: none), partition p,
\* sequence, send attempt, commit flag, offset and generation.
\* @type: (Str, Str, Int, Int, Int, Int, Int, Int, Bool, Int, Int) => $msg;
OpenMsg(ty, t, k, txn, e, p, sq, at, cm, v, g) ==
    [type |-> ty, tid |-> t, inst |-> k,
     epoch |-> IF e < 0 THEN e ELSE PidOf(IF t \in TxnIds /\ tc[t].epoch >= 0 THEN tc[t].epoch ELSE 0) * Span + e,
     part |-> p, seq |-> sq, commit |-> cm, cepoch |-> -1, gtx |-> <<t, k, txn>>, endBy |-> NoGtx,
     att |-> at, err |-> "NONE", val |-> v, gen |-> g]

TraceInit ==
    /\ Init
    /\ l = 1

=============================================================================
