---------------------------- MODULE MCYdbTopics ----------------------------
(***************************************************************************)
(* Model of YdbTopics, with its invariants (YdbTopicsProperties), for the  *)
(* model checkers. Constants come from specs/ydb/models.toml.              *)
(***************************************************************************)
EXTENDS YdbTopics, YdbTopicsProperties

\* TLC: two states that differ only in the history variable `action` (historyVars) are
\* the same state of the protocol.
View == <<clientVars, kqpVars, messageVars, dataVars, tabletVars, coordVars, ghostVars, faultVars>>

=============================================================================
