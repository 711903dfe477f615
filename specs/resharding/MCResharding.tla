---------------------------- MODULE MCResharding ----------------------------
(***************************************************************************)
(* Model of Resharding for the model checkers. Constants come from the     *)
(* registry (specs/resharding/models.toml): TLC gets them in a .cfg,     *)
(* Apalache in a generated CInit operator.                                 *)
(***************************************************************************)
EXTENDS Resharding

\* TLC: two states that differ only in the history variable `action` are
\* the same state of the protocol.
View == <<target, committed, owner, wk, crashes, hangs>>

=============================================================================
