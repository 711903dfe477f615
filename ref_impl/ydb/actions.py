"""Every action of the engine, in one table: the spec's ``Next`` (YdbTopics).

An ``Action`` is a spec action: its name, what it ranges over, its guard and its effect (the
``Engine`` methods ``pq_calc_enabled`` and ``pq_calc`` for ``PqCalc``), the trace events it emits
(its name, except ``PartitionApply``: ``PartitionCommit`` or ``PartitionRollback``, and
``PqWrite``: ``PqWrite`` or ``PqWriteRefused``, as the spec's ``action`` variable names them), who
takes the step, and whether it is a fault. The scheduler (``sim``) lists the enabled steps from
this table, ``replay`` finds each event's action in it, and the SDK (``api``) takes its steps
through it. The order of the table is the order in which the scheduler lists steps: the same seed
gives the same run only as long as it stays the same.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

import attrs

from .engine import Engine
from .state import RS, RS_ACK, WRITE, NetMsg

# What an action ranges over (its argument).
WORKER = "worker"
READ = "(worker, partition, end)"
RANGE = "(worker, begin, end)"
WORKER_PARTITION = "(worker, partition)"
WRITER = "(worker, writer)"
PLAIN = "(producer, offset)"
TXN = "transaction"
MESSAGE = "message"
TABLET = "tablet"
DST = "partition of B"
TABLET_TXN = "(tablet, transaction)"
TABLET_TXN_PARTITION = "(tablet, transaction, partition)"
TABLET_TXN_PEER = "(tablet, transaction, peer)"
TUPLE_ARGS = (READ, RANGE, WORKER_PARTITION, WRITER, PLAIN, TABLET_TXN, TABLET_TXN_PARTITION, TABLET_TXN_PEER)

# Who takes the step: the scheduler picks it among the enabled steps, or the SDK takes it when
# the application calls it (receive_batch_with_tx is ReadBatch, writer.write is TxWrite, ...).
SCHEDULER = "scheduler"
APPLICATION = "application"

# How the scheduler weighs an enabled step: faults less often than normal steps.
NORMAL, FAULT = 10, 1

MESSAGE_TYPES = (WRITE, RS, RS_ACK)


@attrs.frozen
class Action:
    name: str  # the spec action
    over: str  # what it ranges over: WORKER, TXN, MESSAGE, ...
    guard: Callable[..., bool]  # Engine.<action>_enabled: reads the state only
    effect: Callable[..., None]  # Engine.<action>: only where the guard holds; emits one event
    emits: tuple[str, ...] = ()  # the trace events it emits (default: its name)
    takes: tuple[str, ...] = ()  # MESSAGE: the message types it takes
    by: str = SCHEDULER
    fault: bool = False

    @property
    def events(self) -> tuple[str, ...]:
        return self.emits or (self.name,)

    def _call(self, f: Callable[..., Any], e: Engine, arg: Any) -> Any:
        if self.over == WRITER and isinstance(arg, str):
            arg = (arg, 0)  # a worker alone: its transaction's first writer (every copy has only it)
        return f(e, *arg) if self.over in TUPLE_ARGS else f(e, arg)

    def enabled(self, e: Engine, arg: Any) -> bool:
        if self.over == MESSAGE and (not isinstance(arg, NetMsg) or arg.type not in self.takes):
            return False
        return bool(self._call(self.guard, e, arg))

    def apply(self, e: Engine, arg: Any) -> None:
        """The effect; the guard must hold."""
        before = e.events
        self._call(self.effect, e, arg)
        assert e.events == before + 1, f"{self.name} emitted {e.events - before} events"

    def run(self, e: Engine, arg: Any) -> bool:
        """Take the step if the guard holds; whether it did."""
        if not self.enabled(e, arg):
            return False
        self.apply(e, arg)
        return True

    @property
    def weight(self) -> int:
        return FAULT if self.fault else NORMAL


def _sdk(name: str, over: str, guard: Callable[..., bool], effect: Callable[..., None]) -> Action:
    return Action(name, over, guard, effect, by=APPLICATION)


def _msg(name: str, takes: tuple[str, ...], guard: Callable[..., bool], effect: Callable[..., None], **kw: Any) -> Action:
    return Action(name, MESSAGE, guard, effect, takes=takes, **kw)


E = Engine
ACTIONS: tuple[Action, ...] = (
    # The worker's SDK: the application's calls.
    _sdk("ReadBatch", READ, E.read_batch_enabled, E.read_batch),
    _sdk("ReadOnlyBatch", READ, E.read_only_batch_enabled, E.read_only_batch),
    _sdk("BeginWrites", WORKER, E.begin_writes_enabled, E.begin_writes),
    _sdk("ReadMore", READ, E.read_more_enabled, E.read_more),
    _sdk("ReadOther", READ, E.read_other_enabled, E.read_other),
    _sdk("UpdateOffsets", RANGE, E.update_offsets_enabled, E.update_offsets),
    _sdk("TxWrite", WRITER, E.tx_write_enabled, E.tx_write),
    _sdk("NonTxWrite", WORKER, E.non_tx_write_enabled, E.non_tx_write),
    _sdk("OtherProducerWrite", WORKER, E.other_producer_write_enabled, E.other_producer_write),
    Action("PlainWrite", PLAIN, E.plain_write_enabled, E.plain_write, emits=("PlainWrite", "PlainWriteSkipped"),
           by=APPLICATION),
    # The SDK's writer reconnects on its own (no call of the application): after a fault.
    Action("Resend", WORKER, E.resend_enabled, E.resend, fault=True),
    _sdk("ForceClose", WORKER, E.force_close_enabled, E.force_close),
    _sdk("TableWrite", WORKER, E.table_write_enabled, E.table_write),
    _sdk("Flush", WORKER, E.flush_enabled, E.flush),
    _sdk("CommitTx", WORKER, E.commit_tx_enabled, E.commit_tx),
    _sdk("RollbackTx", WORKER, E.rollback_tx_enabled, E.rollback_tx),
    # The workers' faults and the consumer group.
    Action("Hang", WORKER, E.hang_enabled, E.hang, fault=True),
    Action("Resume", WORKER, E.resume_enabled, E.resume, fault=True),
    Action("TakeOver", WORKER_PARTITION, E.take_over_enabled, E.take_over),
    # Reads outside a transaction and their commits (reader.receive_batch, reader.commit).
    _sdk("PlainRead", READ, E.plain_read_enabled, E.plain_read),
    Action("CommitOffset", WORKER, E.commit_offset_enabled, E.commit_offset,
           emits=("CommitOffset", "CommitOffsetStale", "CommitOffsetRefused"), by=APPLICATION),
    # The KQP session and the coordinator, per transaction.
    Action("KqpResult", TXN, E.kqp_result_enabled, E.kqp_result),
    Action("CoordPlan", TXN, E.coord_plan_enabled, E.coord_plan),
    Action("PlanDeadline", TXN, E.plan_deadline_enabled, E.plan_deadline, fault=True),
    Action("LockLost", TXN, E.lock_lost_enabled, E.lock_lost, fault=True),
    Action("PqLockLost", TXN, E.pq_lock_lost_enabled, E.pq_lock_lost),
    # Messages in flight.
    _msg("PqWrite", (WRITE,), E.pq_write_enabled, E.pq_write, emits=("PqWrite", "PqWriteSkipped", "PqWriteRefused")),
    _msg("PqWriteAckLost", (WRITE,), E.pq_write_ack_lost_enabled, E.pq_write_ack_lost, fault=True),
    _msg("PqReadSet", (RS,), E.pq_read_set_enabled, E.pq_read_set),
    _msg("PqReadSetAck", (RS_ACK,), E.pq_read_set_ack_enabled, E.pq_read_set_ack),
    _msg("Lose", MESSAGE_TYPES, E.lose_enabled, E.lose, fault=True),
    # The tablets.
    Action("PqPlanStep", TABLET, E.pq_plan_step_enabled, E.pq_plan_step),
    Action("TabletRestart", TABLET, E.tablet_restart_enabled, E.tablet_restart, fault=True),
    Action("Split", DST, E.split_enabled, E.split, fault=True),
    Action("PqPropose", TABLET_TXN, E.pq_propose_enabled, E.pq_propose),
    Action("PqImmediate", TABLET_TXN, E.pq_immediate_enabled, E.pq_immediate),
    Action("Expire", TABLET_TXN, E.expire_enabled, E.expire),
    Action("PqCalc", TABLET_TXN, E.pq_calc_enabled, E.pq_calc),
    Action("PqExecute", TABLET_TXN, E.pq_execute_enabled, E.pq_execute),
    Action("PartitionApply", TABLET_TXN_PARTITION, E.partition_apply_enabled, E.partition_apply,
           emits=("PartitionCommit", "PartitionRollback")),
    Action("PqTxDone", TABLET_TXN, E.pq_tx_done_enabled, E.pq_tx_done),
    Action("PqDelete", TABLET_TXN, E.pq_delete_enabled, E.pq_delete),
    Action("PqResendReadSet", TABLET_TXN_PEER, E.pq_resend_read_set_enabled, E.pq_resend_read_set),
)
del E

ACTION: dict[str, Action] = {a.name: a for a in ACTIONS}
# The action behind each trace event.
BY_EVENT: dict[str, Action] = {ev: a for a in ACTIONS for ev in a.events}
EVENTS: tuple[str, ...] = tuple(ev for a in ACTIONS for ev in a.events)


def arguments(e: Engine, over: str, txns: Iterable[int] | None = None) -> list[Any]:
    """Every argument an action over ``over`` can take in ``e``, in the scheduler's order; the
    transactions are ``txns`` (default: those begun, the only ones with any state)."""
    k = e.k
    tx_list = list(e.started() if txns is None else txns)
    if over == WORKER:
        return list(k.workers)
    if over == RANGE:
        return [(w, b, x) for w in k.workers for b in range(0, k.msgs_per_src + 1)
                for x in range(b + 1, k.msgs_per_src + 2)]
    if over == WORKER_PARTITION:
        return [(w, p) for w in k.workers for p in k.src_parts]
    if over == WRITER:
        return [(w, g) for w in k.workers for g in k.writers]
    if over == PLAIN:
        return [(q, o) for q in k.plain_producers for o in k.app_offsets]
    if over == READ:
        return [(w, p, x) for w in k.workers for p in k.src_parts for x in range(1, k.msgs_per_src + 1)]
    if over == TXN:
        return tx_list
    if over == MESSAGE:
        return list(e.net)
    if over == TABLET:
        return list(k.tablets)
    if over == DST:
        return list(k.dst_parts)
    if over == TABLET_TXN:
        return [(t, tx) for t in k.tablets for tx in tx_list]
    if over == TABLET_TXN_PARTITION:
        return [(t, tx, p) for t in k.tablets for tx in tx_list for p in k.part_ids]
    if over == TABLET_TXN_PEER:
        return [(t, tx, q) for t in k.tablets for tx in tx_list for q in k.tablets]
    raise ValueError(f"unknown argument kind {over!r}")


def run(e: Engine, name: str, arg: Any = None) -> bool:
    """Take step ``name`` with ``arg`` if its guard holds; whether it did."""
    return ACTION[name].run(e, arg)
