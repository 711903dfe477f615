"""A run of the reference engine whose storage steps also go to a real Cassandra (issue 54, first
slice): every ``CoCommit`` writes its logged batch through ``CassandraStore.commit`` (QUORUM,
``USING TIMESTAMP`` the engine's Lamport timestamp, the index rows in the same batch), and every
storage read of ``CoBegin`` and ``CoRead`` also reads the key from Cassandra at QUORUM, next to
the engine's own answer.

The trace is the engine's, in the shared format (``txconform check`` validates it against
specs/cone); ``disagreements`` lists each read where Cassandra's answer (value, timestamp) was not
the engine's. Without faults the two must agree: a key is read only under its lock, and a lock is
released only once a QUORUM applied the batch (Cone.tla ``CoCommitDone``), which is when Cassandra's
QUORUM write returned. What this slice does not do: the faults (a crashed or paused coordinator, a
stopped node, a batch waiting in the real batchlog) and the coordinators as processes of their own.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import attrs

from trace_check.traces import format as trace_format

from . import trace
from .cassandra_store import CassandraStore
from .engine import Cell, Engine, Key, Mut, Txn, key_text
from .sim import GENERATOR, Faults, Simulation, Workload


@attrs.frozen
class Read:
    key: str
    engine: tuple[int, int]  # (value, timestamp) the spec's QUORUM read returned
    cassandra: tuple[int, int]  # and Cassandra's


def _visible(cell: Cell) -> tuple[int, int]:
    """A cell as a read shows it: a tombstone or no cell is (0, -1) (Cassandra returns no row)."""
    return (0, -1) if cell[2] else (cell[0], cell[1])


class StoredEngine(Engine):
    """The engine, with its commits written to Cassandra and its reads compared with Cassandra's."""

    def __init__(self, store: CassandraStore, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.store = store
        self.reads: list[Read] = []
        self.commits = 0

    def read_at(self, q: tuple[int, ...], k: Key) -> Cell:
        cell = super().read_at(q, k)
        self.reads.append(Read(key_text(k), _visible(cell), _visible(self.store.read(k))))
        return cell

    def _new_batch(self, t: Txn, x: int, ts: int, muts: frozenset[Mut], logged: bool) -> int:
        i = super()._new_batch(t, x, ts, muts, logged)
        self.store.commit(t, x, ts, muts)
        self.commits += 1
        return i


@attrs.frozen
class StoredRun:
    path: Path
    events: int
    commits: int
    reads: tuple[Read, ...]

    @property
    def disagreements(self) -> tuple[Read, ...]:
        return tuple(r for r in self.reads if r.engine != r.cassandra)


def run(store: CassandraStore, out: Path, workload: str = "album", seed: int = 0, max_events: int = 2000) -> StoredRun:
    """One fault-free run of ``workload`` with ``seed`` over ``store`` (a fresh keyspace with
    ``create_schema`` done); its trace written to ``out``."""
    w = Workload.parse(workload)
    f = Faults()
    events: list[dict[str, Any]] = []
    sim = Simulation(w, f, seed, events.append, max_events=max_events)
    engine = StoredEngine(store, sim.k, events.append)
    sim.engine = engine
    sim.run()
    head = trace_format.header(
        "cone", trace.SPEC_DIR, trace.SPEC_MODULES, sim.k.to_spec(), seed, GENERATOR, trace.LOGGED, workload=w.describe(), faults=f.describe(), bugs=[]
    )
    trace_format.write_trace(out, head, events, trace.ORDER)
    return StoredRun(out, len(events), engine.commits, tuple(engine.reads))
