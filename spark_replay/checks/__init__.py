"""The replay checks (one module a family: ``log.py`` P1..P7 and C1, ``sends.py`` C2, ``ctp.py`` C3,
``poll_order.py`` C4, ``cycles.py`` C5; what they share in ``base.py``): each approximates a spec invariant on what a deployment exposes.

Every check reads the staged tables and returns its violations as a DataFrame with the columns of
``VIOLATION`` (check, kind, trace_id, topic, partition, producer_id, offset, event, ts_ms, txn_id,
detail). The shared derivation (``Derived``) is computed once per replay: one window over
(trace_id, topic, partition, producer_id) ordered by offset gives every check its predecessor
columns and each batch its run (the number of markers before it), and one join gives each data
batch its fate (the marker that closes its run). That is the spec's ``CloserOf``/``Fate``
(specs/kafka/KafkaLog.tla).

The checks (docs/replay.md gives each one's definition, the invariant and the real bugs):
P1 sequences (NoDuplicates), P2 producer epochs (ZombieFenced), P3
coordinator epochs on markers, P4 markers follow the coordinator's decision (Atomicity,
MarkerSafety), P5 hanging transactions (NoHangingTransaction), P7 the coordinator's state machine
(TxnStateMachine), P6 the aborted-transaction index (ReadCommitted), C1 read_committed fetches
(ReadCommitted).
"""

from __future__ import annotations

from collections.abc import Iterator

from spark_replay.partition_pass import KEY, VIOLATION_COLUMNS

from .base import PLANS, Check, Derived, Tables
from .ctp import C3_CHECK
from .cycles import C5_CHECK
from .log import C1_CHECK, LOG_CHECKS
from .poll_order import C4_CHECK
from .sends import C2_CHECK

__all__ = ["CHECKS", "KEY", "PLANS", "VIOLATION_COLUMNS", "Check", "Derived", "Tables", "by_id"]

CHECKS: tuple[Check, ...] = (*LOG_CHECKS, C1_CHECK, C2_CHECK, C3_CHECK, C4_CHECK, C5_CHECK)


def by_id() -> Iterator[tuple[str, Check]]:
    for c in CHECKS:
        yield c.id, c
