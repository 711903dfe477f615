"""Fault switches of the YDB server (``txconform serve --protocol ydb --faults ...``): what YDB does
underneath a real SDK session, at a request the user names.

A switch is ``KIND@REQUEST:N``: while the server serves the Nth request named REQUEST, the fault is
taken at the first moment the spec's fault step is enabled (before any step of the request's, and
between the engine's own steps that follow). A switch whose fault never becomes enabled during its
request is reported by the server's summary, not taken later. The kinds are the YDB spec's fault
steps (specs/ydb/YdbTopics.tla), each bounded by its budget constant, which the served engine sets
to the number of switches of its kind:

- ``restart-A``, ``restart-B``: ``TabletRestart`` of the PQ tablet of topic A or B (at any moment,
  with a transaction record or without: MaxRestarts). ydb-platform/ydb
  ``ydb/core/persqueue/pq_impl.cpp``: a restarted tablet reads its transactions back from its
  local database.
- ``deadline``: ``PlanDeadline`` of the request's transaction (the coordinator's plan step missed
  the proposal's deadline while it was proposed: MaxDeadlines). ``ydb/core/tx/coordinator``.
- ``lose-lock``: ``LockLost`` of the request's transaction (its KQP session's locks broken before
  the commit: MaxLockLosses). ``ydb/core/kqp/session_actor/kqp_session_actor.cpp``.
- ``lose-session``: the request's KQP session dies (a node restart, an idle timeout): the spec's
  ``LockLost`` of its transaction, then the server ends the session as YDB does: its attach stream
  says BAD_SESSION and ends, the request and every later one on the session are answered
  BAD_SESSION ("Session not found"), and its open transaction is rolled back in the engine
  (``RollbackTx``). ydb-python-sdk ``ydb/query/session.py`` (``_check_session_status_loop``: a
  SessionState other than SUCCESS closes the session) and ``ydb/_errors.py`` (BAD_SESSION is retried
  on a new session).
- ``drop-readset``: ``Lose`` of a read set of the request's transaction between tablets A and B (a
  pipe broken: MaxLoss); the sender sends it again until it is acknowledged (``PqResendReadSet``).
  ``ydb/core/persqueue/pqtablet/pq_impl.cpp`` (``TDistributedTransaction``'s read sets, resent on a
  pipe's reconnect).
- ``split-B``: ``Split`` of topic B's partition (autopartitioning: the partition becomes inactive and
  keeps its log; MaxSplits). A transaction that wrote it is ABORTED at its predicate, a later write to
  it is refused ("Write to inactive partition"). The spec has no child partitions (routing by key),
  so after the split no transaction can write B: the session shows what the SDK does with a
  partition that stops taking writes. ``partition.cpp`` (``IsActive``), ``partition_write.cpp``
  (WRITE_ERROR_PARTITION_INACTIVE), ``ydb/services/persqueue_v1/actors/persqueue_utils.cpp``
  (which makes it OVERLOADED).

REQUEST is one of the requests that act on a transaction: CommitTransaction, RollbackTransaction,
UpdateOffsetsInTransaction, and Write (one write_request of a StreamWrite). N counts those requests
from 1 over the whole session.
"""

from __future__ import annotations

import re

import attrs

from ref_impl.sim.settings import SettingsError

# kind -> (the spec's fault step, what it acts on: Switch.target)
KINDS: dict[str, tuple[str, str]] = {
    "restart-A": ("TabletRestart", "A"),
    "restart-B": ("TabletRestart", "B"),
    "deadline": ("PlanDeadline", "txn"),
    "lose-lock": ("LockLost", "txn"),
    "lose-session": ("LockLost", "session"),
    "drop-readset": ("Lose", "readset"),
    "split-B": ("Split", "partition"),
}
REQUESTS = ("CommitTransaction", "RollbackTransaction", "UpdateOffsetsInTransaction", "Write")
_SWITCH = re.compile(r"^([A-Za-z-]+)@([A-Za-z]+):(\d+)$")


@attrs.frozen
class Switch:
    kind: str
    request: str
    n: int

    @property
    def step(self) -> str:
        return KINDS[self.kind][0]

    @property
    def target(self) -> str:
        """``txn`` (the request's transaction), ``session`` (its transaction, then its session
        ends), ``readset`` (a read set of its transaction in flight), ``partition`` (B's partition)
        or the tablet, ``A`` or ``B``."""
        return KINDS[self.kind][1]

    def describe(self) -> str:
        return f"{self.kind}@{self.request}:{self.n}"


@attrs.frozen
class Switches:
    switches: tuple[Switch, ...] = ()

    @classmethod
    def parse(cls, text: str) -> Switches:
        out: list[Switch] = []
        for part in (p.strip() for p in text.split(",") if p.strip()):
            m = _SWITCH.match(part)
            if m is None:
                raise SettingsError(f"{part!r} is not KIND@REQUEST:N, e.g. restart-B@CommitTransaction:1 "
                                    f"(KIND one of {', '.join(KINDS)})")
            kind, request, n = m.group(1), m.group(2), int(m.group(3))
            if kind not in KINDS:
                raise SettingsError(f"{part!r}: no fault kind {kind!r}; the kinds are {', '.join(KINDS)}")
            if request not in REQUESTS:
                raise SettingsError(f"{part!r}: no request {request!r} takes a fault; the requests are {', '.join(REQUESTS)}")
            if n < 1:
                raise SettingsError(f"{part!r}: N counts requests from 1")
            switch = Switch(kind, request, n)
            if any((s.request, s.n) == (request, n) for s in out):
                raise SettingsError(f"{part!r}: request {request}:{n} already has a fault; give one fault a request")
            out.append(switch)
        return cls(tuple(out))

    def at(self, request: str, n: int) -> Switch | None:
        return next((s for s in self.switches if (s.request, s.n) == (request, n)), None)

    def budget(self, step: str) -> int:
        """The engine's budget constant of fault step ``step``: as many as its switches."""
        return sum(1 for s in self.switches if s.step == step)

    def describe(self) -> str:
        return ",".join(s.describe() for s in self.switches) or "none"


NO_FAULTS = Switches()
