------------------------------- MODULE MCCone -------------------------------
(***************************************************************************)
(* Model of Cone, with its invariants (ConeProperties), for the model      *)
(* checkers. Constants come from specs/cone/models.toml.                   *)
(***************************************************************************)
EXTENDS Cone, ConeProperties

\* TLC: two states that differ only in the history variable `action` are the same
\* state of the protocol.
View == <<cl, co, lk, txs, unborn, cut, dead, batches, dcDown, hist, told, faults>>

=============================================================================
