"""Fault schedules: the budgets of each kind of fault a run may inject.

They are the spec's fault constants, so a trace's header says what the checker must allow:
lost messages (MaxLoss), requests retried while a copy is still in flight, arriving late or twice
(LateRequests, MaxRetries), produce timeouts, instance pauses that make zombies (MaxHangs),
coordinator crashes with failover (MaxFailovers), and partition leader crashes with restart
(LeaderRestarts: the spec allows any number; the budget bounds a run), and transaction timeouts: the
coordinator aborting an open transaction on its own (TxnTimeouts, ``txn-timeouts``; not part of
``all``, which keeps the runs it made before timeouts were modelled), and leaders forgetting idle
producers (ProducerExpiry, ``expiry``), and failed appends to __transaction_state (MaxAppendFails,
``append-fails=N``), and unclean leader elections (UncleanElections, ``unclean``: a follower falls
out of the ISR and is later elected with its shorter log; Kafka does not promise exactly-once then,
so such a run may break an invariant, KAFKA-20716); none of these is in ``all``. Duplication is a retry with a copy in flight:
Kafka runs over TCP, so a second copy of a request only ever comes from the client sending again.
"""

from __future__ import annotations

from typing import Any

import attrs

from ref_impl.kafka.constants import LATE_REQUEST_TYPES
from ref_impl.sim import settings
from ref_impl.sim.settings import SettingsError


@attrs.frozen
class Faults:
    loss: int = 0
    late: tuple[str, ...] = ()
    retries: int = 0
    timeouts: bool = False
    hangs: int = 0
    failovers: int = 0
    restarts: int = 0
    txn_timeouts: bool = False
    expiry: bool = False
    append_fails: int = 0
    unclean: bool = False

    FLAGS = ("timeouts", "txn-timeouts", "expiry", "unclean")
    BUDGETS = ("loss", "retries", "hangs", "failovers", "restarts", "append-fails")

    @classmethod
    def parse(cls, text: str) -> Faults:
        """``none``, ``all``, or ``loss=1,late=EndTxn+Produce,retries=2,timeouts,hangs=1,failovers=1,restarts=1,txn-timeouts``."""
        preset = settings.fault_preset(text)
        if preset:
            return cls() if preset == "none" else cls(loss=1, late=LATE_REQUEST_TYPES, retries=2, timeouts=True, hangs=1, failovers=1, restarts=1)
        fields: dict[str, Any] = {}
        for key, value in settings.pairs(text).items():
            if key == "late":
                names = tuple(sorted(v for v in value.split("+") if v))
                bad = [n for n in names if n not in LATE_REQUEST_TYPES]
                if bad:
                    raise SettingsError(f"late={bad[0]}: a late request is one of {'+'.join(LATE_REQUEST_TYPES)}")
                fields["late"] = names
            elif key in cls.FLAGS:
                fields[key.replace("-", "_")] = settings.flag(key, value)
            elif key in cls.BUDGETS:
                fields[key.replace("-", "_")] = settings.whole(key, value, 0)
            else:
                raise settings.unknown("fault", key, ("loss=N", "late=Type+Type", "retries=N", "timeouts", "hangs=N", "failovers=N",
                                                      "restarts=N", "txn-timeouts", "expiry", "append-fails=N", "unclean"))
        return cls(**fields)

    def describe(self) -> str:
        parts = []
        if self.loss:
            parts.append(f"loss={self.loss}")
        if self.late:
            parts.append("late=" + "+".join(self.late))
        if self.retries:
            parts.append(f"retries={self.retries}")
        if self.timeouts:
            parts.append("timeouts")
        if self.hangs:
            parts.append(f"hangs={self.hangs}")
        if self.failovers:
            parts.append(f"failovers={self.failovers}")
        if self.restarts:
            parts.append(f"restarts={self.restarts}")
        if self.txn_timeouts:
            parts.append("txn-timeouts")
        if self.expiry:
            parts.append("expiry")
        if self.append_fails:
            parts.append(f"append-fails={self.append_fails}")
        if self.unclean:
            parts.append("unclean")
        return ",".join(parts) or "none"


FAULT_KINDS = ("drop", "retry", "delay", "timeout", "hang", "resume", "failover", "restart", "txn-timeout", "expire", "append-fail")
# Faults outside what Kafka's exactly-once promises survive: generated runs of the correct broker
# never draw them; a schedule may name them (the zoo's KAFKA-20716 entry does).
UNSAFE_FAULT_KINDS = ("lag", "unclean")


@attrs.frozen(order=True)
class Fault:
    """One scheduled fault: from event ``at`` on, at the first step where it can happen.

    ``type`` narrows the candidates to messages of that type (for ``hang``, ``retry`` and
    ``timeout``: to clients whose outstanding request has that type); ``target`` picks among
    them (in a fixed order, modulo their number). ``delay`` holds a message in the network for
    ``steps`` further events, so that it arrives late; ``retry`` makes a client re-send while a
    copy is still in flight.
    """

    at: int
    kind: str = attrs.field(validator=attrs.validators.in_(FAULT_KINDS + UNSAFE_FAULT_KINDS))
    target: int = 0
    steps: int = 0
    type: str = ""

    def describe(self) -> str:
        what = f" {self.type}" if self.type else ""
        extra = f" for {self.steps} events" if self.kind == "delay" else ""
        return f"from event {self.at}: {self.kind}{what} #{self.target}{extra}"


@attrs.frozen
class Schedule:
    """A fault schedule, as hypothesis generates and shrinks it."""

    faults: tuple[Fault, ...] = ()

    def budgets(self) -> Faults:
        """The spec constants that allow every fault of the schedule."""
        n = {k: sum(1 for f in self.faults if f.kind == k) for k in FAULT_KINDS + UNSAFE_FAULT_KINDS}
        return Faults(
            loss=n["drop"],
            late=LATE_REQUEST_TYPES if n["retry"] or n["timeout"] else (),
            retries=n["retry"] + n["timeout"],
            timeouts=n["timeout"] > 0,
            hangs=n["hang"],
            failovers=n["failover"],
            restarts=n["restart"],
            txn_timeouts=n["txn-timeout"] > 0,
            expiry=n["expire"] > 0,
            append_fails=n["append-fail"],
            unclean=n["lag"] + n["unclean"] > 0,
        )

    def describe(self) -> list[str]:
        return [f.describe() for f in sorted(self.faults)] or ["no faults"]
