---------------------------- MODULE MCKafkaTxn ----------------------------
(***************************************************************************)
(* Model of KafkaTxn for the model checkers. Constants come from the       *)
(* registry (specs/models.toml).                                           *)
(***************************************************************************)
EXTENDS KafkaTxn

\* TLC: states that differ only in the history variable `action` are the
\* same state of the protocol.
View == <<net, cl, tc, tlog, cepoch, plog, pst, held, retries, losses, failovers>>

=============================================================================
