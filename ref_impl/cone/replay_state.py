"""The Cone spec state the C*One reference engine is in after a trace's first events: what lets the
windows of a long trace run in parallel (``Protocol.spec_states``; the replay is ``replay.replay``'s,
without bugs). A mistake here costs a run, never a verdict (trace_check/traces/windows.py:
``check_windows``).

Values, as ``parse_value`` reads TLC's print of the state: ``bool``, ``int``, ``str``; a set is a
``frozenset``; a tuple (a key, a transaction id, a mutation, ``faults``) and a function whose domain
is ``1..n`` (``co``, ``lk``, ``txs`` and ``unborn`` over the coordinators 1..3, ``batches``) is a
``tuple``; one whose domain is strings that TLC prints as field names (a record, ``cl`` over the
clients) is a ``Record``; any other (a coordinator's transaction table, over ``Clients \\X
Attempts``) is an ``FnMap``; an empty function is ``()``. Every variable of Cone is given but
``action`` (history only) and the trace spec's cursor ``l``. What the engine keeps and the spec does
not (its constants, its event sink, its events counter) is left out.

Mapping notes (engine field -> spec field): a coordinator's transaction table holds only the
transactions the engine has state of; the spec's holds every one of ``TxnIds`` (``NoTx`` for the
others, as after ``Forget``, ``Crash`` and ``DcFail``). ``dc_down`` -> ``dcDown``; ``hist`` (a list
of ``(t, ts, rd, ks)``, the spec's $commit) and the other sets the engine keeps as lists or mutable
sets become frozensets; ``faults`` (crashes, pauses, cuts, drops, data centres lost) is the spec's
5-tuple in the same order. Nothing here is known not to map exactly.
"""

from __future__ import annotations

from typing import Any

from ref_impl.sim.replay_states import ReplayStates
from trace_check.values.tla import Record
from trace_check.values.tla import function_value as function

from .constants import COORDS
from .engine import Batch, Client, Coord, Engine, Tx
from .replay import Replayer

__all__ = ["SpecStates", "spec_states"]


def client(c: Client) -> Record:
    """Cone's $client."""
    return Record(st=c.st, att=c.att, co=c.co, pc=c.pc, n=c.n, ryw=c.ryw)


def coord(c: Coord) -> Record:
    """Cone's $coord."""
    return Record(up=c.up, paused=c.paused, fenced=c.fenced, active=c.active, clock=c.clock)


def tx(t: Tx) -> Record:
    """Cone's $tx: ``rd`` a set of <<key, txn, ts>>, ``wr`` a set of $mut (tuples already)."""
    return Record(st=t.st, ts=t.ts, rd=frozenset(t.rd), wr=frozenset(t.wr))


NO_TX = tx(Tx())  # Cone's NoTx


def batch(b: Batch) -> Record:
    """Cone's $batch."""
    return Record(
        t=b.t, co=b.co, ts=b.ts, muts=frozenset(b.muts), logged=b.logged, blog=b.blog, bdc=frozenset(b.bdc),
        pend=frozenset(b.pend), applied=frozenset(b.applied),
    )


class _Kept:
    """``batches`` and ``hist``, converted entry by entry and kept from one state to the next, so
    that a window's state costs the entries that changed, not every batch of the trace again.

    Both only grow at their end (Append; ``hist`` a set the engine keeps as a list, in the order
    committed). A batch changes only while it has a replica left to reach (``pend``: ApplyMutation,
    DropMutation) or a batchlog entry (``blog``: BatchlogReplay, CoCommitDone), and otherwise only
    when a data centre is lost (DcFail removes it from ``bdc``); so the record of a batch with
    neither is kept until the next DcFail."""

    def __init__(self) -> None:
        self.settled: list[Record] = []  # the records of the first batches, none of them to change
        self.dc_fails = 0  # the DcFails when they were converted
        self.hist: list[Record] = []

    def batches(self, e: Engine) -> tuple[Record, ...]:
        settled, batches = self.settled, e.batches
        if e.faults[4] != self.dc_fails:
            settled.clear()
            self.dc_fails = e.faults[4]
        while len(settled) < len(batches):
            b = batches[len(settled)]
            if b.pend or b.blog:
                break
            settled.append(batch(b))
        return tuple(settled) + tuple(batch(b) for b in batches[len(settled) :])

    def commits(self, e: Engine) -> frozenset[Record]:
        """``hist``, the spec's set of $commit: the engine's ``(t, ts, rd, ks)``, one per CoCommit."""
        kept = self.hist
        del kept[len(e.hist) :]  # never shorter in a run; kept exact all the same
        kept.extend(Record(t=t, ts=ts, rd=frozenset(rd), ks=frozenset(ks)) for t, ts, rd, ks in e.hist[len(kept) :])
        return frozenset(kept)


def state(e: Engine, txn_ids: list[tuple[str, int]], kept: _Kept) -> Record:
    """Cone's variables but ``action``, in the order the spec declares them."""
    return Record(
        cl=function({c: client(x) for c, x in e.cl.items()}),
        co=function({x: coord(e.co[x]) for x in COORDS}),
        lk=function({x: frozenset(e.lk[x]) for x in COORDS}),
        txs=function({x: function({t: tx(e.txs[x][t]) if t in e.txs[x] else NO_TX for t in txn_ids}) for x in COORDS}),
        unborn=function({x: frozenset(e.unborn[x]) for x in COORDS}),
        cut=frozenset(e.cut),
        dead=frozenset(e.dead),
        batches=kept.batches(e),
        dcDown=frozenset(e.dc_down),
        hist=kept.commits(e),
        told=frozenset(e.told),
        faults=tuple(e.faults),
    )


class SpecStates(ReplayStates):
    """The C*One reference engine replaying one trace, a window of events at a time, and the Cone
    state it is in after each window (every variable but ``action``)."""

    def __init__(self, constants: dict[str, Any]) -> None:
        self._replayer = Replayer(constants)  # replay.replay's construction
        k = self._replayer.engine.k
        self._txn_ids = [(c, a) for c in k.clients for a in range(1, k.max_attempts + 1)]  # Cone's TxnIds
        self._kept = _Kept()

    def take(self, ev: dict[str, Any]) -> bool:
        """As ``replay.replay`` takes it (``Replayer.step``)."""
        ok = self._replayer.step(ev) is not None
        self._replayer.emitted.clear()  # only the step's own event is looked at: no need to keep them all
        return ok

    def state(self) -> Record:
        return state(self._replayer.engine, self._txn_ids, self._kept)


def spec_states(constants: dict[str, Any]) -> SpecStates:
    """A new ``SpecStates`` for a trace whose header has these ``constants``."""
    return SpecStates(constants)
