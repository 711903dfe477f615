"""The C*One coordinator's storage steps over a real Cassandra, through ``cassandra-driver``
(issue 54; the ``cassandra`` extra).

What the coordinator keeps in Cassandra (specs/cone/Cone.tla, seed 003): the application's rows
and the index rows it maintains itself (the engine's keys ``("row", 0, pk)`` and ``("ix", tag, pk)``),
each a cell with a value, a write timestamp and the transaction that wrote it. Locks, the
transaction tables and the heartbeats live in the coordinators' memory, as in the design ("the
lock table in its memory"), so they are not stored. A commit also writes one row of the
``txns`` table (transaction, timestamp, coordinator) in the same batch: a new master reads the
group's highest timestamp from it (Cone.tla ``CoActivate``: its clock goes above the group's).

The steps, as the engine takes them (ref_impl/cone/engine.py):

- ``read(key)``: ``CoBegin`` and ``CoRead`` read at QUORUM (Cone.tla: "reads it at QUORUM");
  the cell that wins is Cassandra's, chosen by write timestamp (apache/cassandra
  ``db/rows/Cells.java`` ``resolveRegular``: the higher timestamp; at a tie a tombstone; then the
  greater value; the engine's ``beats`` is the same rule).
- ``commit(txn, coordinator, ts, mutations)``: ``CoCommit``: every mutation, index rows included,
  in ONE ``LOGGED`` batch at QUORUM, each statement ``USING TIMESTAMP ts``, ``ts`` the
  coordinator's Lamport timestamp (Cone.tla ``CoCommit``: ``max(clock, every timestamp read) + 1``).
  A logged batch is written to the batchlog first (apache/cassandra ``service/StorageProxy.java``
  ``mutateAtomically``: "the batchlog ... ensures that all mutations are eventually applied"), so
  it applies whole or is replayed whole. A tombstone mutation is a ``DELETE ... USING TIMESTAMP``.
- ``top_timestamp()``: the highest commit timestamp of the group, read at QUORUM (``CoActivate``).

The driver is imported when a store connects, so the engine and its tests never need it. This
module does not start Cassandra: probe.cassandra does (``txconform probe --target cassandra --hold``).
"""

from __future__ import annotations

import time
from typing import Any

import attrs

from .engine import INIT_DATA, INIT_TXN, NO_CELL, Cell, Key, Mut, Txn, txn_text

KEYSPACE = "cone"
REQUEST_SECONDS = 30.0  # a QUORUM write on three JVMs sharing two slow cores took < 1 s here
EACH_NODE = "each_node"  # the execution profile with a pool to every node (``batchlog``)
BATCHLOG_SECONDS = 2.0  # a node that does not answer its batchlog's query in this time: not known drained
SCHEMA_AGREEMENT_SECONDS = 60  # how long the nodes may take to agree on a new table (the driver's default: 10 s)


class StoreError(Exception):
    """The driver is missing, or Cassandra did not answer."""


def _txn_of(text: str | None) -> Txn:
    if not text or text == "init":
        return INIT_TXN
    client, _, attempt = text.rpartition("/")
    return (client, int(attempt))


@attrs.define
class CassandraStore:
    """The coordinator's storage in keyspace ``keyspace`` of a running cluster."""

    session: Any  # cassandra.cluster.Session
    cluster: Any = None  # cassandra.cluster.Cluster, shut down by close() when this store opened it
    keyspace: str = KEYSPACE

    @classmethod
    def connect(cls, contact_points: list[str], port: int, keyspace: str = KEYSPACE, seconds: float = REQUEST_SECONDS) -> CassandraStore:
        """A session to the nodes at ``contact_points`` (only those: the driver's load balancing is
        limited to them), protocol v5, requests bounded by ``seconds``."""
        try:
            from cassandra.cluster import EXEC_PROFILE_DEFAULT, Cluster, ExecutionProfile
            from cassandra.policies import RoundRobinPolicy, WhiteListRoundRobinPolicy
        except ImportError:
            raise StoreError("C*One over Cassandra needs cassandra-driver: pip install 'txconform[cassandra]'") from None
        profile = ExecutionProfile(load_balancing_policy=WhiteListRoundRobinPolicy(contact_points), request_timeout=seconds)
        # EACH_NODE: a pool to every node of the cluster, for the queries of one node's own tables
        # (its batchlog) made with ``host=``; the steps' requests keep to ``contact_points``.
        each = ExecutionProfile(load_balancing_policy=RoundRobinPolicy(), request_timeout=BATCHLOG_SECONDS)
        profiles = {EXEC_PROFILE_DEFAULT: profile, EACH_NODE: each}
        # A table created on one node is usable at QUORUM once the others have its schema: a write
        # before that fails (INCOMPATIBLE_SCHEMA). The driver waits for the nodes to agree after each
        # CREATE, 10 s by default; on two loaded cores three nodes took longer (stop 62's make test).
        cluster = Cluster(contact_points, port=port, protocol_version=5, execution_profiles=profiles, connect_timeout=seconds,
                          max_schema_agreement_wait=SCHEMA_AGREEMENT_SECONDS)
        try:
            session = cluster.connect()
        except Exception as e:
            cluster.shutdown()
            raise StoreError(f"cassandra at {', '.join(contact_points)} port {port}: {str(e)[:300]}") from None
        return cls(session, cluster, keyspace)

    def close(self) -> None:
        if self.cluster is not None:
            self.cluster.shutdown()
            self.cluster = None

    def _quorum(self) -> Any:
        from cassandra import ConsistencyLevel

        return ConsistencyLevel.QUORUM

    def create_schema(self, replication_factor: int) -> None:
        """The keyspace (SimpleStrategy, RF ``replication_factor``: one replica per node, a node per
        simulated data centre) and its two tables, created if missing; then the initial rows at
        timestamp 0 (Cone.tla ``InitData``)."""
        ks = self.keyspace
        self.session.execute(
            f"CREATE KEYSPACE IF NOT EXISTS {ks} WITH replication = {{'class': 'SimpleStrategy', 'replication_factor': {int(replication_factor)}}}"
        )
        # a cell per key; UPDATE writes no row marker, so a DELETE of the value leaves no row
        self.session.execute(f"CREATE TABLE IF NOT EXISTS {ks}.cells (kind text, tag int, pk text, value int, writer text, PRIMARY KEY ((kind, tag, pk)))")
        self.session.execute(f"CREATE TABLE IF NOT EXISTS {ks}.txns (txn text PRIMARY KEY, ts bigint, coordinator int)")
        if not self.session.cluster.control_connection.wait_for_schema_agreement(wait_time=SCHEMA_AGREEMENT_SECONDS):
            raise StoreError(f"keyspace {ks}: the nodes did not agree on its schema within {SCHEMA_AGREEMENT_SECONDS} s")
        self._initial_rows()

    def _initial_rows(self) -> None:
        """The first QUORUM write. A node answers on its native port before gossip has marked its
        peers up, so a cluster just started may answer Unavailable ("Cannot achieve consistency
        level QUORUM", alive_replicas 1), and a replica that has not yet applied the new table
        although the nodes agree on the schema version fails the write with INCOMPATIBLE_SCHEMA
        (seen with three nodes on two loaded cores): tried again, once a second, for at most
        SCHEMA_AGREEMENT_SECONDS. The initial rows are fixed cells at a fixed timestamp, so a write
        a replica already took is taken again unchanged."""
        from cassandra import Unavailable, WriteFailure
        from cassandra.cluster import NoHostAvailable

        deadline = time.monotonic() + SCHEMA_AGREEMENT_SECONDS
        while True:
            try:
                self.commit(INIT_TXN, 0, 0, INIT_DATA)
                return
            except (Unavailable, NoHostAvailable, WriteFailure) as e:
                if isinstance(e, WriteFailure) and "INCOMPATIBLE_SCHEMA" not in str(e):
                    raise
                if time.monotonic() >= deadline:
                    raise StoreError(f"keyspace {self.keyspace}: a QUORUM of replicas was not up within "
                                     f"{SCHEMA_AGREEMENT_SECONDS} s: {str(e)[:200]}") from None
                time.sleep(1.0)

    def _statement(self, m: Mut, ts: int, writer: Txn) -> tuple[str, tuple[Any, ...]]:
        (kind, tag, pk), value, tombstone = m
        ks = self.keyspace
        if tombstone:
            return (f"DELETE value, writer FROM {ks}.cells USING TIMESTAMP {int(ts)} WHERE kind = %s AND tag = %s AND pk = %s", (kind, tag, pk))
        return (
            f"UPDATE {ks}.cells USING TIMESTAMP {int(ts)} SET value = %s, writer = %s WHERE kind = %s AND tag = %s AND pk = %s",
            (value, txn_text(writer), kind, tag, pk),
        )

    def commit(self, txn: Txn, coordinator: int, ts: int, mutations: tuple[Mut, ...] | frozenset[Mut]) -> None:
        """``CoCommit``'s write: one LOGGED batch at QUORUM, every statement at timestamp ``ts``,
        the transaction's row with them; returns once a QUORUM of replicas applied it."""
        from cassandra.query import BatchStatement, BatchType

        batch = BatchStatement(batch_type=BatchType.LOGGED, consistency_level=self._quorum())
        for m in sorted(mutations, key=repr):
            batch.add(*self._statement(m, ts, txn))
        batch.add(f"INSERT INTO {self.keyspace}.txns (txn, ts, coordinator) VALUES (%s, %s, %s) USING TIMESTAMP {int(ts)}", (txn_text(txn), ts, coordinator))
        self.session.execute(batch)

    def read(self, key: Key) -> Cell:
        """The key's cell at QUORUM, as the engine's ``read_at`` returns it: (value, timestamp,
        tombstone, writer). A deleted or never written cell reads as no row: NO_CELL (Cassandra
        gives no write time for a tombstone, where the engine's cell keeps the tombstone's)."""
        from cassandra.query import SimpleStatement

        kind, tag, pk = key
        q = SimpleStatement(
            f"SELECT value, writer, writetime(value) AS wt FROM {self.keyspace}.cells WHERE kind = %s AND tag = %s AND pk = %s",
            consistency_level=self._quorum(),
        )
        r = self.session.execute(q, (kind, tag, pk)).one()
        if r is None or r.value is None:
            return NO_CELL
        return (int(r.value), int(r.wt), False, _txn_of(r.writer))

    def top_timestamp(self) -> int:
        """The group's highest commit timestamp, at QUORUM (``CoActivate`` lifts a new master's clock above it)."""
        from cassandra.query import SimpleStatement

        q = SimpleStatement(f"SELECT ts FROM {self.keyspace}.txns", consistency_level=self._quorum())
        return max((int(r.ts) for r in self.session.execute(q)), default=0)

    def batchlog_queries(self) -> list[tuple[str, Any]]:
        """Each node's own batchlog, asked for at once: ``(address, ResponseFuture)`` for every node
        the driver holds up. ``system.batches`` is a node-local table (apache/cassandra
        ``db/SystemKeyspace.java`` BATCHES): a logged batch's entry is written to two other nodes
        of the coordinator node's data centre (``locator/ReplicaPlans.java`` forBatchlogWrite),
        removed once the batch applied at its consistency level, and replayed by the node that
        holds it once older than twice the write timeout (``batchlog/BatchlogManager.java``).
        So the group's batchlog is the union of every node's, read one node at a time."""
        cluster = self.session.cluster
        query = "SELECT id FROM system.batches LIMIT 10"
        return [
            (h.address, self.session.execute_async(query, execution_profile=EACH_NODE, host=h, timeout=BATCHLOG_SECONDS))
            for h in sorted(cluster.metadata.all_hosts(), key=lambda h: str(h.address))
            if h.is_up is not False
        ]

    def batchlog(self) -> dict[str, int | None]:
        """The entries in each node's batchlog (None: the node did not answer in BATCHLOG_SECONDS)."""
        out: dict[str, int | None] = {}
        for address, f in self.batchlog_queries():
            try:
                out[str(address)] = len(list(f.result()))
            except Exception:
                out[str(address)] = None
        return out

    def committed(self) -> dict[str, int]:
        """Every committed transaction and its timestamp, at QUORUM."""
        from cassandra.query import SimpleStatement

        q = SimpleStatement(f"SELECT txn, ts FROM {self.keyspace}.txns", consistency_level=self._quorum())
        return {str(r.txn): int(r.ts) for r in self.session.execute(q)}
