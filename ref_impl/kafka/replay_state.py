"""The spec state the reference broker is in after a trace's events: what lets windows of a long
trace run in parallel (``Protocol.spec_states``, trace_check/traces/windows.py:
``check_windows``).

A window can only know the states it starts from once the window before it has ended. The broker
replays the trace (as ``replay.replay`` does) far faster than TLC checks it, and says which state
the next window will start from; that window runs from it at once. Its verdict stands only if the
window before hands on exactly this one state, so a mistake here costs a run, never a verdict.

The values are ``trace_check.values.tla``'s, as ``parse_value`` reads TLC's ``ToString`` of the
state: a function whose domain is 1..n is a tuple, one whose domain is strings a ``Record``, any
other a ``FnMap``, an empty one ``()``. ``action`` (history only: ``Protocol.history``) is left
out. What the broker keeps and the spec does not (an application's decision, the payloads) is
left out too.
"""

from __future__ import annotations

from typing import Any

from ref_impl.sim.replay_states import ReplayStates
from trace_check.values.tla import Record
from trace_check.values.tla import function_value as fn

from .cluster import Cluster
from .constants import Constants
from .log import Entry
from .messages import Msg
from .replay import agrees, take_step
from .state import Client, Coord, Group, Held, ProducerState, TxnEntry


def msg(m: Msg) -> Record:
    """KafkaTxn's $msg."""
    return Record(type=m.type, tid=m.tid, inst=m.inst, epoch=m.epoch, part=m.part, seq=m.seq, commit=m.commit,
                  cepoch=m.cepoch, gtx=m.gtx, endBy=m.end_by, att=m.att, err=m.err, val=m.val, gen=m.gen)


def client(c: Client) -> Record:
    """KafkaTxn's $client (``decision`` is the application's, not the spec's)."""
    return Record(st=c.st, epoch=c.epoch, txn=c.txn, pc=c.pc, out=c.out, req=msg(c.req), seq=fn(c.seq), hung=c.hung,
                  commit=c.commit, pos=c.pos, gen=c.gen, fly=frozenset(msg(f) for f in c.fly), sent=c.sent, bump=c.bump)


def tentry(e: TxnEntry) -> Record:
    """KafkaTxn's $tentry: a record of __transaction_state."""
    return Record(st=e.st, epoch=e.epoch, parts=frozenset(e.parts), gtx=e.gtx, endBy=e.end_by, last=e.last)


def coord(c: Coord) -> Record:
    """KafkaTxn's $coord."""
    pending = tuple(Record(entry=tentry(p.entry), replies=frozenset(msg(r) for r in p.replies)) for p in c.pending)
    return Record(st=c.st, epoch=c.epoch, parts=frozenset(c.parts), gtx=c.gtx, endBy=c.end_by, last=c.last,
                  todo=frozenset(c.todo), pending=pending)


def entry(e: Entry) -> Record:
    """KafkaLog's $entry (the batch's payload, ``records``, is the broker's alone)."""
    return Record(kind=e.kind, pid=e.pid, epoch=e.epoch, seq=e.seq, commit=e.commit, cepoch=e.cepoch, gtx=e.gtx,
                  endBy=e.end_by, zombie=e.zombie, src=e.src)


def pstate(s: ProducerState) -> Record:
    """KafkaTxn's $pstate (``start`` is the spec's ``from``)."""
    return Record(epoch=s.epoch, lastSeq=s.last_seq, seqs=frozenset(s.seqs), open=s.open, cepoch=s.cepoch,
                  **{"from": s.start}, vepoch=s.vepoch, vseq=s.vseq)


def held(h: Held) -> Record:
    return Record(m=msg(h.m), void=h.void)


def group(g: Group) -> Record:
    return Record(gen=g.gen, owner=g.owner, committed=g.committed, pending=fn(g.pending),
                  groups=fn({name: fn(offsets) for name, offsets in g.groups.items()}))


class SpecStates(ReplayStates):
    """The broker replaying one trace, window by window. A log's entries are converted once and
    kept (a log only grows at its end or is cut back to a prefix: ``Protocol.logs``), so each
    state costs what changed since the last, plus the rest of the state."""

    failures = (KeyError, TypeError, ValueError)  # an event the broker's step cannot read

    def __init__(self, constants: dict[str, Any]) -> None:
        self.cluster = Cluster(Constants.from_spec({**constants, "Bugs": []}), self._emitted)
        self.taken = 0
        self.last: dict[str, Any] | None = None
        self._plog: dict[Any, tuple[list[Any], list[Record]]] = {}
        self._tlog: dict[Any, tuple[list[Any], list[Record]]] = {}

    def _emitted(self, ev: dict[str, Any]) -> None:
        self.taken += 1
        self.last = ev

    def take(self, ev: dict[str, Any]) -> bool:
        """As ``replay.replay`` takes it: one step that emits exactly this event."""
        before = self.taken
        return take_step(self.cluster, ev) and self.taken == before + 1 and agrees(self.last, ev)

    def _log(self, kept: dict[Any, tuple[list[Any], list[Record]]], key: Any, entries: list[Any],
             convert: Any) -> tuple[Record, ...]:
        sources, done = kept.setdefault(key, ([], []))
        same = 0  # the broker's entries are frozen: the ones converted before are the same objects
        for a, b in zip(sources, entries, strict=False):
            if a is not b:
                break
            same += 1
        del sources[same:], done[same:]
        sources.extend(entries[same:])
        done.extend(convert(e) for e in entries[same:])
        return tuple(done)

    def state(self) -> Record:
        c = self.cluster
        plog = {p: self._log(self._plog, p, log.entries, entry) for p, log in c.plog.items()}
        tlog = {t: self._log(self._tlog, t, entries, tentry) for t, entries in c.tlog.items()}
        return Record(
            net=frozenset(msg(m) for m in c.net),
            cl=fn({i: client(x) for i, x in c.cl.items()}),
            tc=fn({t: coord(x) for t, x in c.tc.items()}),
            tlog=fn(tlog),
            cepoch=c.cepoch,
            plog=fn(plog),
            pst=fn({p: fn({t: pstate(s) for t, s in states.items()}) for p, states in c.pst.items()}),
            held=fn({p: frozenset(held(h) for h in hs) for p, hs in c.held.items()}),
            lag=fn(dict(c.lag)),
            gc=group(c.gc),
            hangs=c.hangs,
            retries=c.retries,
            losses=c.losses,
            failovers=c.failovers,
            appendFails=c.append_fails,
        )


def spec_states(constants: dict[str, Any]) -> SpecStates:
    return SpecStates(constants)
