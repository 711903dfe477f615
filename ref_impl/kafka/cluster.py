"""The reference cluster: the spec's variables (``state.ClusterState``) with every component's
actions (``client``, ``coordinator``, ``leader``, ``group``, ``network``).

Each spec action is two methods: its guard ``action_enabled(arg) -> bool`` (reads the state,
changes nothing) and its effect ``action(arg)`` (to be called only when the guard holds; changes
the state and emits the action's one trace event). ``actions.ACTIONS`` lists them all, with the
kind of argument each ranges over; the simulator, ``replay`` and the client library take steps
through that table.
"""

from __future__ import annotations

from .client import ClientActions
from .coordinator import CoordinatorActions
from .group import GroupActions
from .leader import LeaderActions
from .network import NetworkActions


class Cluster(ClientActions, CoordinatorActions, LeaderActions, GroupActions, NetworkActions):
    """One Kafka cluster: the state of ``ClusterState`` and the actions of every component."""
