"""Every action of the engine, in one table: the spec's ``Next`` (specs/cone/Cone.tla).

An ``Action`` names a spec action, what it ranges over, its guard and effect (the ``Engine``
methods ``co_begin_enabled`` and ``co_begin`` for ``CoBegin``) and whether it is a fault. The
scheduler (``sim``) lists the enabled steps from this table and ``replay`` finds each event's
action in it. The order of the table is the order in which the scheduler lists steps: the same
seed gives the same run only as long as it stays the same.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import attrs

from .constants import COORDS, QUORUMS
from .engine import Engine

# What an action ranges over.
CLIENT = "client"
TXN = "transaction"
CO_TXN_QUORUM = "(coordinator, transaction, quorum)"
CO_CLIENT_QUORUM = "(coordinator, client, quorum)"
CO_CLIENT = "(coordinator, client)"
CO_TXN_BATCH = "(coordinator, transaction, batch)"
CO_TXN = "(coordinator, transaction)"
BATCH = "batch"
LINK = "(coordinator, peer)"
CO = "coordinator"
CO_QUORUM = "(coordinator, quorum)"


@attrs.frozen
class Action:
    name: str  # the spec action and the trace event
    over: str
    guard: Callable[..., bool]
    effect: Callable[..., None]
    fault: bool = False

    def enabled(self, e: Engine, arg: tuple[Any, ...]) -> bool:
        return bool(self.guard(e, *arg))

    def apply(self, e: Engine, arg: tuple[Any, ...]) -> None:
        before = e.events
        self.effect(e, *arg)
        assert e.events == before + 1, f"{self.name} emitted {e.events - before} events"


ACTIONS: tuple[Action, ...] = (
    Action("ClientBegin", CLIENT, Engine.client_begin_enabled, Engine.client_begin),
    Action("ClientCommit", CLIENT, Engine.client_commit_enabled, Engine.client_commit),
    Action("ClientRollback", CLIENT, Engine.client_rollback_enabled, Engine.client_rollback),
    Action("ClientTimeout", CLIENT, Engine.client_timeout_enabled, Engine.client_timeout),
    Action("CoBegin", CO_TXN_QUORUM, Engine.co_begin_enabled, Engine.co_begin),
    Action("CoUnbornExpire", TXN, Engine.co_unborn_expire_enabled, Engine.co_unborn_expire),
    Action("CoRead", CO_CLIENT_QUORUM, Engine.co_read_enabled, Engine.co_read),
    Action("CoWrite", CO_CLIENT, Engine.co_write_enabled, Engine.co_write),
    Action("CoCommit", CO_CLIENT, Engine.co_commit_enabled, Engine.co_commit),
    Action("CoCommitDone", CO_TXN_BATCH, Engine.co_commit_done_enabled, Engine.co_commit_done),
    Action("CoIndexWrite", CO_TXN, Engine.co_index_write_enabled, Engine.co_index_write),
    Action("CoTxTimeout", CO_TXN, Engine.co_tx_timeout_enabled, Engine.co_tx_timeout),
    Action("ApplyMutation", BATCH, Engine.apply_mutation_enabled, Engine.apply_mutation),
    Action("DropMutation", BATCH, Engine.drop_mutation_enabled, Engine.drop_mutation, fault=True),
    Action("BatchlogReplay", BATCH, Engine.batchlog_replay_enabled, Engine.batchlog_replay),
    Action("Cut", LINK, Engine.cut_enabled, Engine.cut_link, fault=True),
    Action("Heal", LINK, Engine.heal_enabled, Engine.heal),
    Action("CoSelfFence", CO, Engine.co_self_fence_enabled, Engine.co_self_fence),
    Action("DeclareDead", CO, Engine.declare_dead_enabled, Engine.declare_dead),
    Action("CoActivate", CO_QUORUM, Engine.co_activate_enabled, Engine.co_activate),
    Action("Crash", CO, Engine.crash_enabled, Engine.crash, fault=True),
    Action("Pause", CO, Engine.pause_enabled, Engine.pause, fault=True),
    Action("Resume", CO, Engine.resume_enabled, Engine.resume),
    Action("DcFail", CO, Engine.dc_fail_enabled, Engine.dc_fail, fault=True),
)
BY_EVENT = {a.name: a for a in ACTIONS}
EVENTS = tuple(a.name for a in ACTIONS)


def arguments(e: Engine, over: str) -> Iterator[tuple[Any, ...]]:
    """Every argument an action over ``over`` may take in the engine's current state."""
    clients = e.k.clients
    txns = [(c, a) for c in clients for a in range(1, e.k.max_attempts + 1)]
    batches = range(1, len(e.batches) + 1)
    if over == CLIENT:
        yield from ((c,) for c in clients)
    elif over == TXN:
        yield from ((t,) for t in txns)
    elif over == CO_TXN_QUORUM:
        yield from ((x, t, q) for x in COORDS for t in txns for q in QUORUMS)
    elif over == CO_CLIENT_QUORUM:
        yield from ((x, c, q) for x in COORDS for c in clients for q in QUORUMS)
    elif over == CO_CLIENT:
        yield from ((x, c) for x in COORDS for c in clients)
    elif over == CO_TXN_BATCH:
        yield from ((x, t, i) for x in COORDS for t in txns for i in batches)
    elif over == CO_TXN:
        yield from ((x, t) for x in COORDS for t in txns)
    elif over == BATCH:
        yield from ((i,) for i in batches)
    elif over == LINK:
        yield from ((x, y) for x in COORDS for y in COORDS if x != y)
    elif over == CO:
        yield from ((x,) for x in COORDS)
    elif over == CO_QUORUM:
        yield from ((x, q) for x in COORDS for q in QUORUMS)
    else:
        raise ValueError(over)


def enabled_steps(e: Engine) -> list[tuple[Action, tuple[Any, ...]]]:
    return [(a, arg) for a in ACTIONS for arg in arguments(e, a.over) if a.enabled(e, arg)]
