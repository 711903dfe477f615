"""Every action of the reference broker, in one table: the spec's ``Next`` (KafkaTxn) and the
consumers' steps of ``NextWithConsumers`` (Fetch, OffsetCommit).

An ``Action`` is a spec action: its name (also the trace event it emits), what it ranges over,
its guard and its effect (the ``Cluster`` methods ``tc_end_txn_enabled`` and ``tc_end_txn`` for
``TcEndTxn``), which messages it takes, who takes the step, and how the simulator weighs it.
The simulator (``ref_impl.kafka.sim.scheduler``) lists the enabled steps from this table, ``replay``
finds each event's action in it, and the client library (``api``) takes its steps through it.

The order of the table is the order in which the simulator lists a message's, a client's and a
transactional.id's steps: the same seed gives the same run only as long as it stays the same.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import attrs

from .cluster import Cluster
from .messages import MESSAGE_TYPES, RESPONSE_TYPES, Msg
from .state import OFFSETS_PART, Inst

# What an action ranges over (its argument).
MESSAGE = "message"  # a message in flight
INSTANCE = "instance"  # a client instance: (transactional.id, n)
TXN_ID = "transactional.id"
TXN_PARTITION = "(transactional.id, partition)"  # the offsets partition or a data partition
PARTITION = "partition"  # a data partition
NONE = "none"  # no argument
REQUEST = "request"  # a request an open client sent (the server builds it)
FETCH_ARGS = "(partition, isolation, from)"
COMMIT_ARGS = "(group, partition, offset)"
TUPLE_ARGS = (TXN_PARTITION, FETCH_ARGS, COMMIT_ARGS)

# Who takes the step: the simulator picks it among the enabled steps, or the client library
# takes it when an application calls it (init_transactions is StartInstance, poll is Fetch, ...).
SCHEDULER = "scheduler"
APPLICATION = "application"

# How the simulator weighs an enabled step: faults and late copies less often than normal steps.
NORMAL, LATE, FAULT = 10, 2, 1

# Which partition a message-driven action takes its messages for.
ANY_PARTITION, OFFSETS, DATA = "", "offsets partition", "data partition"


def never(c: Cluster, arg: Any) -> bool:
    return False


def always(c: Cluster, arg: Any) -> bool:
    return True


def superseded(c: Cluster, m: Msg) -> bool:
    """An earlier copy of a request its client has since sent again: it tends to arrive late."""
    sender = c.cl.get((m.tid, m.inst))
    return sender is not None and sender.req.gtx == m.gtx and sender.req.type == m.type and sender.req.att > m.att


def copy_in_flight(c: Cluster, i: Inst) -> bool:
    """A retry while a copy of the request is still in flight: it arrives late or twice (a fault)."""
    return c.in_flight(c.cl[i].req)


@attrs.frozen
class Action:
    name: str  # the spec action, and the trace event it emits
    over: str  # what it ranges over: MESSAGE, INSTANCE, TXN_ID, ...
    guard: Callable[..., bool]  # Cluster.<action>_enabled: reads the state only
    effect: Callable[..., object]  # Cluster.<action>: only where the guard holds; emits one event
    takes: tuple[str, ...] = ()  # MESSAGE: the message types it takes
    on: str = ANY_PARTITION  # MESSAGE: the partition of the messages it takes
    by: str = SCHEDULER
    fault: Callable[[Cluster, Any], bool] = never  # is this step a fault?
    late: Callable[[Cluster, Any], bool] = never  # is it weighed as LATE?

    def _call(self, f: Callable[..., Any], c: Cluster, arg: Any) -> Any:
        if self.over == NONE:
            return f(c)
        if self.over in TUPLE_ARGS:
            return f(c, *arg)
        return f(c, arg)

    def enabled(self, c: Cluster, arg: Any) -> bool:
        return bool(self._call(self.guard, c, arg))

    def apply(self, c: Cluster, arg: Any) -> None:
        """The effect; the guard must hold."""
        before = c.events
        self._call(self.effect, c, arg)
        assert c.events == before + 1, f"{self.name} emitted {c.events - before} events"

    def run(self, c: Cluster, arg: Any) -> bool:
        """Take the step if the guard holds; whether it did."""
        if not self.enabled(c, arg):
            return False
        self.apply(c, arg)
        return True

    def takes_message(self, m: Msg) -> bool:
        if self.over != MESSAGE or m.type not in self.takes:
            return False
        return self.on == ANY_PARTITION or (m.part == OFFSETS_PART) == (self.on == OFFSETS)

    def weight(self, c: Cluster, arg: Any) -> int:
        return FAULT if self.fault(c, arg) else LATE if self.late(c, arg) else NORMAL


def _client(name: str, guard: Callable[..., bool], effect: Callable[..., None], **kw: Any) -> Action:
    return Action(name, INSTANCE, guard, effect, **kw)


def _msg(name: str, takes: tuple[str, ...], guard: Callable[..., bool], effect: Callable[..., None],
         **kw: Any) -> Action:
    return Action(name, MESSAGE, guard, effect, takes=takes, **kw)


C = Cluster
ACTIONS: tuple[Action, ...] = (
    # Clients. The simulator lists a client's steps in this order.
    _client("StartInstance", C.start_instance_enabled, C.start_instance, by=APPLICATION),
    _client("BeginTxn", C.begin_txn_enabled, C.begin_txn, by=APPLICATION),
    _client("SendRequest", C.send_request_enabled, C.send_request),
    _client("ReInit", C.re_init_enabled, C.re_init),
    _client("Retry", C.retry_enabled, C.retry, fault=copy_in_flight),
    _client("ProduceTimeout", C.produce_timeout_enabled, C.produce_timeout, fault=always),
    _client("Hang", C.hang_enabled, C.hang, fault=always),
    _client("Resume", C.resume_enabled, C.resume, fault=always),
    _client("JoinGroup", C.join_group_enabled, C.join_group, by=APPLICATION),
    _client("FetchOffset", C.fetch_offset_enabled, C.fetch_offset, by=APPLICATION),
    _client("InputDone", C.input_done_enabled, C.input_done, by=APPLICATION),
    # Open clients (txconform serve): the server takes these steps for a real client.
    Action("ClientSend", REQUEST, C.client_send_enabled, C.client_send, by=APPLICATION),
    # Messages. At most one of these, Drop aside, is enabled for a message; its loss comes last.
    _msg("ClientReceive", RESPONSE_TYPES, C.client_receive_enabled, C.client_receive),
    _msg("ClientTake", RESPONSE_TYPES, C.client_take_enabled, C.client_take, by=APPLICATION),
    _msg("DiscardStale", RESPONSE_TYPES, C.discard_stale_enabled, C.discard_stale),
    _msg("TcInitProducerId", ("InitProducerId",), C.tc_init_producer_id_enabled, C.tc_init_producer_id,
         late=superseded),
    _msg("TcAddPartitionsToTxn", ("AddPartitionsToTxn",), C.tc_add_partitions_to_txn_enabled,
         C.tc_add_partitions_to_txn, late=superseded),
    _msg("TcAddOffsetsToTxn", ("AddOffsetsToTxn",), C.tc_add_offsets_to_txn_enabled, C.tc_add_offsets_to_txn,
         late=superseded),
    _msg("TcVerify", ("Verify",), C.tc_verify_enabled, C.tc_verify),
    _msg("TcEndTxn", ("EndTxn",), C.tc_end_txn_enabled, C.tc_end_txn, late=superseded),
    _msg("TcMarkerAck", ("WriteTxnMarkersResp",), C.tc_marker_ack_enabled, C.tc_marker_ack),
    _msg("GcOffsetFetch", ("OffsetFetch",), C.gc_offset_fetch_enabled, C.gc_offset_fetch, late=superseded),
    _msg("GcTxnOffsetCommit", ("TxnOffsetCommit",), C.gc_txn_offset_commit_enabled, C.gc_txn_offset_commit,
         late=superseded),
    _msg("GcVerified", ("VerifyResp",), C.gc_verified_enabled, C.gc_verified, on=OFFSETS),
    _msg("GcMarker", ("WriteTxnMarkers",), C.gc_marker_enabled, C.gc_marker, on=OFFSETS),
    _msg("LeaderProduce", ("Produce",), C.leader_produce_enabled, C.leader_produce, late=superseded),
    _msg("LeaderVerified", ("VerifyResp",), C.leader_verified_enabled, C.leader_verified, on=DATA),
    _msg("LeaderDiscardVerify", ("VerifyResp",), C.leader_discard_verify_enabled, C.leader_discard_verify, on=DATA),
    _msg("LeaderMarker", ("WriteTxnMarkers",), C.leader_marker_enabled, C.leader_marker, on=DATA),
    _msg("Drop", MESSAGE_TYPES, C.drop_enabled, C.drop, fault=always),
    # The coordinator, per transactional.id.
    Action("TcAppend", TXN_ID, C.tc_append_enabled, C.tc_append),
    Action("TcAppendFail", TXN_ID, C.tc_append_fail_enabled, C.tc_append_fail, fault=always),
    Action("TcComplete", TXN_ID, C.tc_complete_enabled, C.tc_complete),
    Action("TcTimeoutAbort", TXN_ID, C.tc_timeout_abort_enabled, C.tc_timeout_abort, fault=always),
    Action("TcResendMarker", TXN_PARTITION, C.tc_resend_marker_enabled, C.tc_resend_marker),
    # Partition leaders and the coordinator as a whole.
    Action("LeaderVerifyLost", PARTITION, C.leader_verify_lost_enabled, C.leader_verify_lost),
    Action("GcVerifyLost", NONE, C.gc_verify_lost_enabled, C.gc_verify_lost),
    Action("Failover", NONE, C.failover_enabled, C.failover, fault=always),
    Action("LeaderRestart", PARTITION, C.leader_restart_enabled, C.leader_restart, fault=always),
    Action("LeaderExpireProducer", TXN_PARTITION, C.leader_expire_producer_enabled, C.leader_expire_producer, fault=always),
    Action("FollowerLag", PARTITION, C.follower_lag_enabled, C.follower_lag, fault=always),
    Action("UncleanElection", PARTITION, C.unclean_election_enabled, C.unclean_election, fault=always),
    # Consumers (NextWithConsumers).
    Action("Fetch", FETCH_ARGS, C.fetch_enabled, C.fetch, by=APPLICATION),
    Action("OffsetCommit", COMMIT_ARGS, C.offset_commit_enabled, C.offset_commit, by=APPLICATION),
)
del C

ACTION: dict[str, Action] = {a.name: a for a in ACTIONS}


def arguments(c: Cluster, over: str, txn_id: str | None = None) -> list[Any]:
    """Every argument an action over ``over`` can take in ``c``, in the simulator's order; with
    ``txn_id``, those of that transactional.id."""
    txn_ids = c.k.txn_ids if txn_id is None else (txn_id,)
    if over == MESSAGE:
        return list(c.net)
    if over == INSTANCE:
        return list(c.instances)
    if over == TXN_ID:
        return list(txn_ids)
    if over == TXN_PARTITION:
        return [(t, p) for t in txn_ids for p in [OFFSETS_PART, *c.parts]]
    if over == PARTITION:
        return list(c.parts)
    if over == NONE:
        return [None]
    raise ValueError(f"the arguments of {over} come from the caller")


def run(c: Cluster, name: str, arg: Any = None) -> bool:
    """Take step ``name`` with ``arg`` if its guard holds; whether it did."""
    return ACTION[name].run(c, arg)
