-------------------------- MODULE MCKafkaTxnDepth --------------------------
(***************************************************************************)
(* The durable-write depth of Kafka's commit path, measured on MCKafkaTxn  *)
(* by a ghost variable, kd, that no step of KafkaTxn reads.                *)
(*                                                                         *)
(* A durable write is an append to __transaction_state (TcAppend), a data  *)
(* batch or a marker appended to a partition (LeaderProduce,               *)
(* LeaderVerified, LeaderMarker), or a record of __consumer_offsets        *)
(* (GcTxnOffsetCommit, GcVerified, GcMarker). Each is replicated to the    *)
(* in-sync replicas before it is acknowledged (acks=all), which is what    *)
(* makes it a sequential step of the commit path. Its depth is one more    *)
(* than the deepest durable write it waited for; writes made in parallel   *)
(* count once. Every message carries the depth of what its sender knew     *)
(* (kd.msg, kept for the messages in flight), so the count follows the     *)
(* causal chain, not the order TLC happens to pick.                        *)
(*                                                                         *)
(* What the client waits for. The model's client sends one request at a   *)
(* time, but Kafka's producer does not wait for one partition's produce   *)
(* before sending another's (RecordAccumulator / Sender pipeline batches *)
(* per partition), and only commitTransaction() flushes every batch first *)
(* (TransactionManager.beginCommit after KafkaProducer.flush). So a      *)
(* request carries the depth of the client's answers except produce       *)
(* answers (kd.ctl), and EndTxn the depth of all of them (kd.all).        *)
(*                                                                         *)
(* Appends to __transaction_state of one transaction follow each other    *)
(* (the coordinator keeps one pending transition at a time), so a         *)
(* transition's append is one deeper than the transaction's last one.    *)
(* TransactionCoordinator.handleEndTransaction answers EndTxn once         *)
(* PrepareCommit is durable; the markers follow, then CompleteCommit once *)
(* every partition acknowledged its marker                                 *)
(* (TransactionMarkerRequestCompletionHandler).                            *)
(*                                                                         *)
(* Measured: kd.answer, the deepest COMMITTED answer a client got; and    *)
(* kd.complete, the deepest CompleteCommit append. Exact for runs         *)
(* without retries and failovers (the depth models); with them a resent  *)
(* request or marker carries its sender's current depth.                   *)
(*                                                                         *)
(* The ghost is kept out of View and ReducedView, so the other models of  *)
(* specs/kafka/ are untouched; the depth models run DepthInit/DepthNext    *)
(* under DepthView (the kafka_commit_depth models of models.toml).        *)
(***************************************************************************)
EXTENDS MCKafkaTxn

CONSTANTS
    \* @type: Int;
    AnswerBound,
    \* @type: Int;
    CompleteBound

VARIABLE
    \* @type: {msg: $msg -> Int, ctl: $inst -> Int, all: $inst -> Int, pend: Str -> Seq(Int), tlog: Str -> Int, acks: Str -> Int, answer: Int, complete: Int};
    kd

\* The ghost's group (KafkaTxn's groups frame every other variable).
depthVars == <<kd>>

\* @type: (Int, Int) => Int;
Max2(a, b) == IF a >= b THEN a ELSE b

\* @type: (Set(Int)) => Int;
MaxOr0(S) == IF S = {} THEN 0 ELSE MaxOf(S)

DepthInit ==
    /\ Init
    /\ kd = [msg |-> [m \in net |-> 0],
             ctl |-> [i \in Instances |-> 0], all |-> [i \in Instances |-> 0],
             pend |-> [t \in TxnIds |-> <<>>], tlog |-> [t \in TxnIds |-> 0], acks |-> [t \in TxnIds |-> 0],
             answer |-> 0, complete |-> 0]

\* What one step does to the ghost. The step is KafkaTxn's: what it took off
\* the network (Consumed), what it put on (Created), whether it wrote, and
\* action' (its name and transactional.id).
Consumed == net \ net'
Created == net' \ net
InDepth == MaxOr0({kd.msg[m] : m \in Consumed})
Wrote == action'.name \in {"LeaderProduce", "LeaderVerified", "LeaderMarker", "GcTxnOffsetCommit", "GcVerified", "GcMarker"}
         /\ (plog' # plog \/ gc' # gc)
\* The depth a client's new request carries.
\* @type: ($msg) => Int;
RequestDepth(m) ==
    LET i == <<m.tid, m.inst>>
    IN IF m.type = "EndTxn" THEN kd.all[i] ELSE kd.ctl[i]
\* The depth of the transaction's last __transaction_state append, while one is open.
\* @type: (Str) => Int;
TxnLogDepth(t) == IF tc[t].st \in {"Ongoing", "PrepareCommit", "PrepareAbort"} THEN kd.tlog[t] ELSE 0

\* The depth of a message this step creates.
\* @type: ($msg) => Int;
NewDepth(m) ==
    CASE action'.actor \in TxnIds -> RequestDepth(m)          \* a client's request
      [] action'.name = "TcAppend" -> Head(kd.pend[action'.txn_id])
      [] action'.name \in {"TcResendMarker", "Failover"} -> kd.tlog[m.tid]
      [] OTHER -> InDepth + (IF Wrote THEN 1 ELSE 0)

\* The transition a coordinator step marks pending: one write deeper than
\* what it waited for, TcComplete for the marker acknowledgements.
\* @type: (Str) => Seq(Int);
NewPending(t) ==
    LET before == Len(tc[t].pending)
        after == Len(tc'[t].pending)
    IN CASE after = 0 -> <<>>
         [] action'.name = "TcAppend" /\ t = action'.txn_id -> Tail(kd.pend[t])
         [] after > before /\ action'.name = "TcComplete" -> Append(kd.pend[t], 1 + kd.acks[t])
         [] after > before -> Append(kd.pend[t], 1 + Max2(InDepth, TxnLogDepth(t)))
         [] OTHER -> kd.pend[t]

\* The answer a client receives, if this step is one.
Received == CHOOSE m \in Consumed \cup {NoMsg} : m = NoMsg \/ action'.name = "Receive" \o m.type
ReceivedBy == <<Received.tid, Received.inst>>
Receiving == action'.actor \in TxnIds /\ Received # NoMsg

DepthStep ==
    IF UNCHANGED vars THEN UNCHANGED depthVars
    ELSE LET t == action'.txn_id
             appended == IF action'.name = "TcAppend" THEN tlog'[t][Len(tlog'[t])] ELSE [st |-> ""]
         IN kd' = [msg |-> [m \in net' |-> IF m \in net THEN kd.msg[m] ELSE NewDepth(m)],
                   ctl |-> [i \in Instances |->
                              CASE action'.name = "BeginTxn" /\ action'.actor = i[1] /\ action'.args["instance"] = i[2] -> 0
                                [] Receiving /\ ReceivedBy = i /\ Received.type # "ProduceResp" -> Max2(kd.ctl[i], InDepth)
                                [] OTHER -> kd.ctl[i]],
                   all |-> [i \in Instances |->
                              CASE action'.name = "BeginTxn" /\ action'.actor = i[1] /\ action'.args["instance"] = i[2] -> 0
                                [] Receiving /\ ReceivedBy = i -> Max2(kd.all[i], InDepth)
                                [] OTHER -> kd.all[i]],
                   pend |-> [u \in TxnIds |-> NewPending(u)],
                   tlog |-> [u \in TxnIds |-> IF action'.name = "TcAppend" /\ u = t THEN Head(kd.pend[t]) ELSE kd.tlog[u]],
                   acks |-> [u \in TxnIds |->
                              CASE action'.name = "TcAppend" /\ u = t /\ appended.st \in {"PrepareCommit", "PrepareAbort"} -> 0
                                [] action'.name = "TcMarkerAck" /\ u = t /\ tc'[t].todo # tc[t].todo -> Max2(kd.acks[u], InDepth)
                                [] OTHER -> kd.acks[u]],
                   answer |-> IF Receiving /\ Received.type = "EndTxnResp" /\ Received.err = "NONE" /\ Received.commit
                              THEN Max2(kd.answer, InDepth) ELSE kd.answer,
                   complete |-> IF appended.st = "CompleteCommit" THEN Max2(kd.complete, Head(kd.pend[t])) ELSE kd.complete]

DepthNext == Next /\ DepthStep

\* The view of the depth models: the model's View and the ghost.
DepthView == <<View, kd>>

\* INV: DepthTypeOK
DepthTypeOK ==
    /\ DOMAIN kd.msg = net
    /\ \A m \in net : kd.msg[m] \in Nat
    /\ \A t \in TxnIds : Len(kd.pend[t]) = Len(tc[t].pending)

\* INV: AnswerDepthWithinBound (a measurement, not a guarantee of Kafka)
\* A COMMITTED answer (EndTxn) comes after at most AnswerBound sequential
\* durable writes. Holding with N and violated with N - 1 pins it at N.
AnswerDepthWithinBound == kd.answer <= AnswerBound

\* INV: CompleteDepthWithinBound (a measurement)
\* CompleteCommit is durable after at most CompleteBound sequential writes.
CompleteDepthWithinBound == kd.complete <= CompleteBound

=============================================================================
