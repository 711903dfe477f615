"""The YdbTopics spec state the reference engine is in after a trace's first events: what lets the
windows of a long trace run in parallel (``Protocol.spec_states``; the replay is ``replay.replay``'s,
without bugs). A mistake here costs a run, never a verdict (trace_check/traces/windows.py:
``check_windows``).

Values, as ``parse_value`` reads TLC's print of the state: ``bool``, ``int``, ``str``; a set is a
``frozenset``; a function whose domain is ``1..n`` (``owner``, ``kqp`` and the other functions of
transactions, ``target``, ``rows``, a worker's ``pos``, ``meta[t]``) is a ``tuple``; one whose
domain is strings that TLC prints as field names (a record, ``cl`` over the workers, the functions
of tablets) is a ``Record``; any other is an ``FnMap``; an empty function is ``()``. Every variable
of YdbTopics is given but ``action`` (history only) and the trace spec's cursor ``l``. What the
engine keeps and the spec does not (its constants, its event sink, its events counter) is left out.

Init leaves the assignment of A's partitions to workers (``owner``) free. ``replay.replay`` takes
it from the whole trace (``replay.initial_owner``: the worker of each partition's first read, or,
when a take-over comes first, the worker that hung last before it). Here the trace comes a window
at a time, so the same choice is made as the events come: a partition's owner is set just before
the first event that names it (a read: ReadBatch, ReadOnlyBatch, ReadOther; or TakeOver) is taken. No step before that one reads
``owner[p]``, so the run is the one ``replay`` makes with the whole trace's ``initial_owner``.
Until then the engine's default (round robin) stands; TLC then hands on one state per possible
owner (when there are several workers), which this cannot match, and that window only runs again.

Mapping notes (engine field -> spec field): ``next_tx`` -> ``nextTx``, ``frm`` -> ``from`` (a
Python keyword), ``abort_seen`` -> ``abortSeen``, ``next_step`` -> ``nextStep``, ``told_depth`` ->
``toldDepth``, ``range_bad`` -> ``rangeBad``, ``order_bad`` -> ``orderBad``, ``lock_losses`` ->
``lockLosses``; the network, which the engine keeps as a list in insertion order without
duplicates, is a set. Nothing here is known not to map exactly.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any, TypeVar

from ref_impl.sim.replay_states import ReplayStates
from trace_check.values.tla import Record
from trace_check.values.tla import function_value as function

from .constants import Constants
from .engine import Engine
from .replay import Replayer
from .state import Durable, Msg, NetMsg, Session, Sup, Volatile, Worker

__all__ = ["SpecStates", "spec_states"]

_K = TypeVar("_K")
_V = TypeVar("_V")


def _map(d: Mapping[_K, _V], convert: Callable[[_V], Any]) -> Any:
    """The function ``d`` with each value converted."""
    return function({k: convert(v) for k, v in d.items()})


def msg(m: Msg) -> Record:
    """YdbTopics' $msg."""
    return Record(src=m.src, off=m.off)


def msgs(ms: Iterable[Msg]) -> tuple[Record, ...]:
    """A sequence of $msg (a supportive partition's data, a main partition of B)."""
    return tuple(msg(m) for m in ms)


def worker(w: Worker) -> Record:
    """YdbTopics' $worker; ``pos`` is SrcParts -> Int."""
    return Record(phase=w.phase, shape=w.shape, tx=w.tx, src=w.src, b=w.b, e=w.e, sent=w.sent, row=w.row, hung=w.hung,
                  pos=function(w.pos), ranges=w.ranges, reads=w.reads, closed=w.closed, gsent=function(w.gsent))


def session(s: Session) -> Record:
    """YdbTopics' $session."""
    return Record(
        st=s.st, shape=s.shape, w=s.w, src=s.src, b=s.b, e=s.e, dsts=frozenset(s.dsts), lock=s.lock, prepared=frozenset(s.prepared),
        refused=s.refused, results=frozenset(s.results), aborted=s.aborted, depth=s.depth, pdepth=s.pdepth,
        named=frozenset(s.named), bad=s.bad, prods=frozenset(s.prods), src2=s.src2, b2=s.b2, e2=s.e2,
    )


def net(m: NetMsg) -> Record:
    """YdbTopics' $net (the engine's ``frm`` is the spec's ``from``, a Python keyword)."""
    return Record({"type": m.type, "tx": m.tx, "from": m.frm, "to": m.to, "dst": m.dst, "m": msg(m.m), "dec": m.dec, "depth": m.depth})


def sup(s: Sup) -> Record:
    """YdbTopics' $sup."""
    return Record(st=s.st, data=msgs(s.data))


def durable(d: Durable) -> Record:
    """YdbTopics' $durable."""
    return Record(st=d.st, step=d.step, dec=d.dec, done=frozenset(d.done), depth=d.depth)


def volatile(v: Volatile) -> Record:
    """YdbTopics' $volatile."""
    return Record(
        st=v.st, step=v.step, own=v.own, dec=v.dec, rs=frozenset(v.rs), abortSeen=v.abort_seen, acked=frozenset(v.acked),
        done=frozenset(v.done), depth=v.depth, rsdepth=v.rsdepth,
    )


def state(e: Engine) -> Record:
    """YdbTopics' variables but ``action``, in the order the spec declares them."""
    return Record(
        owner=function(e.owner),
        cl=_map(e.cl, worker),
        kqp=_map(e.kqp, session),
        nextTx=e.next_tx,
        net=frozenset(net(m) for m in e.net),
        sup=_map(e.sup, lambda parts: _map(parts, sup)),
        committed=function(e.committed),
        target=_map(e.target, msgs),
        rows=tuple(e.rows),
        urows=function(e.urows),
        meta=_map(e.meta, lambda parts: _map(parts, lambda x: (x[0], x[1]))),
        sealed=_map(e.sealed, lambda n: n),
        pdur=_map(e.pdur, lambda txs: _map(txs, durable)),
        ptx=_map(e.ptx, lambda txs: _map(txs, volatile)),
        plan=function(e.plan),
        pending=_map(e.pending, lambda steps: frozenset((s, tx) for s, tx in steps)),
        nextStep=e.next_step,
        expired=function(e.expired),
        applied=_map(e.applied, function),
        votes=_map(e.votes, function),
        wacked=_map(e.wacked, lambda ms: frozenset(msg(m) for m in ms)),
        plain=frozenset(msg(m) for m in e.plain),
        skipped=frozenset(msg(m) for m in e.skipped),
        plainCommits=frozenset(Record(w=w, src=p, b=b, e=x, res=res) for w, p, b, x, res in e.plain_commits),
        told=function(e.told),
        toldDepth=function(e.told_depth),
        rangeBad=e.range_bad,
        orderBad=e.order_bad,
        hangs=e.hangs,
        restarts=e.restarts,
        losses=e.losses,
        lockLosses=e.lock_losses,
        deadlines=e.deadlines,
        reconnects=e.reconnects,
        plainSent=e.plain_sent,
    )


class _Owner:
    """``replay.initial_owner``, event by event: the owner Init chose for each partition, decided by
    the first event that names the partition (ReadBatch: its worker; TakeOver: the worker that hung
    last before it, other than the one taking over)."""

    def __init__(self, k: Constants) -> None:
        self.parts = set(k.src_parts)
        self.seen: set[int] = set()
        self.hung: list[str] = []

    def decide(self, ev: dict[str, Any]) -> tuple[int, str] | None:
        """Before event ``ev`` is taken: the partition it decides the owner of and that owner, if any."""
        a, p = ev.get("action"), ev.get("partition")
        if a == "Hang" and "worker" in ev:
            self.hung.append(ev["worker"])
        if a not in ("ReadBatch", "ReadOnlyBatch", "ReadOther", "PlainRead", "TakeOver") or p in self.seen or p not in self.parts \
                or "worker" not in ev:
            return None
        self.seen.add(p)
        if a != "TakeOver":
            return p, ev["worker"]
        others = [w for w in self.hung if w != ev["worker"]]
        return (p, others[-1]) if others else None


class SpecStates(ReplayStates):
    """The reference engine replaying one trace, a window of events at a time, and the YdbTopics
    state it is in after each window (every variable but ``action``)."""

    def __init__(self, constants: dict[str, Any]) -> None:
        # replay.replay's construction, with the owner decided as the events come (_Owner)
        self._replayer = Replayer(constants, [])
        self._owner = _Owner(self._replayer.engine.k)

    def take(self, ev: dict[str, Any]) -> bool:
        """As ``replay.replay`` takes it (``Replayer.step``), the partition's owner decided first."""
        r = self._replayer
        decided = self._owner.decide(ev)
        if decided is not None:
            r.engine.owner[decided[0]] = decided[1]
        ok = r.step(ev) is not None
        r.emitted.clear()  # only the step's own event is looked at: no need to keep them all
        return ok

    def state(self) -> Record:
        return state(self._replayer.engine)


def spec_states(constants: dict[str, Any]) -> SpecStates:
    """A new ``SpecStates`` for a trace whose header has these ``constants``."""
    return SpecStates(constants)
