---------------------------- MODULE MCKafkaTxn ----------------------------
(***************************************************************************)
(* Model of KafkaTxn for the model checkers. Constants come from the       *)
(* registry (specs/models.toml).                                           *)
(***************************************************************************)
EXTENDS KafkaTxn

\* TLC: states that differ only in the history variable `action` are the
\* same state of the protocol.
View == <<net, cl, tc, tlog, cepoch, plog, pst, held, retries, losses, failovers>>

\* A witness, not a guarantee: false once some transaction is complete and
\* committed, so that its counterexample is the protocol's happy path,
\* request by request.
NoTransactionCommits ==
    \A t \in TxnIds : \A k \in DOMAIN tlog[t] : tlog[t][k].st # "CompleteCommit"

=============================================================================
