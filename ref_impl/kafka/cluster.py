"""The reference cluster: the spec's variables (``state.ClusterState``) with every component's
actions (``client``, ``coordinator``, ``leader``, ``group``, ``network``).

Each action is a method ``action(*params, dry=False) -> bool``: it returns False when the spec's
guard does not hold, True when it does (with ``dry=True``, without acting), and otherwise performs
the step and emits its event.
"""

from __future__ import annotations

from .client import ClientActions
from .coordinator import CoordinatorActions
from .group import GroupActions
from .leader import LeaderActions
from .network import NetworkActions


class Cluster(ClientActions, CoordinatorActions, LeaderActions, GroupActions, NetworkActions):
    """One Kafka cluster: the state of ``ClusterState`` and the actions of every component."""
