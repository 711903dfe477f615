--------------------------- MODULE KafkaTxnStates ---------------------------
(***************************************************************************)
(* The transaction coordinator's state machine for one transactional.id,  *)
(* as Kafka defines it (TransactionState, validPreviousStates in           *)
(* core/.../coordinator/transaction/TransactionMetadata.scala), and the    *)
(* error codes the coordinator and the partition leaders answer with.      *)
(* Pure definitions: no variables.                                         *)
(***************************************************************************)

TxnStates == {"Empty", "Ongoing", "PrepareCommit", "PrepareAbort",
              "CompleteCommit", "CompleteAbort", "PrepareEpochFence", "Dead"}

\* The states a state may be entered from (Kafka's validPreviousStates). Kafka
\* 4.x (KAFKA-14563, apache/kafka#17698; transaction-coordinator/.../
\* TransactionState.java VALID_PREVIOUS_STATES in 4.3.1) lets PrepareAbort
\* follow Empty, CompleteCommit and CompleteAbort: under TV2 an EndTxn(abort)
\* there bumps the epoch and aborts (KafkaTxn's TcEndTxn).
\* @type: (Str) => Set(Str);
ValidPrevious(s) ==
    CASE s = "Empty"             -> {"Empty", "CompleteCommit", "CompleteAbort"}
      [] s = "Ongoing"           -> {"Ongoing", "Empty", "CompleteCommit", "CompleteAbort"}
      [] s = "PrepareCommit"     -> {"Ongoing"}
      [] s = "PrepareAbort"      -> {"Ongoing", "PrepareEpochFence", "Empty", "CompleteCommit", "CompleteAbort"}
      [] s = "CompleteCommit"    -> {"PrepareCommit"}
      [] s = "CompleteAbort"     -> {"PrepareAbort"}
      [] s = "Dead"              -> {"Empty", "CompleteAbort", "CompleteCommit"}
      [] s = "PrepareEpochFence" -> {"Ongoing"}

\* @type: (Str, Str) => Bool;
LegalTransition(from, to) == from \in ValidPrevious(to)

\* A transaction whose outcome is not yet final: its partitions may hold
\* records (or be about to receive markers) for it.
OpenStates == {"Ongoing", "PrepareCommit", "PrepareAbort", "PrepareEpochFence"}

\* The error codes the spec uses (Kafka's Errors enum names).
Errors == {"NONE", "PRODUCER_FENCED", "INVALID_PRODUCER_EPOCH", "CONCURRENT_TRANSACTIONS",
           "INVALID_TXN_STATE", "OUT_OF_ORDER_SEQUENCE_NUMBER", "DUPLICATE_SEQUENCE_NUMBER",
           "TRANSACTION_COORDINATOR_FENCED", "ILLEGAL_GENERATION", "UNSTABLE_OFFSET_COMMIT",
           "NOT_COORDINATOR", "NOT_ENOUGH_REPLICAS", "COORDINATOR_NOT_AVAILABLE",
           "INVALID_PRODUCER_ID_MAPPING", "UNKNOWN_SERVER_ERROR", "TRANSACTION_ABORTABLE"}

=============================================================================
