---------------------------- MODULE MCKafkaTxn ----------------------------
(***************************************************************************)
(* Model of KafkaTxn for the model checkers. Constants come from the       *)
(* registry (specs/models.toml).                                           *)
(***************************************************************************)
EXTENDS KafkaTxn

\* The client-step (pc) that response m answers.
\* @type: ($msg) => Int;
RespPc(m) ==
    CASE m.type = "AddPartitionsToTxnResp" -> 1
      [] m.type = "ProduceResp" -> 1 + m.part
      [] m.type = "AddOffsetsToTxnResp" -> AddOffsetsPc
      [] m.type = "TxnOffsetCommitResp" -> OffsetCommitPc
      [] OTHER -> EndPc

\* Can message m still have an effect? A response whose client has moved
\* past the request can only be discarded; a marker acknowledgement of an
\* earlier coordinator epoch can only be ignored.
\* @type: ($msg) => Bool;
Live(m) ==
    LET c == cl[<<m.tid, m.inst>>]
    IN CASE m.type = "InitProducerIdResp" -> c.st = "init"
         [] m.type = "OffsetFetchResp" -> c.st = "ready" /\ m.gtx[3] = c.txn
         [] m.type \in {"AddPartitionsToTxnResp", "ProduceResp", "AddOffsetsToTxnResp", "TxnOffsetCommitResp", "EndTxnResp"} ->
              c.st = "intxn" /\ m.gtx[3] = c.txn /\ RespPc(m) >= c.pc
         [] m.type = "WriteTxnMarkersResp" -> m.cepoch = cepoch
         [] OTHER -> TRUE

\* TLC: states that differ only in the history variable `action`, or in
\* messages that can no longer have an effect (Live), are the same state of
\* the protocol: each has the same futures, up to discarding those messages.
View == <<{m \in net : Live(m)}, cl, tc, tlog, cepoch, plog, pst, held, gc, hangs, retries, losses, failovers>>

\* A witness, not a guarantee: false once some transaction is complete and
\* committed, so that its counterexample is the protocol's happy path,
\* request by request.
NoTransactionCommits ==
    \A t \in TxnIds : \A k \in DOMAIN tlog[t] : tlog[t][k].st # "CompleteCommit"

=============================================================================
