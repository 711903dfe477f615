"""The coordinator's transaction states and Kafka's error codes (specs/kafka/KafkaTxnStates.tla)."""

from __future__ import annotations

TXN_STATES = frozenset(
    {"Empty", "Ongoing", "PrepareCommit", "PrepareAbort", "CompleteCommit", "CompleteAbort", "PrepareEpochFence", "Dead"}
)

# Kafka's validPreviousStates (TransactionMetadata.scala).
VALID_PREVIOUS: dict[str, frozenset[str]] = {
    "Empty": frozenset({"Empty", "CompleteCommit", "CompleteAbort"}),
    "Ongoing": frozenset({"Ongoing", "Empty", "CompleteCommit", "CompleteAbort"}),
    "PrepareCommit": frozenset({"Ongoing"}),
    # Kafka 4.x (KAFKA-14563): a TV2 abort from Empty or Complete* (KafkaTxnStates.ValidPrevious)
    "PrepareAbort": frozenset({"Ongoing", "PrepareEpochFence", "Empty", "CompleteCommit", "CompleteAbort"}),
    "CompleteCommit": frozenset({"PrepareCommit"}),
    "CompleteAbort": frozenset({"PrepareAbort"}),
    "Dead": frozenset({"Empty", "CompleteAbort", "CompleteCommit"}),
    "PrepareEpochFence": frozenset({"Ongoing"}),
}

PREPARED = frozenset({"PrepareCommit", "PrepareAbort"})
OPEN_STATES = frozenset({"Ongoing", "PrepareCommit", "PrepareAbort", "PrepareEpochFence"})

ERRORS = frozenset(
    {
        "NONE",
        "PRODUCER_FENCED",
        "INVALID_PRODUCER_EPOCH",
        "CONCURRENT_TRANSACTIONS",
        "INVALID_TXN_STATE",
        "OUT_OF_ORDER_SEQUENCE_NUMBER",
        "DUPLICATE_SEQUENCE_NUMBER",
        "TRANSACTION_COORDINATOR_FENCED",
        "ILLEGAL_GENERATION",
        "UNSTABLE_OFFSET_COMMIT",
        "NOT_COORDINATOR",
        "NOT_ENOUGH_REPLICAS",
        "COORDINATOR_NOT_AVAILABLE",
        "INVALID_PRODUCER_ID_MAPPING",
        "UNKNOWN_SERVER_ERROR",
        "TRANSACTION_ABORTABLE",
    }
)

# Answers after which the client simply asks again.
RETRIABLE = frozenset(
    {"CONCURRENT_TRANSACTIONS", "UNSTABLE_OFFSET_COMMIT", "NOT_COORDINATOR", "NOT_ENOUGH_REPLICAS", "COORDINATOR_NOT_AVAILABLE"}
)
FENCING = frozenset({"PRODUCER_FENCED", "INVALID_PRODUCER_EPOCH", "INVALID_PRODUCER_ID_MAPPING"})


def legal_transition(old: str, new: str) -> bool:
    return old in VALID_PREVIOUS[new]
