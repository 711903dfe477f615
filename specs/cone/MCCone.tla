------------------------------- MODULE MCCone -------------------------------
(***************************************************************************)
(* Model of Cone, with its invariants (ConeProperties), for the model      *)
(* checkers. Constants come from specs/cone/models.toml.                   *)
(***************************************************************************)
EXTENDS Cone, ConeProperties

\* TLC: two states that differ only in the history variable `action` (historyVars) are
\* the same state of the protocol.
View == <<clientVars, coordVars, fdVars, storeVars, ghostVars, faultVars>>

=============================================================================
