"""The client library applications use: Kafka's Producer and Consumer API shapes.

Calls never block: each returns at once or returns a ``Future`` that the simulation completes
(``ref_impl.sim`` runs applications as generators that ``yield`` futures). Errors are Kafka's.

The producer runs the spec's client program (KafkaTxn), so a transaction writes one batch to each
output partition, in partition order; ``send`` adds records to those batches. After an abortable
error the client aborts the transaction on its own, and ``commit_transaction`` reports
``TransactionAbortedError``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import attrs

from .actions import ACTION, run
from .cluster import Cluster
from .state import Client, Inst


class KafkaError(Exception):
    """A Kafka error code, as the client library raises it."""

    def __init__(self, code: str, detail: str = "") -> None:
        super().__init__(f"{code}: {detail}" if detail else code)
        self.code = code


class ProducerFencedError(KafkaError):
    def __init__(self, detail: str = "") -> None:
        super().__init__("PRODUCER_FENCED", detail)


class TransactionAbortedError(KafkaError):
    def __init__(self, detail: str = "") -> None:
        super().__init__("TRANSACTION_ABORTED", detail)


class IllegalStateError(KafkaError):
    def __init__(self, detail: str) -> None:
        super().__init__("ILLEGAL_STATE", detail)


@attrs.define
class Future:
    """Done once ``ready()`` holds; ``result()`` then returns the value or raises the error."""

    ready: Callable[[], bool]
    outcome: Callable[[], Any]

    def done(self) -> bool:
        return self.ready()

    def result(self) -> Any:
        if not self.ready():
            raise IllegalStateError("the future is not done")
        return self.outcome()


def done_future(value: Any = None) -> Future:
    return Future(lambda: True, lambda: value)


class Producer:
    """A transactional producer: one instance of a transactional.id."""

    def __init__(self, cluster: Cluster, transactional_id: str, instance: int = 1) -> None:
        self.cluster = cluster
        self.inst: Inst = (transactional_id, instance)
        if self.inst not in cluster.cl:
            raise IllegalStateError(f"no producer instance {self.inst} in this cluster's constants")

    @property
    def _c(self) -> Client:
        return self.cluster.cl[self.inst]

    def _fail(self) -> Any:
        c = self._c
        if c.st == "fenced":
            raise ProducerFencedError(f"{self.inst[0]} instance {self.inst[1]} was fenced by a newer instance")
        if c.st == "failed":
            raise KafkaError("INVALID_TXN_STATE", "the coordinator refused the request; the producer must be closed")
        return None

    def init_transactions(self) -> Future:
        if not run(self.cluster, "StartInstance", self.inst):
            raise IllegalStateError(f"init_transactions: producer {self.inst} is {self._c.st}")
        return Future(lambda: self._c.st != "init", self._fail)

    def begin_transaction(self) -> None:
        if not run(self.cluster, "BeginTxn", self.inst):
            c = self._c
            raise IllegalStateError(f"begin_transaction: producer is {c.st} after {c.txn} transaction(s)")

    def send(self, partition: int, value: Any) -> None:
        c = self._c
        if c.st != "intxn":
            raise IllegalStateError("send: no transaction in progress; call begin_transaction first")
        if partition not in self.cluster.plog:
            raise KafkaError("UNKNOWN_TOPIC_OR_PARTITION", f"partition {partition}")
        key = (self.inst[0], self.inst[1], c.txn, partition)
        self.cluster.batches.setdefault(key, []).append(value)

    def send_offsets_to_transaction(self, offset: int) -> None:
        """Commit the input position ``offset`` with the transaction (consume-transform-produce)."""
        c = self._c
        if not self.cluster.k.ctp:
            raise IllegalStateError("send_offsets_to_transaction: this cluster has no input (InputSize = 0)")
        if offset != c.pos + 1:
            raise IllegalStateError(f"send_offsets_to_transaction: the position after record {c.pos} is {c.pos + 1}")

    def flush(self) -> Future:
        """Done when every batch of the transaction is acknowledged (or failed)."""
        last = self.cluster.k.last_produce_pc
        return Future(lambda: self._c.st != "intxn" or (self._c.pc > last and not self._c.fly), lambda: None)

    def _end(self, commit: bool) -> Future:
        c = self._c
        if c.st != "intxn":
            raise IllegalStateError(f"{'commit' if commit else 'abort'}_transaction: no transaction in progress")
        if not commit and not self.cluster.k.app_aborts:
            raise IllegalStateError("abort_transaction: this run's constants say applications never abort (AppAborts)")
        c.decision = commit
        txn = c.txn

        def outcome() -> Any:
            self._fail()
            if commit and not self._c.commit:
                raise TransactionAbortedError(f"transaction {txn} was aborted after an abortable error")
            return None

        # with a KIP-360 epoch bump after the abort, done once the bump is (abortTransaction's result
        # is the InitProducerId's)
        return Future(lambda: self._c.st not in ("intxn", "init"), outcome)

    def commit_transaction(self) -> Future:
        return self._end(True)

    def abort_transaction(self) -> Future:
        return self._end(False)


class Consumer:
    """A consumer: of the input partition in the application's group (consume-transform-produce),
    or of the output partitions with an isolation level. With a ``group_id`` and ``assign()``, a
    standalone consumer commits its positions in that group (``commit``, ``committed``)."""

    def __init__(self, cluster: Cluster, isolation_level: str = "read_committed",
                 member: Inst | None = None, group_id: str | None = None) -> None:
        if isolation_level not in ("read_committed", "read_uncommitted"):
            raise IllegalStateError("isolation_level must be read_committed or read_uncommitted")
        if member is not None and group_id is not None:
            raise IllegalStateError("a member of the application's group commits with its transaction "
                                    "(send_offsets_to_transaction), not with a group_id of its own")
        self.cluster = cluster
        self.isolation_level = isolation_level
        self.member = member  # the producer instance this group member runs with
        self.group_id = group_id
        self.positions: dict[int, int] = {}

    def assign(self, partitions: list[int]) -> None:
        for p in partitions:
            if p not in self.cluster.plog:
                raise KafkaError("UNKNOWN_TOPIC_OR_PARTITION", f"partition {p}")
            self.positions.setdefault(p, 0)

    def poll(self, partitions: list[int] | None = None) -> dict[int, list[tuple[int, Any]]]:
        """Fetch every assigned partition (or those given) from its position:
        {partition: [(offset, batch)]}."""
        out = {}
        for p, start in sorted(self.positions.items()):
            if partitions is not None and p not in partitions:
                continue
            fetch = (p, self.isolation_level, start)
            if not ACTION["Fetch"].enabled(self.cluster, fetch):
                raise KafkaError("UNKNOWN_TOPIC_OR_PARTITION", f"partition {p}")
            offsets = self.cluster.fetch(*fetch)  # the Fetch step (its effect), which returns the offsets
            log = self.cluster.plog[p].entries
            out[p] = [(o, log[o].records) for o in offsets]
            if offsets:
                self.positions[p] = offsets[-1] + 1
        return out

    def commit(self, offsets: dict[int, int] | None = None) -> None:
        """Commit ``offsets`` ({partition: position}; default: the current positions) in this
        consumer's group, one OffsetCommit per partition."""
        if self.group_id is None:
            raise IllegalStateError("commit: this consumer has no group_id (Consumer(..., group_id=...))")
        for p, offset in sorted((self.positions if offsets is None else offsets).items()):
            if not run(self.cluster, "OffsetCommit", (self.group_id, p, offset)):
                raise KafkaError("OFFSET_OUT_OF_RANGE", f"partition {p}: offset {offset} is past the log end")

    # --- group membership (the input side of consume-transform-produce) ---

    def subscribe(self) -> Future:
        """Join the group; done once this member owns the input partition."""
        assert self.member is not None, "subscribe needs the member's producer instance"
        m = self.member
        return Future(lambda: run(self.cluster, "JoinGroup", m) or self.cluster.owns_input(m), lambda: None)

    def committed(self) -> Any:
        """A standalone consumer: {partition: committed position, or None} of its assigned
        partitions in its group. A member of the application's group: a Future of the
        OffsetFetch(require_stable) of the input partition, whose value is the position, or None
        after UNSTABLE_OFFSET_COMMIT (ask again)."""
        if self.member is None:
            if self.group_id is None:
                raise IllegalStateError("committed: this consumer has no group_id (Consumer(..., group_id=...))")
            stored = self.cluster.gc.groups.get(self.group_id, {})
            return {p: stored.get(p) for p in sorted(self.positions)}
        m, cl = self.member, self.cluster
        if not run(cl, "FetchOffset", m):
            raise IllegalStateError(f"committed: member {m} cannot fetch its offset now")
        return Future(lambda: not cl.cl[m].out, lambda: cl.cl[m].pos if cl.cl[m].pos >= 0 else None)

    def input_done(self) -> None:
        assert self.member is not None
        if not run(self.cluster, "InputDone", self.member):
            raise IllegalStateError("input_done: the member has not consumed the whole input")
