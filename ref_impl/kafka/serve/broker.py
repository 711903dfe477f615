"""The serving broker: real clients' Kafka requests, served by the reference broker as open clients.

``ServeBroker.handle(request)`` takes one decoded request (``wire.Request``) and returns its
answer (a kafka-python response object), or None when none is due (Produce with acks=0). One
concern a module: ``translate.py`` (the state and the translation to the spec's terms, how it is
done is said there), ``requests_cluster.py``, ``requests_txn.py``, ``requests_data.py`` and
``requests_groups.py`` (the handlers, ``on_<request>``), ``groups.py`` (consumer groups, outside the
spec), ``fault_hooks.py`` (what the session's fault switches do).
"""

from __future__ import annotations

from .fault_hooks import FaultHooks
from .requests_cluster import ClusterRequests
from .requests_data import DataRequests
from .requests_groups import GroupRequests
from .requests_txn import TxnRequests
from .translate import ServeError

__all__ = ["ServeBroker", "ServeError"]


class ServeBroker(ClusterRequests, TxnRequests, DataRequests, GroupRequests, FaultHooks):
    """The reference broker behind Kafka's wire protocol: ``handle`` finds ``on_<request>``."""
