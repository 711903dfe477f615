"""Requests and responses on the simulated network (the spec's $msg record).

``gtx`` and ``end_by`` are ghost fields, as in the spec: the client transaction
``(transactional.id, instance, txn)`` a request, record or marker belongs to. No broker decision
reads them; they let a trace say which transaction a record came from.
"""

from __future__ import annotations

from typing import Any

import attrs

Gtx = tuple[str, int, int]
NO_GTX: Gtx = ("", 0, 0)


def is_fence(g: Gtx) -> bool:
    """The ghost requester of a fence: instance g[1]'s InitProducerId (txn 0) (KafkaTxn: IsFence)."""
    return g[2] == 0 and g[1] > 0

REQUEST_TYPES = (
    "InitProducerId",
    "AddPartitionsToTxn",
    "Produce",
    "EndTxn",
    "AddOffsetsToTxn",
    "TxnOffsetCommit",
    "OffsetFetch",
)
RESPONSE_TYPES = tuple(t + "Resp" for t in REQUEST_TYPES)
BROKER_TYPES = ("Verify", "VerifyResp", "WriteTxnMarkers", "WriteTxnMarkersResp")
MESSAGE_TYPES = REQUEST_TYPES + RESPONSE_TYPES + BROKER_TYPES


@attrs.frozen(order=True)
class Msg:
    type: str
    tid: str = ""
    inst: int = 0
    epoch: int = -1
    part: int = 0
    seq: int = -1
    commit: bool = False
    cepoch: int = -1
    gtx: Gtx = NO_GTX
    end_by: Gtx = NO_GTX
    att: int = 0
    err: str = "NONE"
    val: int = -1
    gen: int = -1

    def reply(self, err: str, **changes: Any) -> Msg:
        """The answer to this request (the spec's Reply)."""
        return attrs.evolve(self, type=self.type + "Resp", err=err, **changes)

    def same_request(self, other: Msg) -> bool:
        """Is ``other`` a copy of, an answer to, or a verification for this request (a produce or a
        TxnOffsetCommit)? (SameRequest)"""
        return (
            other.type in (self.type, self.type + "Resp", "Verify", "VerifyResp")
            and other.tid == self.tid
            and other.inst == self.inst
            and other.gtx == self.gtx
            and other.part == self.part
            and other.seq == self.seq
            and (other.type not in ("Verify", "VerifyResp") or self.type in ("Produce", "TxnOffsetCommit"))
        )
